"""The explorer in a real headless Chromium (Debian's ``chromium`` + ``chromium-driver``, driven
by Selenium through ``/usr/bin/chromedriver``; Selenium Manager is never asked for a driver).

The page is built by the real ``sqlbench-lmeval explore`` command from two scripted models'
lm-eval folders over a real SQLite database (``support.explorer_runs``, whose docstring says
what each model answered). Every expected count below is derived from that table by hand.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
from support.browser import choose, chromium, needs_chromium, open_page, page_problems
from support.explorer_runs import GOLD, HOSTILE, scripted_runs, tie_runs

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.scoring.gold_ties import ANSWERS, NONE

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One Chromium for the module (starting one is most of a test's time); each test opens
    its own page, and the explorer keeps no state in the browser (no storage, no cookies)."""
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


def _counts(driver, run: int) -> dict[str, int]:
    cells = driver.find_elements("css selector", f"#counts tr[data-run='{run}'] td")
    return {cell.get_attribute("data-verdict"): int(cell.text) for cell in cells}


def _shown_keys(driver) -> list[str]:
    rows = driver.find_elements("css selector", "#items tbody tr")
    return [row.get_attribute("data-key") for row in rows]


def _built_explorer(tmp_path) -> Path:
    folders = scripted_runs(tmp_path)
    runs = [f"{name}={folder}" for name, folder in folders.items()]
    assert main(["explore", *runs, "--output", str(tmp_path / "out")]) == 0
    return tmp_path / "out" / "explorer.html"


def test_filters_counts_item_view_and_diff_marks(browser, tmp_path):
    page = _built_explorer(tmp_path)
    open_page(browser, page, "explorerReady")
    assert browser.find_element("id", "summary").text == "4 of 4 items"
    # alpha: items 1 and 4 correct, 2 an error, 3 no SQL; beta: 2 and 3 correct, 1 and 4 wrong.
    alpha, beta = _counts(browser, 0), _counts(browser, 1)
    assert [alpha[v] for v in ("correct", "error", "no_sql", "wrong_result")] == [2, 1, 1, 0]
    assert [beta[v] for v in ("correct", "wrong_result", "error")] == [2, 2, 0]
    # The error cell names the error kind (SQLite's "no such table: produce").
    row = browser.find_element("css selector", "#items tr[data-key='shop/2']")
    assert "error: no such table" in row.text

    # Category "aggregate" holds items 2 and 3: alpha has one error and one no-SQL there.
    choose(browser, "category", "aggregate")
    assert browser.find_element("id", "summary").text == "2 of 4 items"
    assert _shown_keys(browser) == ["shop/2", "shop/3"]
    alpha = _counts(browser, 0)
    assert (alpha["correct"], alpha["error"], alpha["no_sql"]) == (0, 1, 1)
    choose(browser, "category", "any")

    # alpha right and beta wrong: items 1 and 4.
    choose(browser, "pair-a", "alpha")
    choose(browser, "pair-b", "beta")
    assert _shown_keys(browser) == ["shop/1", "shop/4"]
    # The other way round: beta right and alpha wrong are items 2 and 3.
    choose(browser, "pair-a", "beta")
    choose(browser, "pair-b", "alpha")
    assert _shown_keys(browser) == ["shop/2", "shop/3"]
    choose(browser, "pair-a", "—")

    # Verdict filter per run, then free-text search over SQL ("produce" is only in alpha's SQL).
    choose(browser, "verdict-1", "correct")
    assert _shown_keys(browser) == ["shop/2", "shop/3"]
    choose(browser, "verdict-1", "any")
    browser.find_element("id", "search").send_keys("produce")
    assert _shown_keys(browser) == ["shop/2"]
    browser.find_element("id", "search").clear()
    browser.find_element("id", "search").send_keys(" ")  # clear() fires no input event
    assert browser.find_element("id", "summary").text == "4 of 4 items"

    # Sorting by beta's verdict, descending: "wrong result" > "correct" as text.
    header = browser.find_element("css selector", "#items th[data-sort='run1']")
    header.click()
    header.click()
    assert _shown_keys(browser)[:2] == ["shop/1", "shop/4"]

    # Item 2: alpha's error text is shown.
    browser.find_element("css selector", "#items tr[data-key='shop/2']").click()
    detail = browser.find_element("id", "detail")
    errors = [node.text for node in detail.find_elements("css selector", "pre.error")]
    assert errors == ["no such table: produce"]

    # Item 1: beta's preview marks exactly the two price cells (8.0 vs 4.0, 14.5 vs 7.25);
    # alpha's preview equals gold's and has no marks; beta's SQL marks "*" and "2".
    browser.find_element("css selector", "#items tr[data-key='shop/1']").click()
    panels = detail.find_elements("css selector", ".run")
    assert [p.find_element("tag name", "h3").text for p in panels] == ["alpha", "beta"]
    marked = [cell.text for cell in panels[1].find_elements("css selector", "td.cell-diff")]
    assert marked == ["8.0", "14.5"]
    assert panels[0].find_elements("css selector", "td.cell-diff") == []
    sql_marks = [span.text for span in panels[1].find_elements("css selector", "span.diff")]
    assert sql_marks == ["*", "2"]
    assert "Schema: product" in detail.find_element(
        "css selector", "details pre.prompt"
    ).get_attribute("textContent")
    screenshot = tmp_path / "explorer.png"
    assert browser.save_screenshot(str(screenshot))
    print(f"screenshot: {screenshot}")


