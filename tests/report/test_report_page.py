"""The report page a reader shares: run details from lm-eval's results file, ``--limit`` runs
marked wherever their numbers appear, EX on healthy gold, metrics that coincide drawn once,
EX per database, and ``report.html`` opened in a real headless Chromium (charts embedded and
shown, a table of contents, no console error, nothing fetched).

Runs are lm-eval folders written by lm-eval's own ``EvaluationTracker`` (``write_lmeval_run``)
or score files (``write_score_file``), from per-item values chosen here; every expected number
is counted by hand from those values.
"""

from __future__ import annotations

import time
from importlib.metadata import version

import pytest
from support.browser import chromium, needs_chromium, page_problems

from sqlbench_lmeval.report import read_runs, write_report
from sqlbench_lmeval.report.metadata import run_metadata
from sqlbench_lmeval.report.sections.databases import database_rows
from sqlbench_lmeval.report.sections.scores import HEALTHY_EX, coinciding, score_rows

# 2025-12-02 14:30 UTC as a Unix time, the form lm-eval's evaluator records ("date").
STARTED = 1764685800.0


def _config(limit=None):
    return {
        "config": {
            "model": "local-completions",
            "model_args": "model=tiny,base_url=http://127.0.0.1:9/v1/completions",
            "limit": limit,
            "gen_kwargs": {"max_gen_toks": 256, "temperature": 0},
        },
        "date": STARTED,
        # What lm-eval's CLI adds beside them (``loggers.utils.add_env_info``).
        "lm_eval_version": version("lm_eval"),
    }


@pytest.fixture
def full_and_limited(score_item, write_lmeval_run, tmp_path):
    """ "full" answered items 1-4 (right on 1, 2, 3); "short" ran with ``--limit 3`` (lm-eval
    records 3.0) and answered items 1-3 (right on 1)."""
    full = write_lmeval_run(
        "full",
        {"logiccat": [score_item(i, i < 4, category="c") for i in range(1, 5)]},
        output=tmp_path / "full",
        results=_config(),
    )
    short = write_lmeval_run(
        "short",
        {"logiccat": [score_item(i, i == 1, category="c") for i in range(1, 4)]},
        output=tmp_path / "short",
        results=_config(limit=3.0),
    )
    return f"full={full}", f"short={short}"


def test_run_details_come_from_the_results_file(full_and_limited):
    full, short = (run_metadata(run) for run in read_runs(full_and_limited))
    assert full.model == "local-completions"
    assert full.model_args == "model=tiny,base_url=http://127.0.0.1:9/v1/completions"
    assert full.date == "2025-12-02 14:30 UTC"
    assert full.generation == "max_gen_toks=256, temperature=0"
    assert full.lm_eval_version == version("lm_eval")
    assert full.limit is None
    assert short.limit == "--limit 3"  # not "3.0"


def test_a_limited_run_is_marked_wherever_its_numbers_appear(full_and_limited, tmp_path):
    files = write_report(read_runs(full_and_limited), tmp_path / "out", resamples=100)
    markdown = files.markdown.read_text(encoding="utf-8")
    # Scores: the limited run's EX of 1 in 3 sits under its marked name.
    assert "| short [--limit 3] | all | 3 | " in markdown
    assert "| full | all | 4 | " in markdown
    # Paired comparison, its own table: the marked name again.
    assert "| full | short [--limit 3] | 3 (A 4, B 3) |" in markdown
    # Nowhere does the limited run appear under its bare name.
    assert "| short |" not in markdown
    assert "answered only the first items of their tasks" in markdown
    # The run details table: arguments, date and generation settings per run.
    assert "| full | local-completions | model=tiny,base_url=" in markdown
    assert "2025-12-02 14:30 UTC | max_gen_toks=256, temperature=0 |" in markdown


def test_ex_on_healthy_gold_leaves_unhealthy_gold_out(score_item, write_score_file, tmp_path):
    # EX 1, 1, 1, 0; item 1's gold is empty: EX 3/4, EX on healthy gold 2/3 (items 2, 3, 4).
    items = [
        score_item(1, 1, gold_status="empty"),
        score_item(2, 1),
        score_item(3, 1),
        score_item(4, 0),
    ]
    (row,) = score_rows(read_runs([str(write_score_file("m", items))]), resamples=200)
    assert row.intervals["ex"].mean == 0.75
    assert row.intervals[HEALTHY_EX].mean == pytest.approx(2 / 3)
    files = write_report(read_runs([str(write_score_file("m", items))]), tmp_path / "r")
    assert "EX (healthy gold) |" in files.markdown.read_text(encoding="utf-8")


