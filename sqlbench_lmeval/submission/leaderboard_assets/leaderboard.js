// sqlbench-lmeval leaderboard: plain JavaScript, no libraries, no network.
// Every text from the data (model names, task names, verdicts) goes into the page through
// textContent or setAttribute, never innerHTML, so nothing a run holds can become markup.
"use strict";

(function () {
  const DATA = JSON.parse(document.getElementById("leaderboard-data").textContent);
  // Forest plots per board index: "" the whole task, else a category; data: URIs (no fetch).
  const PLOTS = JSON.parse(document.getElementById("leaderboard-plots").textContent);
  const RANKED = ["verified", "verified with findings"];
  const state = { category: "", search: "", sort: {} }; // sort: task index -> [key, dir]

  const el = window.sqlbenchElement; // dom.js: every text goes in as textContent

  function number(value, digits) {
    return value === null || value === undefined ? "–" : value.toFixed(digits === undefined ? 3 : digits);
  }

  // EX of a model under the category filter: the whole task, or one category of it.
  function ex(model) {
    if (!state.category) return { mean: model.ex, low: model.ex_low, high: model.ex_high };
    const c = model.by_category[state.category];
    return c ? { mean: c.ex, low: c.ex_low, high: c.ex_high } : { mean: null, low: null, high: null };
  }

  // Rank under the category filter: the place among the ranked models on that category; its
  // interval and group letters are the whole task's, so a category shows none.
  function rank(model) {
    if (!state.category) return model.rank;
    const c = model.by_category[state.category];
    return c && c.rank !== undefined ? c.rank : null;
  }

  // A cost figure nobody can check (the server's usage, latency): leaderboard_cost.py's MARK.
  const MARK = "\u2020";
  const COST_COLUMNS = ["median_tokens", "total_tokens", "median_latency_s"];

  function tokens(model, value) {
    if (value === null || value === undefined) return "–";
    return Math.round(value).toLocaleString("en-US") + (model.tokens_unverifiable ? " " + MARK : "");
  }

  const COLUMNS = [
    ["rank", "Rank", (m) => rank(m), (m) => (rank(m) === null ? "–" : String(rank(m)))],
    ["rank_interval", "Rank 95%", (m) => (state.category ? null : m.rank_low), (m) => (m.rank === null || state.category ? "–" : m.rank_low + "–" + m.rank_high)],
    ["groups", "Group", (m) => m.groups, (m) => (state.category ? "–" : m.groups || "–")],
    ["name", "Model", (m) => m.name, null],
    ["ex", "EX [95% CI]", (m) => ex(m).mean, (m) => {
      const v = ex(m);
      return v.mean === null ? "–" : number(v.mean) + " [" + number(v.low) + ", " + number(v.high) + "]";
    }],
    ["ex_on_healthy_gold", "EX healthy gold", (m) => m.ex_on_healthy_gold, (m) => number(m.ex_on_healthy_gold)],
    ["structural_similarity", "Struct. sim.", (m) => m.structural_similarity, (m) => number(m.structural_similarity)],
    ["ves", "VES", (m) => m.ves, (m) => number(m.ves)],
    ["categories"], // one column per category of the board (categoryColumns)
    ["ex_reads_data", "EX reads data", (m) => m.ex_reads_data, (m) => number(m.ex_reads_data)],
    ["truncation_rate", "Truncated", (m) => m.truncation_rate, (m) => (m.truncation_rate === null ? "–" : (100 * m.truncation_rate).toFixed(1) + "%")],
    // Metered runs only (board.cost): tokens and latency; "†" marks what verify cannot check.
    ["median_tokens", "Tokens per answer (median)", (m) => m.median_tokens, (m) => tokens(m, m.median_tokens)],
    ["total_tokens", "Tokens (total)", (m) => m.total_tokens, (m) => tokens(m, m.total_tokens)],
    ["median_latency_s", "Latency (median, s)", (m) => m.median_latency_s, (m) => (m.median_latency_s === null || m.median_latency_s === undefined ? "–" : m.median_latency_s.toFixed(2) + " " + MARK)],
    ["verdict", "Verdict", (m) => m.verdict, null],
    ["findings", "Findings", (m) => m.findings, null],
  ];

  // EX on each category, with the model's rank among the ranked models there ("0.500 #2").
  function categoryColumns(board) {
    return board.categories.map((c) => [
      "category:" + c,
      "EX " + c,
      (m) => (m.by_category[c] ? m.by_category[c].ex : null),
      (m) => {
        const v = m.by_category[c];
        if (!v || v.ex === null) return "–";
        return number(v.ex) + (v.rank === null || v.rank === undefined ? "" : " #" + v.rank);
      },
    ]);
  }

  function compare(a, b) {
    if (a === b) return 0;
    if (a === null || a === undefined) return 1; // missing values last
    if (b === null || b === undefined) return -1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b));
  }

  // TPC-DS boards show structural similarity (the paper's metric) beside EX; others do not.
  function columnsOf(board) {
    return COLUMNS.filter((c) => (c[0] !== "structural_similarity" || board.similarity) && (!COST_COLUMNS.includes(c[0]) || board.cost)).flatMap((c) =>
      c[0] === "categories" ? categoryColumns(board) : [c]
    );
  }

  // The findings of a run, each kind in words with its item count; the full message on hover.
  function findingsCell(model, keep) {
    const cell = el("td", { "data-col": "findings" });
    const shown = model.findings_summary.filter(keep);
    if (!shown.length) cell.append(el("span", { className: "muted", text: "none" }));
    for (const finding of shown) {
      cell.append(el("div", { className: "finding severity-" + finding.severity, "data-code": finding.code, title: finding.message, text: finding.text }));
    }
    return cell;
  }

  // How many runs of each verdict: the ranked two, then the two listed apart and the verified
  // runs set apart (gold copies, partial runs, shared outputs, other decoding settings).
  function verdictCounts(board) {
    const line = el("p", { className: "verdicts" });
    const apartCount = (verdict) => board.not_ranked.filter((m) => m.verdict === verdict).length;
    line.append(el("strong", { text: "Ranked: " }));
    RANKED.forEach((verdict, i) => {
      const count = board.verdicts[verdict].length - apartCount(verdict);
      line.append(el("span", { "data-verdict": verdict, className: "verdict-" + verdict.replace(/ /g, "-"), text: count + " " + verdict }));
      line.append(i + 1 < RANKED.length ? ", " : ". ");
    });
    const setApart = (board.set_apart || []).length;
    const others = Object.keys(board.verdicts).filter((v) => !RANKED.includes(v));
    line.append(el("strong", { text: "Not ranked (listed apart): " }));
    others.forEach((verdict, i) => {
      line.append(el("span", { "data-verdict": verdict, className: "verdict-" + verdict.replace(/ /g, "-"), text: board.verdicts[verdict].length + " " + verdict }));
      line.append(i + 1 < others.length || setApart ? ", " : ". ");
    });
    if (setApart) {
      line.append(el("span", { "data-verdict": "set apart", text: setApart + " verified but set apart (gold copies, partial runs, shared outputs, other decoding settings)" }));
      line.append(". ");
    }
    return line;
  }

  // The forest plot of the ranked models: on the whole task, or on the chosen category.
  function forestPlot(board, index) {
    const plots = PLOTS[String(index)];
    const source = plots && plots[state.category || ""];
    if (!source) return null;
    const what = state.category ? "EX on " + state.category : "EX";
    return el("figure", { className: "forest" },
      el("img", { src: source, alt: "forest plot of " + what + " with 95% intervals, ranked models of " + board.task }),
    );
  }

  function renderBoard(board, index) {
    const section = el("section", { className: "board", "data-task": board.task });
    const title = board.task + (board.dataset_version ? " (" + board.dataset_version + ")" : "");
    // On a board of partial runs (--limit), how many items the ranked runs answered.
    const partial = board.models.length && board.ranked_items < board.n_items ? "; the ranked runs answered " + board.ranked_items + " of them, the same ones (partial runs, ranked only among themselves; EX counts the other items as 0)" : "";
    section.append(el("h2", { text: title }), el("p", { className: "muted", text: board.n_items + " items" + partial + (board.gold_note ? ". Scored with the " + board.gold_note + "." : "") }));
    section.append(verdictCounts(board));
    const plot = forestPlot(board, index);
    if (plot) section.append(plot);
    const table = el("table", { className: "board-table", "data-board": index });
    const head = el("tr");
    const [sortKey, sortDir] = state.sort[index] || ["rank", 1];
    const columns = columnsOf(board);
    for (const [key, label] of columns) {
      const th = el("th", { "data-sort": key, text: key === "ex" && state.category ? "EX " + state.category + " [95% CI]" : label });
      if (key === sortKey) th.className = sortDir > 0 ? "sorted-asc" : "sorted-desc";
      th.addEventListener("click", () => {
        state.sort[index] = [key, key === sortKey ? -sortDir : key === "name" || key === "rank" ? 1 : -1];
        render();
      });
      head.append(th);
    }
    const body = el("tbody");
    const getter = (columns.find((c) => c[0] === sortKey) || columns[0])[2];
    const models = board.models
      .filter((m) => !state.search || m.name.toLowerCase().includes(state.search))
      .slice()
      .sort((a, b) => sortDir * compare(getter(a), getter(b)) || compare(a.name, b.name));
    for (const model of models) {
      const tr = el("tr", { "data-model": model.name, className: model.verdict === "rejected" ? "rejected" : "" });
      for (const [key, , , show] of columns) {
        if (key === "name") {
          const link = el("a", { href: model.report, text: model.name });
          tr.append(el("td", { "data-col": key }, link));
        } else if (key === "verdict") {
          tr.append(el("td", { "data-col": key, className: "verdict-" + model.verdict.replace(/ /g, "-"), text: model.verdict }));
        } else if (key === "findings") {
          tr.append(findingsCell(model, () => true));
        } else {
          tr.append(el("td", { "data-col": key, className: "num", text: show(model) }));
        }
      }
      body.append(tr);
    }
    table.append(el("thead", {}, head), body);
    section.append(table);
    section.append(...renderApart(board));
    if (board.cost) section.append(el("p", { className: "cost-legend muted", text: DATA.cost_legend }));
    return section;
  }

  // Rejected and unattested runs: listed apart, with the findings that keep them off the ranking.
  function renderApart(board) {
    const apart = (board.not_ranked || []).filter((m) => !state.search || m.name.toLowerCase().includes(state.search));
    if (!apart.length) return [];
    const table = el("table", { className: "apart-table" });
    const head = el("tr");
    const cost = board.cost ? COLUMNS.filter((c) => COST_COLUMNS.includes(c[0])) : [];
    for (const label of ["Model", "Verdict", "EX (re-scored, not ranked)", "EX healthy gold", "Gold copies", "Shared outputs", ...cost.map((c) => c[1]), "Reasons", "Other findings"]) head.append(el("th", { text: label }));
    const body = el("tbody");
    for (const model of apart) {
      const tr = el("tr", { "data-model": model.name });
      tr.append(el("td", { "data-col": "name" }, el("a", { href: model.report, text: model.name })));
      tr.append(el("td", { "data-col": "verdict", className: "verdict-" + model.verdict.replace(/ /g, "-"), text: model.verdict }));
      const v = ex(model);
      tr.append(el("td", { "data-col": "ex", className: "num", text: v.mean === null ? "–" : number(v.mean) }));
      tr.append(el("td", { "data-col": "ex_on_healthy_gold", className: "num", text: number(model.ex_on_healthy_gold) }));
      const share = (value) => (value === null || value === undefined ? "–" : Math.round(100 * value) + "%");
      tr.append(el("td", { "data-col": "gold_copy_share", className: "num", text: share(model.gold_copy_share) }));
      tr.append(el("td", { "data-col": "shared_output_share", className: "num", text: share(model.shared_output_share) }));
      for (const [key, , , show] of cost) tr.append(el("td", { "data-col": key, className: "num", text: show(model) }));
      const reasons = el("td", { "data-col": "reasons" });
      for (const reason of model.reasons) reasons.append(el("div", { text: reason }));
      tr.append(reasons);
      // Findings that do not keep it off the ranking (the reasons above do).
      tr.append(findingsCell(model, (f) => f.severity !== "reject" && f.severity !== "unattested"));
      body.append(tr);
    }
    table.append(el("thead", {}, head), body);
    return [el("h3", { text: "Not ranked (rejected, unattested, gold copies, partial runs, shared outputs, other decoding settings)" }), table];
  }

  const app = document.getElementById("app");
  const boards = el("div", { id: "boards" });

  function render() {
    boards.textContent = "";
    DATA.tasks.forEach((board, index) => {
      if (state.category && !board.categories.includes(state.category)) return;
      boards.append(renderBoard(board, index));
    });
    window.leaderboardReady = true; // read by the browser test
  }

  app.textContent = "";
  app.append(el("h1", { text: DATA.title }));
  app.append(
    el("p", {
      className: "method",
      text:
        "Numbers are re-scored from each run's raw outputs over every item of the task (missing items score 0). " +
        "EX with its " + Math.round(DATA.level * 100) + "% bootstrap interval over items; rank interval from a paired bootstrap; " +
        "models sharing a group letter are not significantly different (exact McNemar on EX, Holm-adjusted, alpha " + DATA.alpha + "). " +
        "Only verified runs (with or without findings) are ranked; rejected and unattested runs are listed apart with their reasons, " +
        "and so are runs whose answers are mostly gold, partial runs (a run is ranked only beside runs that answered the same items, all the task's when a run did), " +
        "runs whose answers are shared with another run, and runs made on other decoding settings than the task's. " +
        "Verified means the outputs score as claimed under the benchmark's protocol; nothing attests that a model wrote them. " +
        "The forest plot shows each ranked model's EX (point) and its 95% interval (line). " +
        "EX on a category is followed by the model's rank among the ranked models there (#n). " +
        "Findings: each kind the verification found, with the number of items it concerns (hover for the full text). " +
        "Each model links to its verification report.",
    })
  );
  const filters = el("div", { id: "filters" });
  const categories = Array.from(new Set(DATA.tasks.flatMap((b) => b.categories))).sort();
  const select = el("select", { id: "category" });
  select.append(el("option", { value: "", text: "all" }));
  for (const c of categories) select.append(el("option", { value: c, text: c }));
  select.addEventListener("change", () => {
    state.category = select.value;
    render();
  });
  filters.append(el("label", {}, "Category ", select));
  const search = el("input", { id: "search", type: "search", placeholder: "model name" });
  search.addEventListener("input", () => {
    state.search = search.value.trim().toLowerCase();
    render();
  });
  filters.append(el("label", {}, "Model ", search));
  app.append(filters, boards);
  render();
})();