def test_hostile_text_renders_as_text(browser, tmp_path):
    page = _built_explorer(tmp_path)
    html = page.read_text(encoding="utf-8")
    # The data block's first closing tag is its own: the JSON up to it is whole and holds
    # the hostile question, so no text ended the block early.
    data_block = html.split('<script type="application/json" id="explorer-data">')[1]
    data = json.loads(data_block.split("</script>", 1)[0])
    assert data["items"][3]["question"] == f"Show the text {HOSTILE}"
    open_page(browser, page, "explorerReady")
    browser.find_element("css selector", "#items tr[data-key='shop/4']").click()
    detail = browser.find_element("id", "detail")
    assert detail.find_element("css selector", "pre.question").text == f"Show the text {HOSTILE}"
    gold_sql = detail.find_element("css selector", "pre.gold-sql").text
    assert gold_sql == 'SELECT \'</script><img src=x onerror=alert(1)>\' AS "x""y"'
    cells = [td.text for td in detail.find_elements("css selector", ".preview td")]
    # gold's cell, alpha's equal cell, beta's string: each the exact text.
    assert cells == [
        "</script><img src=x onerror=alert(1)>",
        "</script><img src=x onerror=alert(1)>",
        '<b>"bold"</b>',
    ]
    headers = [th.text for th in detail.find_elements("css selector", ".preview th")]
    assert headers == ['x"y'] * 3
    # No element came from the data: no <img>, no <b>, and no dialog opened.
    assert browser.find_elements("tag name", "img") == []
    assert browser.find_elements("tag name", "b") == []
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 - reading it is how Selenium checks
    # Search with a quote and angle brackets is matched as text too.
    browser.find_element("id", "search").send_keys('"bold"')
    assert _shown_keys(browser) == ["shop/4"]


def _panel_why(driver, key: str) -> list[dict[str, str | None]]:
    """Per run panel of item ``key``: the verdict, and the texts and data of its "why" block."""
    driver.find_element("css selector", f"#items tr[data-key='{key}']").click()
    panels = driver.find_element("id", "detail").find_elements("css selector", ".run")
    found = []
    for panel in panels:
        texts = {
            name: [node.text for node in panel.find_elements("css selector", f".why .{css}")]
            for name, css in (
                ("reason", "reason-text"),
                ("ties", "ties"),
                ("efficiency", "efficiency"),
            )
        }
        ties = panel.find_elements("css selector", ".why .ties")
        found.append(
            {
                "verdict": panel.find_element("css selector", ".verdict").text,
                **{name: values[0] if values else None for name, values in texts.items()},
                "tie_status": ties[0].get_attribute("data-tie-status") if ties else None,
                "acceptable": ties[0].get_attribute("data-acceptable") if ties else None,
            }
        )
    return found