def test_metrics_equal_for_every_run_are_one_bar(score_item, write_score_file):
    # score_item gives EX = EX strict = EX set; all gold healthy, so EX on healthy gold too.
    same = [score_item(i, i % 2) for i in range(1, 7)]
    # In run "b", item 1 is right under EX but not in order (EX strict 0): EX strict differs.
    other = [score_item(i, i % 2, **({"ex_strict": 0} if i == 1 else {})) for i in range(1, 7)]
    runs = read_runs([str(write_score_file("a", same)), str(write_score_file("b", other))])
    whole = [row for row in score_rows(runs, resamples=200) if row.category is None]
    metrics = [(name, name) for name in ("ves", "ex", "ex_strict", "ex_set", HEALTHY_EX)]
    bars, groups = coinciding(whole, metrics)
    assert [title for _, title in bars] == ["ves", f"ex = ex_set = {HEALTHY_EX}", "ex_strict"]
    assert groups == [["ex", "ex_set", HEALTHY_EX]]


def test_ex_per_database(score_item, write_score_file):
    # db "north": items 1, 2 (right on 1); db "south": items 3, 4, 5 (right on 3, 4).
    database = {1: "north", 2: "north", 3: "south", 4: "south", 5: "south"}
    items = [score_item(i, i in (1, 3, 4), db_id=database[i]) for i in range(1, 6)]
    rows = database_rows(read_runs([str(write_score_file("m", items))]), resamples=200)
    assert [(row.database, row.n, row.ex.mean) for row in rows] == [
        ("north", 2, 0.5),
        ("south", 3, pytest.approx(2 / 3)),
    ]


@needs_chromium
def test_report_page_in_chromium(full_and_limited, score_item, write_score_file, tmp_path):
    files = write_report(read_runs(full_and_limited), tmp_path / "out", resamples=100)
    assert len(files.images) >= 3
    for path in files.images:
        path.unlink()  # the page must not need them
    with chromium(tmp_path / "profile") as driver:
        driver.get(files.html.as_uri())
        for _ in range(100):  # images decode asynchronously
            if driver.execute_script("return Array.from(document.images).every((i) => i.complete)"):
                break
            time.sleep(0.05)
        shown = driver.execute_script(
            "return Array.from(document.images).map((i) => [i.naturalWidth, i.naturalHeight])"
        )
        assert len(shown) == len(files.images)
        assert all(width > 300 and height > 150 for width, height in shown)
        links = driver.find_elements("css selector", "nav.toc a")
        assert [link.text for link in links][:3] == ["Result", "Runs", "Scores"]
        for link in links:  # every entry leads to a heading on the page
            target = link.get_attribute("href").split("#", 1)[1]
            assert driver.find_elements("id", target)
        assert page_problems(driver) == {"console_errors": [], "fetched": []}
        screenshot = tmp_path / "report.png"
        assert driver.save_screenshot(str(screenshot))
        print(f"screenshot: {screenshot}")


