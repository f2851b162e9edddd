// sqlbench-lmeval leaderboard: plain JavaScript, no libraries, no network.
// Every text from the data (model names, task names, verdicts) goes into the page through
// textContent or setAttribute, never innerHTML, so nothing a run holds can become markup.
"use strict";

(function () {
  const DATA = JSON.parse(document.getElementById("leaderboard-data").textContent);
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

  const COLUMNS = [
    ["rank", "Rank", (m) => rank(m), (m) => (rank(m) === null ? "–" : String(rank(m)))],
    ["rank_interval", "Rank 95%", (m) => (state.category ? null : m.rank_low), (m) => (m.rank === null || state.category ? "–" : m.rank_low + "–" + m.rank_high)],
    ["groups", "Group", (m) => m.groups, (m) => (state.category ? "–" : m.groups || "–")],
    ["name", "Model", (m) => m.name, null],
    ["ex", "EX [95% CI]", (m) => ex(m).mean, (m) => {
      const v = ex(m);
      return v.mean === null ? "–" : number(v.mean) + " [" + number(v.low) + ", " + number(v.high) + "]";
    }],
    ["structural_similarity", "Struct. sim.", (m) => m.structural_similarity, (m) => number(m.structural_similarity)],
    ["ves", "VES", (m) => m.ves, (m) => number(m.ves)],
    ["ex_on_healthy_gold", "EX healthy gold", (m) => m.ex_on_healthy_gold, (m) => number(m.ex_on_healthy_gold)],
    ["ex_reads_data", "EX reads data", (m) => m.ex_reads_data, (m) => number(m.ex_reads_data)],
    ["truncation_rate", "Truncated", (m) => m.truncation_rate, (m) => (m.truncation_rate === null ? "–" : (100 * m.truncation_rate).toFixed(1) + "%")],
    ["verdict", "Verdict", (m) => m.verdict, null],
  ];

  function compare(a, b) {
    if (a === b) return 0;
    if (a === null || a === undefined) return 1; // missing values last
    if (b === null || b === undefined) return -1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b));
  }

  // TPC-DS boards show structural similarity (the paper's metric) beside EX; others do not.
  function columnsOf(board) {
    return COLUMNS.filter((c) => c[0] !== "structural_similarity" || board.similarity);
  }

  function renderBoard(board, index) {
    const section = el("section", { className: "board", "data-task": board.task });
    const title = board.task + (board.dataset_version ? " (" + board.dataset_version + ")" : "");
    section.append(el("h2", { text: title }), el("p", { className: "muted", text: board.n_items + " items" }));
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
          const cls = model.verdict === "rejected" ? "verdict-rejected" : model.verdict === "verified" ? "verdict-verified" : "";
          tr.append(el("td", { "data-col": key, className: cls, text: model.verdict }));
        } else {
          tr.append(el("td", { "data-col": key, className: "num", text: show(model) }));
        }
      }
      body.append(tr);
    }
    table.append(el("thead", {}, head), body);
    section.append(table);
    section.append(...renderApart(board));
    return section;
  }

  // Rejected and unattested runs: listed apart, with the findings that keep them off the ranking.
  function renderApart(board) {
    const apart = (board.not_ranked || []).filter((m) => !state.search || m.name.toLowerCase().includes(state.search));
    if (!apart.length) return [];
    const table = el("table", { className: "apart-table" });
    const head = el("tr");
    for (const label of ["Model", "Verdict", "EX (re-scored, not ranked)", "Reasons"]) head.append(el("th", { text: label }));
    const body = el("tbody");
    for (const model of apart) {
      const tr = el("tr", { "data-model": model.name });
      tr.append(el("td", { "data-col": "name" }, el("a", { href: model.report, text: model.name })));
      tr.append(el("td", { "data-col": "verdict", className: "verdict-" + model.verdict.replace(/ /g, "-"), text: model.verdict }));
      const v = ex(model);
      tr.append(el("td", { "data-col": "ex", className: "num", text: v.mean === null ? "–" : number(v.mean) }));
      const reasons = el("td", { "data-col": "reasons" });
      for (const reason of model.reasons) reasons.append(el("div", { text: reason }));
      tr.append(reasons);
      body.append(tr);
    }
    table.append(el("thead", {}, head), body);
    return [el("h3", { text: "Not ranked (rejected or unattested)" }), table];
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
        "Only verified runs are ranked; rejected and unattested runs are listed apart with their reasons. " +
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