def test_tie_resolutions_are_explained_and_filtered(browser, tmp_path):
    """The tie runs of ``support.explorer_runs`` (its table says what each model answered)."""
    folders = tie_runs(tmp_path)
    runs = [f"{name}={folder}" for name, folder in folders.items()]
    assert main(["explore", *runs, "--output", str(tmp_path / "out")]) == 0
    open_page(browser, tmp_path / "out" / "explorer.html", "explorerReady")
    assert browser.find_element("id", "summary").text == "4 of 4 items"
    # The table says which right answers were tie resolutions.
    row = browser.find_element("css selector", "#items tr[data-key='league/1']")
    assert "correct (tie resolution)" in row.text
    # Filters: alpha's tie resolutions are items 1, 2 and 4; gold has ties on 1, 2 and 4.
    choose(browser, "ties", "correct as a tie resolution (some run)")
    assert _shown_keys(browser) == ["league/1", "league/2", "league/4"]
    assert _counts(browser, 0)["correct"] == 3
    choose(browser, "ties", "gold has several right answers")
    assert _shown_keys(browser) == ["league/1", "league/2", "league/4"]
    choose(browser, "ties", "any")
    assert browser.find_element("id", "summary").text == "4 of 4 items"

    alpha, beta = _panel_why(browser, "league/1")
    assert alpha["verdict"] == "correct (tie resolution)" and beta["verdict"] == "wrong result"
    assert alpha["reason"].startswith("correct under tie-aware EX: not gold's own rows")
    assert (alpha["tie_status"], alpha["acceptable"]) == (ANSWERS, "2")
    assert "2 different answers are right" in alpha["ties"]
    assert beta["reason"] == "other values than gold's"
    assert beta["efficiency"].startswith("R-VES (work) 0.000: the answer is not correct")
    # The one-answer item: no ties; both models' r_ves text names the work counts.
    alpha, beta = _panel_why(browser, "league/3")
    assert alpha["tie_status"] == NONE and alpha["acceptable"] is None
    assert alpha["ties"].startswith("gold has no ORDER BY and no LIMIT")
    assert alpha["reason"] == "the same result as gold"
    assert alpha["efficiency"].startswith("R-VES (work) 1.000: gold's work ")
    assert "ratio 1.00; BIRD's reward for it is 1, square-rooted" in alpha["efficiency"]
    # 25 runners all tied: 25! answers, shown digit for digit (a JavaScript number would
    # print 1.5511210043330986e+25).
    alpha, beta = _panel_why(browser, "league/4")
    assert alpha["acceptable"] == beta["acceptable"] == str(math.factorial(25))
    assert f"{math.factorial(25)} different answers are right" in alpha["ties"]
    assert alpha["verdict"] == "correct (tie resolution)" and beta["verdict"] == "correct"
    screenshot = tmp_path / "explorer-ties.png"
    assert browser.save_screenshot(str(screenshot))
    print(f"screenshot: {screenshot}")