@needs_chromium
def test_the_first_screen_shows_the_result_and_every_table_fits_1400_px(
    score_item, write_lmeval_run, tmp_path
):
    """TPC-DS's widest Scores table (VES, four EX columns, R-VES, structural similarity) on a
    1,400 px window; one run cut by ``--limit 3`` under a long name. "wide" is right on items
    1-3 of 4 (EX 0.75), "narrow" on item 1 of 3 (EX 1/3)."""

    def item(item_id, ex):
        return score_item(item_id, ex, structural_similarity=0.5, r_ves=float(ex))

    wide = write_lmeval_run(
        "wide",
        {"tpcds": [item(i, i < 4) for i in range(1, 5)]},
        output=tmp_path / "wide",
        results=_config(),
    )
    narrow = write_lmeval_run(
        "narrow",
        {"tpcds": [item(i, i == 1) for i in range(1, 4)]},
        output=tmp_path / "narrow",
        results=_config(limit=3.0),
    )
    name = "qwen2.5-coder-32b-instruct-q4-k-m"
    runs = read_runs([f"wide={wide}", f"{name}={narrow}"])
    files = write_report(runs, tmp_path / "out", resamples=100)
    markdown = files.markdown.read_text(encoding="utf-8")
    # The Result section comes first, the run metadata after it.
    assert markdown.index("## Result") < markdown.index("## Runs") < markdown.index("## Scores")
    assert f"| tpcds | {name} [--limit 3] | 3 | 0.333 [" in markdown
    assert "| tpcds | wide | 4 | 0.750 [" in markdown
    with chromium(tmp_path / "profile") as driver:
        driver.set_window_size(1400, 900)
        driver.get(files.html.as_uri())
        for _ in range(100):  # images decode asynchronously
            if driver.execute_script("return Array.from(document.images).every((i) => i.complete)"):
                break
            time.sleep(0.05)
        box = "return arguments[0].getBoundingClientRect()"
        height = driver.execute_script("return window.innerHeight")
        result = driver.find_element("css selector", "h2")
        assert result.text == "Result"
        chart = driver.find_element("css selector", ".beside img")
        table = driver.find_element("css selector", ".beside table")
        contents = driver.find_element("css selector", "nav.toc")
        chart_box, table_box = (driver.execute_script(box, e) for e in (chart, table))
        # Chart and table on the first screen, side by side, before the contents.
        assert chart_box["bottom"] <= height and table_box["bottom"] <= height
        assert table_box["left"] >= chart_box["right"]
        assert driver.execute_script(box, contents)["top"] >= table_box["bottom"]
        assert "0.750 [" in table.text and f"{name} [--limit 3]" in table.text
        # No table is wider than the page's column, and the page does not scroll sideways.
        right = driver.execute_script("return document.body.getBoundingClientRect().right")
        for each in driver.find_elements("css selector", "table"):
            assert driver.execute_script(box, each)["right"] <= right + 0.5, each.text[:80]
        assert driver.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth"
        )
        # Struct. sim. is the last Scores column, and it is in view.
        headers = driver.find_elements("css selector", "table th")
        assert "Struct. sim." in [h.text for h in headers]
        # A bracketed part never breaks: the limit mark and each interval are one line each.
        spans = driver.find_elements("css selector", "span.nb")
        assert any(s.text == "[--limit 3]" for s in spans)
        for span in spans:
            assert driver.execute_script("return arguments[0].getClientRects().length", span) == 1
        screenshot = tmp_path / "report-first-screen.png"
        assert driver.save_screenshot(str(screenshot))
        print(f"screenshot: {screenshot}")


def test_a_run_under_the_home_folder_is_shown_from_tilde(score_item, write_score_file, tmp_path):
    from pathlib import Path

    path = write_score_file("m", [score_item(1, 1), score_item(2, 0)])
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(tmp_path))
        assert Path.home() == tmp_path
        files = write_report(read_runs([str(path)]), tmp_path / "r", resamples=50)
    markdown = files.markdown.read_text(encoding="utf-8")
    assert "| ~/m.json |" in markdown
    # A score file records no model, date or generation settings: unknown, not guessed.
    assert "| m | unknown | unknown | unknown | unknown | unknown | all items |" in markdown
    assert str(tmp_path) not in markdown
    assert str(tmp_path) not in files.html.read_text(encoding="utf-8")


def test_a_run_name_matplotlib_would_read_as_tex_is_drawn_as_written(
    score_item, write_score_file, tmp_path
):
    # "$\frac$" is a TeX command without its arguments: read as mathtext it stops the drawing.
    name = r"$\frac$ model"
    items = [score_item(i, i % 2, category="physical" if i < 3 else "math") for i in range(1, 5)]
    paths = [str(write_score_file(name, items)), str(write_score_file("other", items))]
    files = write_report(read_runs(paths), tmp_path / "r", resamples=50)
    assert {path.name.split("-")[0] for path in files.images} >= {"scores", "categories"}
    # The Markdown backslash-escapes the backslash, so a viewer shows the name as written.
    assert "| $\\\\frac$ model |" in files.markdown.read_text(encoding="utf-8")


def test_markup_from_a_run_is_backslash_escaped_in_report_md(
    score_item, write_score_file, tmp_path
):
    """A model named with markup (``<think>``, as a reasoning model's output starts):
    report.md writes it as Markdown escapes in its title and tables (a viewer shows
    ``<think>``), never as HTML entities."""
    items = [score_item(1, 1), score_item(2, 0)]
    name = "<think>model</s>"
    files = write_report(read_runs([f"{name}={write_score_file('m', items)}"]), tmp_path / "r")
    markdown = files.markdown.read_text(encoding="utf-8")
    assert "&lt;" not in markdown and "&gt;" not in markdown
    assert markdown.startswith("# sqlbench-lmeval report: \\<think\\>model\\</s\\>\n")
    assert "| logiccat | \\<think\\>model\\</s\\> | 2 | 0.500 [" in markdown
    # The page shows them as text.
    page = files.html.read_text(encoding="utf-8")
    assert "&lt;think&gt;model&lt;/s&gt;" in page and "<think>" not in page
