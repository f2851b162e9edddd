// sqlbench-lmeval explorer: plain JavaScript, no libraries, no network.
// Every text from the data goes into the page through textContent (never innerHTML), so a
// question, SQL or result cell is always shown as text, whatever it holds.
"use strict";

(function () {
  const DATA = JSON.parse(document.getElementById("explorer-data").textContent);
  const RUNS = DATA.runs;
  const ITEMS = DATA.items;
  const VERDICTS = DATA.verdicts;
  const PAGE = 200; // rows drawn at once; "Show all" draws the rest
  const MAX_DIFF_CELLS = 250000; // token LCS table size above which SQL is shown undiffed

  function shorten(text, length) {
    const line = text.replace(/\s+/g, " ").trim();
    return line.length > length ? line.slice(0, length - 1) + "…" : line;
  }

  // Lower-case text the free-text search looks in: question, gold SQL, every extracted SQL.
  for (const item of ITEMS) {
    const parts = [item.question || "", item.gold_sql || ""];
    for (const result of item.results) if (result) parts.push(result.extracted_sql || "");
    item.haystack = parts.join("\n").toLowerCase();
    item.flagText = (item.flags || []).join(", ");
    // Tie-aware EX: some run was right with another of gold's right answers; gold has more
    // than one right answer. "acceptable" stays a string: it reaches 1e140, and a JavaScript
    // number would round it, so it is only ever compared with "1" as text.
    item.questionShort = shorten(item.question || "", 90);
    const results = item.results.filter(Boolean);
    item.tieEquivalent = results.some((result) => result.reason === "tie_equivalent");
    item.tied = results.some((result) => typeof result.acceptable === "string" && result.acceptable !== "1");
    // Data dependence (docs/scoring.md): how each run's answer was judged, and whether some
    // run's answer was flagged as not reading the data.
    item.dataDependence = results.map((result) => result.data_dependence).filter(Boolean);
    item.readsNoData = results.some((result) => result.reads_no_table);
    // Runs without an answer to this item (another task, or a --limit run): the list shows
    // the items every run answered first, where the runs can be compared.
    item.unanswered = item.results.length - results.length;
  }
  // Each data-dependence value's label and sentence (explorer.py's data_dependence_words),
  // and the values some answer has (the filter offers those).
  const DATA_WORDS = DATA.data_dependence_words || {};
  const DATA_VALUES = distinct(ITEMS.flatMap((item) => item.dataDependence));
  function dataWords(value) {
    // A value this page has no words for (a newer scorer's) is shown as it is.
    return DATA_WORDS[value] || { label: value, text: "Data dependence: " + value };
  }
  // Columns shown only when some item has something for them (TPC-DS has no categories,
  // LogicCat no structural similarity).
  const HAS_CATEGORY = ITEMS.some((item) => item.category);
  // A similarity column for each run that has a similarity (a TPC-DS run beside LogicCat runs
  // gets one, they do not).
  const SIMILAR_RUNS = RUNS.map((name, run) =>
    ITEMS.some((item) => item.results[run] && typeof item.results[run].structural_similarity === "number")
  );
  const TIE_FILTERS = {
    tie_equivalent: (item) => item.tieEquivalent,
    tied: (item) => item.tied,
  };

  const state = {
    search: "",
    category: "",
    goldStatus: "",
    flag: "",
    ties: "",
    data: "",
    verdicts: RUNS.map(() => ""),
    pairA: "",
    pairB: "",
    sortKey: "answered", // items every run answered first, then by item (no column's arrow)
    sortDir: 1,
    shown: PAGE,
    selected: null,
  };

  // --- small DOM helpers ---------------------------------------------------------------------

  const el = window.sqlbenchElement; // dom.js: every text goes in as textContent

  function select(id, label, options, onChange) {
    const node = el("select", { id: id });
    for (const [value, text] of options) node.append(el("option", { value: value, text: text }));
    node.addEventListener("change", () => onChange(node.value));
    return el("label", {}, label + " ", node);
  }

  function distinct(values) {
    return Array.from(new Set(values)).sort();
  }

  function pre(text, className) {
    return el("pre", { className: className, text: text });
  }

  // --- filtering and sorting -----------------------------------------------------------------

  function matches(item) {
    if (state.category && item.category !== state.category) return false;
    if (state.goldStatus && item.gold_status !== state.goldStatus) return false;
    if (state.flag && !(item.flags || []).includes(state.flag)) return false;
    if (state.ties && !TIE_FILTERS[state.ties](item)) return false;
    if (state.data === "flagged" ? !item.readsNoData : state.data && !item.dataDependence.includes(state.data)) {
      return false;
    }
    for (let run = 0; run < RUNS.length; run++) {
      const wanted = state.verdicts[run];
      if (!wanted) continue;
      const result = item.results[run];
      if (wanted === "absent" ? result : !result || result.verdict !== wanted) return false;
    }
    if (state.pairA !== "" && state.pairB !== "" && state.pairA !== state.pairB) {
      const a = item.results[Number(state.pairA)];
      const b = item.results[Number(state.pairB)];
      if (!a || !b || a.verdict !== "correct" || b.verdict === "correct") return false;
    }
    if (state.search && !item.haystack.includes(state.search)) return false;
    return true;
  }

  function sortValue(item, key) {
    if (key.startsWith("sim")) {
      const result = item.results[Number(key.slice(3))];
      const value = result ? result.structural_similarity : null;
      return typeof value === "number" ? value : -1; // no similarity sorts first
    }
    if (key.startsWith("run")) {
      const result = item.results[Number(key.slice(3))];
      return result ? result.label : "~"; // absent results sort last
    }
    if (key === "key") return [item.task, item.id];
    if (key === "answered") return [item.unanswered, item.task, item.id];
    if (key === "flags") return item.flagText;
    return item[key] === undefined || item[key] === null ? "" : item[key];
  }

  function compareValues(a, b) {
    if (Array.isArray(a)) {
      for (let i = 0; i < a.length; i++) {
        const order = compareValues(a[i], b[i]);
        if (order) return order;
      }
      return 0;
    }
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b));
  }

  function filtered() {
    const rows = ITEMS.filter(matches);
    const key = state.sortKey;
    rows.sort((a, b) => state.sortDir * compareValues(sortValue(a, key), sortValue(b, key)));
    return rows;
  }

  // --- page ----------------------------------------------------------------------------------

  const app = document.getElementById("app");
  app.textContent = "";
  const summary = el("div", { id: "summary" });
  const counts = el("table", { id: "counts" });
  const table = el("table", { id: "items" });
  const tbody = el("tbody");
  const more = el("button", { id: "more", type: "button" });
  const detail = el("section", { id: "detail" });
  // The item column is there from the start, so opening the first item does not narrow the
  // list (which would re-wrap its rows and move the one just clicked).
  detail.append(el("p", { className: "muted placeholder", text: "Click an item to see it here." }));

  function buildFilters() {
    const filters = el("div", { id: "filters" });
    const search = el("input", { id: "search", type: "search", placeholder: "question or SQL" });
    search.addEventListener("input", () => {
      state.search = search.value.trim().toLowerCase();
      refresh();
    });
    filters.append(el("label", {}, "Search ", search));
    const any = [["", "any"]];
    const categories = distinct(ITEMS.map((item) => item.category).filter(Boolean));
    if (categories.length) {
      filters.append(
        select("category", "Category", any.concat(categories.map((c) => [c, c])), (value) => {
          state.category = value;
          refresh();
        })
      );
    }
    const statuses = distinct(ITEMS.map((item) => item.gold_status));
    filters.append(
      select("gold-status", "Gold", any.concat(statuses.map((s) => [s, s])), (value) => {
        state.goldStatus = value;
        refresh();
      })
    );
    const flags = distinct(ITEMS.flatMap((item) => item.flags || []));
    if (flags.length) {
      filters.append(
        select("flag", "Flag", any.concat(flags.map((f) => [f, f])), (value) => {
          state.flag = value;
          refresh();
        })
      );
    }
    if (ITEMS.some((item) => item.tied || item.tieEquivalent)) {
      const options = any.concat([
        ["tie_equivalent", "correct as a tie resolution (some run)"],
        ["tied", "gold has several right answers"],
      ]);
      filters.append(
        select("ties", "Ties", options, (value) => {
          state.ties = value;
          refresh();
        })
      );
    }
    if (DATA_VALUES.length || ITEMS.some((item) => item.readsNoData)) {
      const options = any.concat(
        [["flagged", "does not read the data (some run)"]],
        DATA_VALUES.map((value) => [value, dataWords(value).label + " (some run)"])
      );
      filters.append(
        select("data-dependence", "Data", options, (value) => {
          state.data = value;
          refresh();
        })
      );
    }
    const verdictOptions = any.concat(VERDICTS.map((v) => [v, v.replace(/_/g, " ")]));
    verdictOptions.push(["absent", "absent"]);
    RUNS.forEach((name, run) => {
      filters.append(
        select("verdict-" + run, name, verdictOptions, (value) => {
          state.verdicts[run] = value;
          refresh();
        })
      );
    });
    if (RUNS.length > 1) {
      const runOptions = [["", "—"]].concat(RUNS.map((name, run) => [String(run), name]));
      filters.append(
        select("pair-a", "Right:", runOptions, (value) => {
          state.pairA = value;
          refresh();
        }),
        select("pair-b", "and wrong:", runOptions, (value) => {
          state.pairB = value;
          refresh();
        })
      );
    }
    return filters;
  }

  function buildHeader() {
    // [sort key, title, column class]: the classes give the fixed columns their widths
    // (explorer.css); the runs' columns share what is left, so the list never scrolls sideways.
    // Gold's status (when not ok) and the flags are a line of the Item cell, always in view.
    const columns = [["key", "Item", "c-item"], ["question", "Question", "c-question"]];
    if (HAS_CATEGORY) columns.push(["category", "Category", "c-category"]);
    RUNS.forEach((name, run) => columns.push(["run" + run, name, "c-run"]));
    RUNS.forEach((name, run) => SIMILAR_RUNS[run] && columns.push(["sim" + run, "Sim. " + name, "c-sim"]));
    // The item column as wide as the longest key ("tpcds/99" needs less than "logiccat/4036"),
    // and a narrower question beside three or four runs: what is left goes to the runs.
    const keyLength = Math.max(4, ...ITEMS.map((item) => item.key.length));
    const widths = {
      "c-item": 0.62 * keyLength + 1 + "em",
      "c-question": RUNS.length > 2 ? "14%" : "18%",
    };
    const row = el("tr");
    for (const [key, title, css] of columns) {
      const full = css === "c-sim" ? "Structural similarity to gold: " + RUNS[Number(key.slice(3))] : title;
      const style = widths[css] ? "width: " + widths[css] : null;
      const th = el("th", { "data-sort": key, className: css, title: full, style: style, text: title });
      th.addEventListener("click", () => {
        state.sortDir = state.sortKey === key ? -state.sortDir : 1;
        state.sortKey = key;
        refresh();
      });
      row.append(th);
    }
    table.append(el("thead", {}, row), tbody);
  }

  function renderCounts(rows) {
    counts.textContent = "";
    const head = el("tr", {}, el("th", { text: "Run" }));
    for (const v of VERDICTS) head.append(el("th", { className: "num", text: v.replace(/_/g, " ") }));
    counts.append(el("thead", {}, head));
    const body = el("tbody");
    RUNS.forEach((name, run) => {
      const tally = Object.fromEntries(VERDICTS.map((v) => [v, 0]));
      for (const item of rows) {
        const result = item.results[run];
        if (result) tally[result.verdict] = (tally[result.verdict] || 0) + 1;
      }
      const tr = el("tr", { "data-run": run }, el("th", { text: name }));
      for (const v of VERDICTS) {
        tr.append(el("td", { className: "num", "data-verdict": v, text: tally[v] }));
      }
      body.append(tr);
    });
    counts.append(body);
  }

  function renderRows(rows) {
    tbody.textContent = "";
    const fragment = document.createDocumentFragment();
    for (const item of rows.slice(0, state.shown)) {
      const tr = el("tr", { "data-key": item.key });
      if (item.key === state.selected) tr.className = "selected";
      const facts = [item.suspect_gold && "suspect gold", item.gold_status !== "ok" && "gold " + item.gold_status, item.flagText].filter(Boolean).join(" · ");
      tr.append(
        el(
          "td",
          { className: "key" },
          el("div", { title: item.key, text: item.key }),
          facts ? el("div", { className: "item-facts", title: facts, text: facts }) : null
        )
      );
      tr.append(el("td", { className: "question", title: item.question || "", text: item.questionShort }));
      if (HAS_CATEGORY) tr.append(el("td", { className: "category", title: item.category, text: item.category }));
      for (const result of item.results) {
        const verdict = result ? result.verdict : "absent";
        // Each line of the cell is cut to the column's width; hovering shows it whole.
        const cell = el("td", { className: "verdict v-" + verdict });
        const label = result ? result.label : "—";
        cell.append(el("div", { className: "label", title: label, text: label }));
        if (result && result.verdict === "error" && result.error) {
          // The engine's own words, not only the class the label counts by.
          cell.append(el("div", { className: "error-message", title: result.error, text: shorten(result.error, 80) }));
        }
        if (result && result.reads_no_table) {
          // EX counts it; EX (reads data) and R-VES do not: the list says so beside the verdict.
          // Runs scored before data_dependence existed carry the flag alone (it named no table).
          const decided = result.data_dependence ? dataWords(result.data_dependence) : null;
          const text = "does not read the data" + (decided ? ": " + decided.label : "");
          cell.append(el("div", { className: "data-flag", title: decided ? decided.text : text, text: text }));
        }
        tr.append(cell);
      }
      for (const [run, result] of item.results.entries()) {
        if (SIMILAR_RUNS[run]) {
          const value = result ? result.structural_similarity : null;
          const text = typeof value === "number" ? value.toFixed(2) : "–";
          tr.append(el("td", { className: "num similarity-cell", text: text }));
        }
      }
      tr.addEventListener("click", () => openItem(item.key));
      fragment.append(tr);
    }
    tbody.append(fragment);
    more.hidden = rows.length <= state.shown;
    more.textContent = "Show all " + rows.length + " rows";
  }

  function refresh() {
    const started = performance.now();
    const rows = filtered();
    summary.textContent = rows.length + " of " + ITEMS.length + " items";
    renderCounts(rows);
    renderRows(rows);
    for (const th of table.querySelectorAll("th")) {
      th.classList.toggle("sorted-asc", th.dataset.sort === state.sortKey && state.sortDir > 0);
      th.classList.toggle("sorted-desc", th.dataset.sort === state.sortKey && state.sortDir < 0);
    }
    window.explorerLastRefreshMs = performance.now() - started; // read by the browser test
  }

  more.addEventListener("click", () => {
    state.shown = Infinity;
    refresh();
  });

  // --- item view -----------------------------------------------------------------------------

  function tokens(sql) {
    return sql.match(/\s+|[A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d+)?|'(?:[^']|'')*'|"[^"]*"|[\s\S]/g) || [];
  }

  // Marks the tokens of `sql` outside a longest common subsequence with `reference`
  // (whitespace ignored, case-insensitive): what this SQL has that the reference lacks.
  function diffSql(sql, reference) {
    const node = el("pre", { className: "sql" });
    const mine = tokens(sql);
    const words = mine.filter((t) => !/^\s+$/.test(t)).map((t) => t.toLowerCase());
    const other = tokens(reference || "").filter((t) => !/^\s+$/.test(t)).map((t) => t.toLowerCase());
    if (!reference || words.length * other.length > MAX_DIFF_CELLS) {
      node.textContent = sql;
      return node;
    }
    const n = words.length, m = other.length;
    const lcs = new Array(n + 1);
    for (let i = 0; i <= n; i++) lcs[i] = new Uint32Array(m + 1);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i][j] = words[i] === other[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    const common = new Array(n).fill(false);
    for (let i = 0, j = 0; i < n && j < m; ) {
      if (words[i] === other[j]) {
        common[i] = true;
        i++;
        j++;
      } else if (lcs[i + 1][j] >= lcs[i][j + 1]) i++;
      else j++;
    }
    let word = 0;
    for (const token of mine) {
      if (/^\s+$/.test(token)) {
        node.append(token);
        continue;
      }
      node.append(common[word] ? token : el("span", { className: "diff", text: token }));
      word++;
    }
    return node;
  }

  // Gold and the answer side by side, line against line: a longest common subsequence of
  // their lines (compared without case and surrounding blanks) pairs equal lines; between two
  // equal lines, gold's other lines face the answer's other lines and are marked as changed.
  function sqlLines(sql) {
    return (sql || "").replace(/\r\n?/g, "\n").split("\n");
  }

  function sideBySide(gold, answer) {
    const left = sqlLines(gold), right = sqlLines(answer);
    const a = left.map((line) => line.trim().toLowerCase());
    const b = right.map((line) => line.trim().toLowerCase());
    const n = a.length, m = b.length;
    const box = el("table", { className: "sql-diff" });
    box.append(el("thead", {}, el("tr", {}, el("th", { text: "Gold" }), el("th", { text: "Answer" }))));
    const body = el("tbody");
    box.append(body);
    if (n * m > MAX_DIFF_CELLS) {
      body.append(el("tr", {}, el("td", { text: gold }), el("td", { text: answer })));
      return box;
    }
    const lcs = new Array(n + 1);
    for (let i = 0; i <= n; i++) lcs[i] = new Uint32Array(m + 1);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    let goldOnly = [], answerOnly = [];
    function flush() {
      for (let k = 0; k < Math.max(goldOnly.length, answerOnly.length); k++) {
        const g = goldOnly[k], p = answerOnly[k];
        body.append(
          el(
            "tr",
            { className: "changed" },
            el("td", { className: g === undefined ? "empty" : "del", text: g === undefined ? "" : g }),
            el("td", { className: p === undefined ? "empty" : "ins", text: p === undefined ? "" : p })
          )
        );
      }
      goldOnly = [];
      answerOnly = [];
    }
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[i] === b[j]) {
        flush();
        body.append(el("tr", { className: "same" }, el("td", { text: left[i] }), el("td", { text: right[j] })));
        i++;
        j++;
      } else if (j >= m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1])) {
        goldOnly.push(left[i++]);
      } else {
        answerOnly.push(right[j++]);
      }
    }
    flush();
    return box;
  }

  // A result preview as a table; with `gold`, cells of rows gold's preview lacks are marked
  // where they differ from gold's row at the same position.
  function previewTable(preview, gold) {
    const box = el("div", { className: "preview" });
    if (!preview) {
      box.append(el("p", { className: "muted", text: "no result" }));
      return box;
    }
    const countText = preview.row_count + (preview.row_count === 1 ? " row" : " rows");
    const count = el("p", { className: "row-count", text: countText });
    if (gold && gold.row_count !== preview.row_count) count.classList.add("count-diff");
    box.append(count);
    const tableNode = el("table");
    const head = el("tr");
    for (const column of preview.columns) head.append(el("th", { text: column }));
    tableNode.append(el("thead", {}, head));
    const unmatched = gold ? gold.rows.map((row) => JSON.stringify(row)) : [];
    const body = el("tbody");
    for (const [r, row] of preview.rows.entries()) {
      const at = unmatched.indexOf(JSON.stringify(row));
      const inGold = gold && at >= 0;
      if (inGold) unmatched[at] = null;
      const tr = el("tr");
      row.forEach((value, c) => {
        const td = el("td", { text: value === null ? "NULL" : value });
        if (value === null) td.classList.add("null");
        const goldRow = gold ? gold.rows[r] : undefined;
        if (gold && !inGold && (!goldRow || goldRow[c] !== value)) td.classList.add("cell-diff");
        tr.append(td);
      });
      body.append(tr);
    }
    tableNode.append(body);
    box.append(tableNode);
    if (preview.rows.length < preview.row_count) {
      box.append(el("p", { className: "muted", text: "first " + preview.rows.length + " rows" }));
    }
    return box;
  }

  function similarityBars(similarity) {
    const box = el("div", { className: "similarity" });
    for (const [feature, value] of Object.entries(similarity)) {
      const width = value === null ? 0 : Math.max(0, Math.min(1, value)) * 100;
      const shown = value === null ? "–" : value.toFixed(2);
      box.append(
        el(
          "div",
          { className: "bar", "data-feature": feature },
          el("span", { className: "label", text: feature }),
          el("span", { className: "track" }, el("div", { className: "fill", style: "width:" + width + "%" })),
          el("span", { className: "value", text: shown })
        )
      );
    }
    return box;
  }

  // What explains the verdict, in words (written by explorer.py): the reason, gold's ties and
  // how many answers they allow, whether the answer reads the data, r_ves with the work counts
  // it divided, and what a metered answer cost.
  function whyBlock(result) {
    const why = el("div", { className: "why" });
    if (result.reason_text) why.append(el("p", { className: "reason-text", text: result.reason_text }));
    if (result.ties_text) {
      const attributes = { className: "ties", text: result.ties_text };
      attributes["data-tie-status"] = result.tie_status;
      attributes["data-acceptable"] = result.acceptable; // a string, set as it is
      why.append(el("p", attributes));
    }
    if (result.data_dependence) {
      const attributes = { className: "data-dependence", text: dataWords(result.data_dependence).text };
      attributes["data-data-dependence"] = result.data_dependence;
      const line = el("p", attributes);
      line.append(el("span", { className: "docs-ref muted", text: " (defined in " + DATA.data_dependence_docs + ")" }));
      why.append(line);
    }
    if (result.efficiency_text) why.append(el("p", { className: "efficiency", text: result.efficiency_text }));
    // What the answer cost (a metered run only): tokens, latency, where the counts came from.
    if (result.cost_text) why.append(el("p", { className: "cost", text: result.cost_text }));
    return why.childNodes.length ? why : null;
  }

  function runPanel(item, name, result) {
    const panel = el("div", { className: "run" }, el("h3", { text: name }));
    if (!result) {
      panel.append(el("p", { className: "muted", text: "not in this run" }));
      return panel;
    }
    panel.append(el("p", { className: "verdict v-" + result.verdict, text: result.label }));
    const status = "status " + result.status + (result.reason ? ", reason " + result.reason : "");
    panel.append(el("p", { className: "status muted", text: status }));
    const why = whyBlock(result);
    if (why) panel.append(why);
    if (result.error) panel.append(el("h3", { text: "Error message" }), pre(result.error, "error"));
    panel.append(el("h3", { text: "Extracted SQL" }));
    if (result.extracted_sql) {
      panel.append(diffSql(result.extracted_sql, item.gold_sql));
      if (item.gold_sql) {
        const lines = el("details", { className: "line-diff", open: "" }, el("summary", { text: "Gold and answer, line by line" }));
        lines.append(sideBySide(item.gold_sql, result.extracted_sql));
        panel.append(lines);
      }
    } else panel.append(el("p", { className: "muted", text: "none" }));
    if (result.executed_sql && result.executed_sql !== result.extracted_sql) {
      panel.append(el("h3", { text: "Executed SQL (translated)" }), pre(result.executed_sql, "sql"));
    }
    panel.append(el("h3", { text: "Result" }), previewTable(result.preview, item.gold_preview));
    if (result.similarity) {
      panel.append(el("h3", { text: "Similarity to gold by feature" }), similarityBars(result.similarity));
    }
    if (result.raw_output !== null && result.raw_output !== undefined) {
      const raw = el("details", { className: "raw" }, el("summary", { text: "Raw output" }));
      raw.append(pre(result.raw_output, "raw-output"));
      panel.append(raw);
    }
    return panel;
  }

  function openItem(key) {
    const item = ITEMS.find((candidate) => candidate.key === key);
    if (!item) return;
    state.selected = key;
    for (const tr of tbody.querySelectorAll("tr")) tr.classList.toggle("selected", tr.dataset.key === key);
    detail.textContent = "";
    detail.dataset.key = key;
    const facts = [item.category && "category " + item.category, "gold " + item.gold_status];
    if (item.flags && item.flags.length) facts.push("flags " + item.flagText);
    if (item.suspect_gold) facts.push("suspect gold: " + item.suspect_gold);
    detail.append(
      el("h2", { text: item.key }),
      el("p", { className: "muted", text: facts.filter(Boolean).join(" · ") })
    );
    if (item.question) detail.append(el("h3", { text: "Question" }), pre(item.question, "question"));
    const database = [item.db_id, item.db_path].filter(Boolean).join(" — ");
    if (database) detail.append(el("p", { className: "database", text: "Database: " + database }));
    const schema = item.db_id && DATA.schemas ? DATA.schemas[item.db_id] : undefined;
    if (schema) {
      const box = el("details", {}, el("summary", { text: "Schema of " + item.db_id }));
      box.append(pre(schema, "schema"));
      detail.append(box);
    }
    if (item.prompt) {
      const prompt = el("details", {}, el("summary", { text: "Prompt (with the schema)" }));
      prompt.append(pre(item.prompt, "prompt"));
      detail.append(prompt);
    }
    if (item.gold_sql) detail.append(el("h3", { text: "Gold SQL" }), pre(item.gold_sql, "gold-sql"));
    if (item.gold_error) detail.append(pre(item.gold_error, "error"));
    detail.append(el("h3", { text: "Gold result" }), previewTable(item.gold_preview, null));
    const panels = el("div", { className: "runs" });
    RUNS.forEach((name, run) => panels.append(runPanel(item, name, item.results[run])));
    detail.append(panels);
    detail.scrollTop = 0; // the detail scrolls on its own; the list keeps its place
    if (location.hash !== "#" + encodeURIComponent(key)) history.replaceState(null, "", "#" + encodeURIComponent(key));
  }

  buildHeader();
  app.append(
    el("h1", { text: document.title }),
    buildFilters(),
    summary,
    counts,
    // Three or four runs' columns need more of the width than two: the list takes 2/3 of it.
    el("div", { id: "layout" }, el("div", { id: "list", style: RUNS.length > 2 ? "flex-grow: 4" : null }, table, more), detail)
  );
  refresh();
  if (location.hash.length > 1) openItem(decodeURIComponent(location.hash.slice(1)));
  window.explorerReady = true; // read by the browser test
})();