def _large_data(runs: int, items: int) -> dict:
    """Explorer data of ``runs`` runs x ``items`` items, shaped as ``explorer_data`` makes it."""
    verdicts = ["correct", "wrong_result", "error", "timeout", "no_sql", "truncated"]
    rows = []
    for item in range(items):
        rows.append(
            {
                "key": f"logiccat/{item}",
                "task": "logiccat",
                "id": item,
                "category": f"category {item % 7}",
                "gold_status": "ok" if item % 11 else "empty",
                "db_id": f"db{item % 5}",
                "flags": ["random"] if item % 13 == 0 else [],
                "question": f"Question number {item}: how many rows of table_{item % 50}?",
                "gold_sql": f"SELECT COUNT(*) FROM table_{item % 50} WHERE x > {item}",
                "gold_preview": {"columns": ["n"], "rows": [[str(item)]], "row_count": 1},
                "results": [
                    {
                        "verdict": verdicts[(item + run) % len(verdicts)],
                        "label": verdicts[(item + run) % len(verdicts)].replace("_", " "),
                        "status": "ok",
                        "reason": None,
                        "error": None,
                        "extracted_sql": f"SELECT COUNT(*) FROM table_{item % 50} WHERE x > {run}",
                        "raw_output": f"```sql\nSELECT COUNT(*) FROM table_{item % 50}\n```",
                        "executed_sql": None,
                        "preview": {"columns": ["n"], "rows": [[str(run)]], "row_count": 1},
                        "similarity": {"Tables": 0.5, "Joins": None},
                    }
                    for run in range(runs)
                ],
            }
        )
    return {
        "runs": [f"model-{run}" for run in range(runs)],
        "schemas": {f"db{db}": f"CREATE TABLE table_{db} (x INTEGER);" for db in range(5)},
        "verdicts": ["correct", "wrong_result", "error", "timeout", "no_sql", "truncated"]
        + ["too_many_rows", "crashed", "missing"],
        "items": rows,
    }


def test_ten_runs_of_4036_items_load_and_filter(browser, tmp_path):
    """Measured and printed, not asserted (no timed assertions): the issue's targets are open
    in under 2 s and filter in under 200 ms."""
    from sqlbench_lmeval.report.explorer import render_explorer

    page = tmp_path / "large.html"
    page.write_text(render_explorer(_large_data(10, 4036)), encoding="utf-8")
    started = time.perf_counter()
    open_page(browser, page, "explorerReady")
    opened = time.perf_counter() - started
    load_ms = browser.execute_script(
        "const t = performance.getEntriesByType('navigation')[0]; return t.loadEventEnd;"
    )
    assert browser.find_element("id", "summary").text == "4036 of 4036 items"
    # Items with item % 6 == 0 have verdict correct for model-0 (verdicts[item % 6]).
    choose(browser, "verdict-0", "correct")
    expected = len(range(0, 4036, 6))
    assert browser.find_element("id", "summary").text == f"{expected} of 4036 items"
    filter_ms = browser.execute_script("return window.explorerLastRefreshMs")
    choose(browser, "pair-a", "model-0")
    choose(browser, "pair-b", "model-1")
    pair_ms = browser.execute_script("return window.explorerLastRefreshMs")
    browser.find_element("id", "search").send_keys("table_8 ")
    search_ms = browser.execute_script("return window.explorerLastRefreshMs")
    # Still model-0 correct (item % 6 == 0; model-1 is then wrong), and item % 50 == 8:
    # item = 108 mod 150, i.e. 108, 258, ..., 4008: 27 items.
    assert browser.find_element("id", "summary").text == "27 of 4036 items"
    # The item view of a LogicCat-shaped item: its database's schema, and similarity bars
    # (Tables 0.5: a half-filled bar; Joins unknown: an empty bar showing "–").
    first = browser.find_element("css selector", "#items tbody tr")
    item_id = int(first.get_attribute("data-key").split("/")[1])
    first.click()
    detail = browser.find_element("id", "detail")
    schema = detail.find_element("css selector", "pre.schema").get_attribute("textContent")
    assert schema == f"CREATE TABLE table_{item_id % 5} (x INTEGER);"
    bar = detail.find_element("css selector", ".run .bar[data-feature='Tables']")
    assert bar.find_element("css selector", ".fill").get_attribute("style") == "width: 50%;"
    assert bar.find_element("css selector", ".value").text == "0.50"
    joins = detail.find_element("css selector", ".run .bar[data-feature='Joins'] .value")
    assert joins.text == "–"
    size_mb = page.stat().st_size / 1e6
    print(
        json.dumps(
            {
                "page_mb": round(size_mb, 2),
                "open_s_webdriver": round(opened, 3),
                "load_event_ms": round(load_ms, 1),
                "filter_verdict_ms": round(filter_ms, 1),
                "filter_pair_ms": round(pair_ms, 1),
                "filter_search_ms": round(search_ms, 1),
            }
        )
    )


