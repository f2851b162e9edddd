"""The leaderboard's numbers and files, from verifications made by hand (per-item EX we choose,
so every rank, interval and group below follows from the definitions)."""

from __future__ import annotations

import csv
import json

import pytest
from support.verifications import HOSTILE, group_verification, verification

from sqlbench_lmeval.submission.leaderboard import leaderboard_data, render_leaderboard


def test_ranks_intervals_and_groups_of_a_small_board():
    # 12 items (the case of tests/report/test_ranks.py): A right on all, B on 1-9, C on 1-2;
    # D is rejected and E unattested (listed apart with their reasons, never ranked, though
    # both answer every item). Ranks 1, 2, 3; A and B share group a (McNemar p = 0.25 after
    # Holm), C differs from both (group b).
    runs = [
        verification("C", [1] * 2 + [0] * 10),
        verification("A", [1] * 12),
        verification("B", [1] * 9 + [0] * 3),
        verification("D", [1] * 12, reject=True),
        verification("E", [1] * 12, unattested=True),
    ]
    data = leaderboard_data(runs, {r.run: f"verifications/{r.run}.html" for r in runs})
    (board,) = data["tasks"]
    models = {m["name"]: m for m in board["models"]}
    assert [m["name"] for m in board["models"]] == ["A", "B", "C"]
    assert (models["A"]["rank"], models["B"]["rank"], models["C"]["rank"]) == (1, 2, 3)
    assert (models["A"]["groups"], models["B"]["groups"], models["C"]["groups"]) == ("a", "a", "b")
    apart = {m["name"]: m for m in board["not_ranked"]}
    assert set(apart) == {"D", "E"}
    assert (apart["D"]["rank"], apart["D"]["verdict"], apart["D"]["groups"]) == (
        None,
        "rejected",
        "",
    )
    assert apart["D"]["reasons"] == ["duplicate_items: item 1 twice"]
    assert apart["E"]["verdict"] == "unattested" and apart["E"]["rank"] is None
    assert apart["E"]["reasons"][0].startswith("unattested: a predictions file records no")
    assert models["A"]["ex"] == 1.0 and models["B"]["ex"] == pytest.approx(0.75)
    # A is 1.0 on every resample: its interval is the point; C's lies inside [0, 0.5].
    assert (models["A"]["ex_low"], models["A"]["ex_high"]) == (1.0, 1.0)
    assert 0.0 <= models["C"]["ex_low"] <= 1 / 6 <= models["C"]["ex_high"] <= 0.5
    # Healthy gold: items 1, 3, ..., 11 (six); B is right on 1, 3, 5, 7, 9 of them.
    assert models["B"]["ex_on_healthy_gold"] == pytest.approx(5 / 6)
    assert models["B"]["truncation_rate"] == pytest.approx(1 / 12)
    assert models["A"]["report"] == "verifications/A.html"
    # A is ahead in every resample; B can tie A (resamples of items 1-9 only) but never falls
    # below C unless every draw is an item both miss or both get, which has a tiny chance.
    assert (models["A"]["rank_low"], models["A"]["rank_high"]) == (1, 1)
    assert models["B"]["rank_low"] in (1, 2) and models["B"]["rank_high"] == 2


def test_categories_runs_on_other_data_and_the_page_escapes_names(tmp_path):
    runs = [
        verification(HOSTILE, [1, 0, 1, 0], categories=["physical", "physical", "math", "math"]),
        verification("plain", [0, 0, 1, 1], categories=["physical", "physical", "math", "math"]),
    ]
    data = leaderboard_data(runs, {r.run: "verifications/x.html" for r in runs})
    (board,) = data["tasks"]
    assert board["categories"] == ["math", "physical"]
    hostile = next(m for m in board["models"] if m["name"] == HOSTILE)
    assert hostile["by_category"]["physical"]["ex"] == 1 / 2
    assert hostile["by_category"]["math"]["ex"] == 1 / 2
    # Both 0.5 overall (rank 1, tied); on a category each ranks by its EX there.
    plain = next(m for m in board["models"] if m["name"] == "plain")
    assert hostile["rank"] == plain["rank"] == 1
    assert (
        hostile["by_category"]["physical"]["rank"],
        plain["by_category"]["physical"]["rank"],
    ) == (1, 2)
    assert (hostile["by_category"]["math"]["rank"], plain["by_category"]["math"]["rank"]) == (2, 1)
    from sqlbench_lmeval.submission.leaderboard import _write_csv

    _write_csv(data, tmp_path / "board.csv")
    rows = list(csv.DictReader((tmp_path / "board.csv").open(encoding="utf-8")))
    math_rows = {row["model"]: row for row in rows if row["category"] == "math"}
    assert (math_rows["plain"]["rank"], math_rows[HOSTILE]["rank"]) == ("1", "2")
    assert math_rows["plain"]["group"] == "" and math_rows["plain"]["rank_low"] == ""
    from sqlbench_lmeval.report.tables import to_markdown
    from sqlbench_lmeval.submission.leaderboard import _sections

    markdown = to_markdown("Leaderboard", _sections(data))
    # Markdown escapes (a viewer shows the text, renders no tag), never HTML entities.
    assert "\\</script\\>\\<img src=x" in markdown and "&lt;" not in markdown
    assert all(markdown[at - 1] == "\\" for at in range(len(markdown)) if markdown[at] == "<")
    page = render_leaderboard(data)
    # The name is inside the JSON block only, with <, > and & escaped.
    assert "</script><img" not in page and "<img" not in page
    assert json.loads(page.split('id="leaderboard-data">')[1].split("</script>")[0])["tasks"][0][
        "models"
    ][0]["name"] in (HOSTILE, "plain")