def test_list_beside_a_sticky_detail_with_question_error_and_line_diff(browser, tmp_path):
    """Opening an item keeps the list where it was; the list shows the question and the
    engine's own error message; the detail sets gold and the answer side by side, line by
    line; the page names no folder of this machine and fetches nothing."""
    page = _built_explorer(tmp_path)
    html = page.read_text(encoding="utf-8")
    assert str(tmp_path) not in html  # shop.db is named by its file, not by this folder
    browser.get_log("browser")  # drop what earlier pages logged
    open_page(browser, page, "explorerReady")
    header = [th.text for th in browser.find_elements("css selector", "#items th")]
    assert header == ["Item", "Question", "Category", "alpha", "beta"]
    row = browser.find_element("css selector", "#items tr[data-key='shop/2']")
    cells = row.find_elements("tag name", "td")
    assert cells[1].text == "How many products are there?"
    assert cells[2].text == "aggregate"
    # alpha's cell: the class it is counted by, then SQLite's own message.
    assert cells[3].find_element("css selector", ".error-message").text == (
        "no such table: produce"
    )
    # The detail opens beside the list, and the window does not scroll to it.
    browser.execute_script("window.scrollTo(0, 0)")
    before = browser.execute_script("return window.scrollY")
    browser.find_element("css selector", "#items tr[data-key='shop/1']").click()
    assert browser.execute_script("return window.scrollY") == before
    listed = browser.find_element("id", "list").rect
    detail = browser.find_element("id", "detail")
    assert detail.rect["x"] >= listed["x"] + listed["width"]  # to the right of the list
    assert detail.value_of_css_property("position") == "sticky"
    alpha, beta = detail.find_elements("css selector", ".run table.sql-diff")
    # alpha answered gold's SQL: one line, the same on both sides.
    assert [
        tr.get_attribute("class") for tr in alpha.find_elements("css selector", "tbody tr")
    ] == ["same"]
    # beta doubled the price: gold's line faces beta's line, marked removed and added.
    (changed,) = beta.find_elements("css selector", "tbody tr")
    left, right = changed.find_elements("tag name", "td")
    assert (left.get_attribute("class"), left.text) == ("del", GOLD[1])
    assert right.get_attribute("class") == "ins" and "price * 2" in right.text
    assert page_problems(browser) == {"console_errors": [], "fetched": []}
    screenshot = tmp_path / "explorer-side-by-side.png"
    assert browser.save_screenshot(str(screenshot))
    print(f"screenshot: {screenshot}")


def test_tpcds_similarity_column(browser, tmp_path, score_item, write_score_file):
    """TPC-DS items have no category (no column for it) and a structural similarity per run
    (a column per run, sortable: 0.25 < 0.75, no similarity first)."""
    from sqlbench_lmeval.report.explorer import write_explorer
    from sqlbench_lmeval.report.runs import read_runs

    items = [
        score_item(1, 1, structural_similarity=0.75),
        score_item(2, 0, structural_similarity=0.25),
        score_item(3, 0, status="no_sql"),
    ]
    path = write_score_file("tpc", items, task="tpcds")
    page = write_explorer(read_runs([f"m={path}"]), tmp_path / "out")
    browser.get_log("browser")
    open_page(browser, page, "explorerReady")
    header = [th.text for th in browser.find_elements("css selector", "#items th")]
    assert header == ["Item", "Question", "m", "Sim. m"]
    cells = [td.text for td in browser.find_elements("css selector", "#items td.similarity-cell")]
    assert cells == ["0.75", "0.25", "–"]
    browser.find_element("css selector", "#items th[data-sort='sim0']").click()
    assert _shown_keys(browser) == ["tpcds/3", "tpcds/2", "tpcds/1"]
    assert page_problems(browser) == {"console_errors": [], "fetched": []}


def test_a_run_scored_before_data_dependence_shows_its_flag(
    browser, tmp_path, score_item, write_score_file
):
    """A score file from before ``data_dependence`` existed carries ``reads_no_table`` alone
    (item 1: it named no table): the list says so without a reason, the Data filter keeps it,
    and the item view has no data-dependence line to show."""
    from sqlbench_lmeval.report.explorer import write_explorer
    from sqlbench_lmeval.report.runs import read_runs

    items = [score_item(1, 1, reads_no_table=True, r_ves=0.0), score_item(2, 1, r_ves=1.0)]
    page = write_explorer(read_runs([f"old={write_score_file('old', items)}"]), tmp_path / "out")
    browser.get_log("browser")
    open_page(browser, page, "explorerReady")
    cells = browser.find_elements("css selector", "#items tbody tr td:nth-child(3)")
    assert [cell.text for cell in cells] == ["correct\ndoes not read the data", "correct"]
    choose(browser, "data-dependence", "does not read the data (some run)")
    assert _shown_keys(browser) == ["logiccat/1"]
    (panel,) = _panel_why(browser, "logiccat/1")
    assert panel["verdict"] == "correct"
    assert browser.find_elements("css selector", "#detail .data-dependence") == []
    assert page_problems(browser) == {"console_errors": [], "fetched": []}


def test_opening_an_item_far_down_the_list_keeps_the_list_in_place(browser, tmp_path):
    from sqlbench_lmeval.report.explorer import render_explorer

    page = tmp_path / "long.html"
    page.write_text(render_explorer(_large_data(2, 150)), encoding="utf-8")
    open_page(browser, page, "explorerReady")
    row = browser.find_element("css selector", "#items tr[data-key='logiccat/120']")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", row)
    before = browser.execute_script("return window.scrollY")
    assert before > 1000  # far down a list taller than the window
    where = "return arguments[0].getBoundingClientRect().top"
    on_screen = browser.execute_script(where, row)
    row.click()
    # Neither the window nor the row moved.
    assert browser.execute_script("return window.scrollY") == before
    assert browser.execute_script(where, row) == on_screen
    # The item view is on screen beside the row that opened it.
    box = browser.execute_script(
        "const r = document.getElementById('detail').getBoundingClientRect();"
        "return [r.top, r.bottom, window.innerHeight];"
    )
    top, bottom, height = box
    assert 0 <= top < height and bottom > 0
    detail = browser.find_element("id", "detail")
    assert detail.find_element("tag name", "h2").text == "logiccat/120"
    screenshot = tmp_path / "explorer-far-down.png"
    assert browser.save_screenshot(str(screenshot))
    print(f"screenshot: {screenshot}")


def _fits(driver) -> None:
    """The list does not scroll sideways and every one of its headings is inside it."""
    listed = driver.find_element("id", "list")
    assert driver.execute_script(
        "return arguments[0].scrollWidth <= arguments[0].clientWidth", listed
    )
    right = listed.rect["x"] + listed.rect["width"]
    for th in driver.find_elements("css selector", "#items th"):
        assert th.rect["x"] + th.rect["width"] <= right + 0.5, th.text
    assert driver.execute_script("return document.documentElement.scrollWidth <= innerWidth")


LONG_ERROR = (
    'Binder Error: Referenced column "ss_sold_date_sk_typo" not found in FROM clause! '
    'Candidate bindings: "store_sales.ss_sold_date_sk", "store_sales.ss_sold_time_sk"'
)