def test_written_files(tmp_path, monkeypatch):
    from sqlbench_lmeval.submission import leaderboard

    runs = {
        "A": verification("A", [1, 1, 1, 1]),
        "B": verification("B", [1, 0, 0, 0]),
    }
    monkeypatch.setattr(leaderboard, "read_submissions", lambda spec, **_: [spec])
    # Each "run" verifies to its hand-made verification; nothing reads a file. The cache is
    # keyed by content, which these stand-ins carry as their inputs.
    monkeypatch.setattr(
        leaderboard, "_cache_key", lambda inputs, limits, options=None, tasks=(): inputs
    )
    monkeypatch.setattr(
        leaderboard, "verify_submission", lambda submission, **options: runs[submission.name]
    )

    class Run:
        def __init__(self, name):
            self.name, self.inputs, self.tasks, self.source = name, f"content-{name}", (), name

    files = leaderboard.build_leaderboard([Run("A"), Run("B")], tmp_path, resamples=200)
    assert files.verified == ("A", "B") and files.cached == ()
    rows = list(csv.DictReader(files.csv.open(encoding="utf-8")))
    whole = [row for row in rows if row["category"] == ""]
    assert [(row["model"], row["rank"], row["ex"]) for row in whole] == [
        ("A", "1", "1.0"),
        ("B", "2", "0.25"),
    ]
    markdown = files.markdown.read_text(encoding="utf-8")
    assert "| 1 | 1–1 | a | A | 1.000 [1.000, 1.000] |" in markdown
    assert (tmp_path / "verifications").is_dir()
    assert len(list((tmp_path / "verifications").glob("A-*.html"))) == 1
    # A second build takes both from the cache.
    again = leaderboard.build_leaderboard([Run("A"), Run("B")], tmp_path, resamples=200)
    assert again.verified == () and again.cached == ("A", "B")


def test_a_run_of_the_logiccat_group_is_one_board_with_its_categories():
    # "whole" ran the group (its four category tasks); "part" ran logiccat_physical only.
    whole = group_verification(
        "whole",
        {
            "logiccat_physical": [1, 0],
            "logiccat_mathematical": [1, 1],
            "logiccat_commonsense": [0, 0],
            "logiccat_hypothetical": [1, 0],
        },
    )
    part = group_verification("part", {"logiccat_physical": [1, 1]})
    data = leaderboard_data([whole, part], {}, resamples=200)
    boards = {board["task"]: board for board in data["tasks"]}
    assert set(boards) == {"logiccat", "logiccat_physical"}
    (model,) = boards["logiccat"]["models"]
    assert (model["name"], boards["logiccat"]["n_items"], model["ex"]) == ("whole", 8, 0.5)
    assert {c: v["ex"] for c, v in model["by_category"].items()} == {
        "commonsense": 0.0,
        "hypothetical": 0.5,
        "mathematical": 1.0,
        "physical": 0.5,
    }
    assert [m["name"] for m in boards["logiccat_physical"]["models"]] == ["part"]