def test_two_to_four_runs_fit_1400_px_with_answered_items_first(
    browser, tmp_path, score_item, write_score_file
):
    """Four score files: "full" and "errors" answered LogicCat items 1-6 ("errors" with a long
    engine message on every item), "limited" only items 4-6 (a cut run), "tpc" TPC-DS items
    1-3. Items 4-6 lack one run's answer (tpc's), 1-3 two, the TPC-DS items three: that is
    the list's first order. Gold of item 2 is empty and item 3 is flagged: both under the id."""
    from sqlbench_lmeval.report.explorer import write_explorer
    from sqlbench_lmeval.report.runs import read_runs

    def item(i, ex, status="ok", **extra):
        gold = "empty" if i == 2 else "ok"
        flags = ["random"] if i == 3 else []
        return score_item(
            i, ex, status, category=f"category {i % 2}", gold_status=gold, flags=flags, **extra
        )

    files = {
        "full": write_score_file("full", [item(i, i % 2) for i in range(1, 7)]),
        "errors": write_score_file(
            "errors", [item(i, 0, "error", error=LONG_ERROR) for i in range(1, 7)]
        ),
        "limited": write_score_file("limited", [item(i, 1) for i in range(4, 7)]),
        "tpc": write_score_file(
            "tpc",
            [score_item(i, 1, structural_similarity=0.5) for i in range(1, 4)],
            task="tpcds",
        ),
    }
    two = write_explorer(
        read_runs([f"{n}={files[n]}" for n in ("full", "errors")]), tmp_path / "two"
    )
    four = write_explorer(read_runs([f"{n}={p}" for n, p in files.items()]), tmp_path / "four")
    browser.get_log("browser")
    try:
        for width in (1400, 1920):
            browser.set_window_size(width, 1000)
            open_page(browser, two, "explorerReady")
            _fits(browser)
            row = browser.find_element("css selector", "#items tr[data-key='logiccat/1']")
            # The engine's message is cut to its column, the whole of it on hover.
            message = row.find_element("css selector", ".error-message")
            assert message.get_attribute("title") == LONG_ERROR
            cut = "return arguments[0].scrollWidth > arguments[0].clientWidth"
            assert browser.execute_script(cut, message)
            # Gold's status and the flags, under the id.
            facts = {
                key: [
                    e.text
                    for e in browser.find_elements(
                        "css selector", f"#items tr[data-key='{key}'] .item-facts"
                    )
                ]
                for key in ("logiccat/1", "logiccat/2", "logiccat/3")
            }
            assert facts == {
                "logiccat/1": [],
                "logiccat/2": ["gold empty"],
                "logiccat/3": ["random"],
            }
            browser.save_screenshot(str(tmp_path / f"explorer-two-runs-{width}.png"))

            open_page(browser, four, "explorerReady")
            _fits(browser)
            header = [th.text for th in browser.find_elements("css selector", "#items th")]
            assert header == [
                "Item",
                "Question",
                "Category",
                "full",
                "errors",
                "limited",
                "tpc",
                "Sim. tpc",
            ]
            keys = _shown_keys(browser)
            assert keys == [
                *(f"logiccat/{i}" for i in (4, 5, 6, 1, 2, 3)),
                *(f"tpcds/{i}" for i in (1, 2, 3)),
            ]
            # A short verdict is never cut: "wrong result" is whole in its column.
            label = browser.find_element(
                "css selector", "#items tr[data-key='logiccat/4'] td.verdict .label"
            )
            assert label.text == "wrong result"
            assert not browser.execute_script(cut, label)
            # A click on the Item heading sorts by item alone.
            browser.find_element("css selector", "#items th[data-sort='key']").click()
            assert _shown_keys(browser)[:3] == ["logiccat/1", "logiccat/2", "logiccat/3"]
            assert page_problems(browser) == {"console_errors": [], "fetched": []}
            browser.save_screenshot(str(tmp_path / f"explorer-four-runs-{width}.png"))
    finally:
        browser.set_window_size(1400, 1800)
    print(f"screenshots: {tmp_path}/explorer-*-runs-*.png")