def test_verdict_groups_findings_summary_and_category_ranks_in_every_file(tmp_path):
    # Six items, 1-3 "physical", 4-6 "math". steady and mathy are verified; careless has one
    # finding (item 2 read no table) and is ranked with it; D (rejected: item 1 twice) and E
    # (unattested) answer every item and are listed apart.
    #   steady   1 1 1 1 1 0  EX 5/6  physical 1 (#1)    math 2/3 (#2)
    #   mathy    0 0 0 1 1 1  EX 1/2  physical 0 (#3)    math 1 (#1)
    #   careless 1 0 0 1 0 0  EX 1/3  physical 1/3 (#2)  math 1/3 (#3)
    from sqlbench_lmeval.report.tables import to_markdown
    from sqlbench_lmeval.submission.leaderboard import _sections, _write_csv

    categories = ["physical"] * 3 + ["math"] * 3
    finding = ("reads_no_table", "1 answer(s) read no table of the database", [2])
    runs = [
        verification("steady", [1, 1, 1, 1, 1, 0], categories=categories),
        verification("mathy", [0, 0, 0, 1, 1, 1], categories=categories),
        verification("careless", [1, 0, 0, 1, 0, 0], categories=categories, finding=finding),
        verification("D", [1] * 6, categories=categories, reject=True),
        verification("E", [1] * 6, categories=categories, unattested=True),
    ]
    data = leaderboard_data(runs, {}, resamples=200)
    (board,) = data["tasks"]
    assert board["verdicts"] == {
        "verified": ["mathy", "steady"],
        "verified with findings": ["careless"],
        "rejected": ["D"],
        "unattested": ["E"],
    }
    models = {m["name"]: m for m in board["models"]}
    assert [m["name"] for m in board["models"]] == ["steady", "mathy", "careless"]
    assert {name: m["by_category"]["physical"]["rank"] for name, m in models.items()} == {
        "steady": 1,
        "careless": 2,
        "mathy": 3,
    }
    assert {name: m["by_category"]["math"]["rank"] for name, m in models.items()} == {
        "mathy": 1,
        "steady": 2,
        "careless": 3,
    }
    (summary,) = models["careless"]["findings_summary"]
    assert (summary["code"], summary["items"], summary["text"]) == (
        "reads_no_table",
        1,
        "answers that do not read the data (1 item)",
    )
    assert models["steady"]["findings_summary"] == []
    apart = {m["name"]: m for m in board["not_ranked"]}
    assert [s["text"] for s in apart["D"]["findings_summary"]] == ["items answered twice (1 item)"]
    assert [s["text"] for s in apart["E"]["findings_summary"]] == [
        "nothing records how the outputs were made"
    ]

    _write_csv(data, tmp_path / "board.csv")
    rows = list(csv.DictReader((tmp_path / "board.csv").open(encoding="utf-8")))
    whole = {row["model"]: row for row in rows if row["category"] == ""}
    assert {name: (row["standing"], row["rank"]) for name, row in whole.items()} == {
        "steady": ("ranked", "1"),
        "mathy": ("ranked", "2"),
        "careless": ("ranked", "3"),
        "D": ("not ranked", ""),
        "E": ("not ranked", ""),
    }
    assert whole["careless"]["findings"] == "answers that do not read the data (1 item)"
    assert whole["steady"]["findings"] == "none"
    # Healthy gold: items 1, 3, 5 (the helper's odd items); careless is right on 1 of them.
    assert float(whole["careless"]["ex_on_healthy_gold"]) == pytest.approx(1 / 3)
    physical = {row["model"]: row["rank"] for row in rows if row["category"] == "physical"}
    assert physical == {"steady": "1", "careless": "2", "mathy": "3", "D": "", "E": ""}

    markdown = to_markdown("Leaderboard", _sections(data))
    assert (
        "Ranked: 2 verified, 1 verified with findings. "
        "Not ranked (listed apart): 1 rejected, 1 unattested." in markdown
    )
    careless_row = next(line for line in markdown.splitlines() if "| careless |" in line)
    # EX math then EX physical (categories sorted), each with the rank there.
    assert "| 0.333 (#3) | 0.333 (#2) |" in careless_row
    assert careless_row.endswith(
        "| verified with findings | answers that do not read the data (1 item) |"
    )
    assert "| EX [95% CI] | EX healthy gold |" in markdown  # beside EX

    from sqlbench_lmeval.submission.leaderboard import forest_plots

    # A plot of the whole task and one per category; none for a task no run is ranked on.
    assert set(forest_plots(data)["0"]) == {"", "math", "physical"}
    assert forest_plots(leaderboard_data(runs[3:], {}, resamples=50)) == {}


def test_the_forest_plot_draws_each_ranked_model_from_the_best_down():
    from sqlbench_lmeval.submission.leaderboard_plot import forest_figure, forest_plot

    categories = ["physical"] * 3 + ["math"] * 3
    # A name that would be broken TeX were it read as mathtext; HOSTILE is cut at 40 characters.
    steady = r"steady $\frac$"
    runs = [
        verification(HOSTILE, [1, 1, 1, 0, 0, 0], categories=categories),
        verification(steady, [1, 1, 1, 1, 1, 0], categories=categories),
        verification("mathy", [0, 0, 0, 1, 1, 1], categories=categories, finding=("x", "m", [])),
    ]
    (board,) = leaderboard_data(runs, {}, resamples=200)["tasks"]

    def drawn(category=None):
        (axes,) = forest_figure(board["models"], "t", category).axes
        labels = [label.get_text() for label in axes.get_yticklabels()]
        # Each row: its interval line, then its marker (a one-point line) at EX.
        points = [line.get_xdata()[0] for line in axes.lines if len(line.get_xdata()) == 1]
        return labels, points

    labels, points = drawn()
    # steady 5/6 first; HOSTILE and mathy tie at 1/2 (rank 2), by name; the name is plain text.
    assert labels == [f"1  {steady}", f"2  {HOSTILE[:39]}…", "2  mathy"]
    assert points == pytest.approx([5 / 6, 1 / 2, 1 / 2])
    # On "math": mathy 1 (#1), steady 2/3 (#2), HOSTILE 0 (#3).
    assert drawn("math") == (["1  mathy", f"2  {steady}", f"3  {HOSTILE[:39]}…"], [1.0, 2 / 3, 0.0])
    uri = forest_plot(board["models"], "t")
    assert uri.startswith("data:image/svg+xml;base64,") and uri == forest_plot(board["models"], "t")
