"""``sqlbench-lmeval report``: the numbers in the tables equal those computed by hand, the
charts are real images, and runs that cannot be compared are refused."""

import base64
import math
import re

import pytest
from PIL import Image

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.report import read_runs, write_report
from sqlbench_lmeval.report.analysis import error_kind
from sqlbench_lmeval.report.sections.complexity import complexity_rows
from sqlbench_lmeval.report.sections.outcomes import failure_rows
from sqlbench_lmeval.report.sections.pairs import pair_rows
from sqlbench_lmeval.report.sections.scores import score_rows
from sqlbench_lmeval.report.sections.similarity import similarity_rows

PHYSICAL, MATHEMATICAL = range(1, 5), range(5, 11)


def _category(item_id):
    return "physical" if item_id in PHYSICAL else "mathematical"


@pytest.fixture
def two_runs(score_item, write_score_file):
    """Ten LogicCat items. A: 7 right (3 of 4 physical). B: 2 right, both also right in A, so
    A alone is right on 5 items and B alone on none (McNemar b=5, c=0)."""
    a_ex = {1: 1, 2: 1, 3: 1, 4: 0, 5: 1, 6: 1, 7: 1, 8: 1, 9: 0, 10: 0}
    a_status = {9: "error", 10: "timeout"}
    a_errors = {9: "no such column: foo"}
    b_status = {1: "no_sql", 2: "error", 3: "error", 9: "missing", 10: "too_many_rows"}
    b_errors = {2: 'near "SELEC": syntax error', 3: "no such column: bar"}
    b_right = {7, 8}
    a = [
        score_item(
            i,
            a_ex[i],
            a_status.get(i, "ok"),
            category=_category(i),
            error=a_errors.get(i),
        )
        for i in range(1, 11)
    ]
    b = [
        score_item(
            i,
            int(i in b_right),
            b_status.get(i, "ok"),
            category=_category(i),
            error=b_errors.get(i),
        )
        for i in range(1, 11)
    ]
    return write_score_file("A", a), write_score_file("B", b)


def _score(rows, run, category=None, view="logiccat"):
    (row,) = [row for row in rows if (row.run, row.category, row.view) == (run, category, view)]
    return row


def test_score_table_numbers_equal_hand_counts(two_runs):
    rows = score_rows(read_runs(map(str, two_runs)), resamples=500)
    a, b = _score(rows, "A"), _score(rows, "B")
    assert a.n == b.n == 10
    assert a.intervals["ex"].mean == 0.7
    assert a.intervals["ves"].mean == 0.8  # items 9 (error) and 10 (timeout) did not run
    assert b.intervals["ex"].mean == 0.2
    assert b.intervals["ves"].mean == 0.5  # 4, 5, 6, 7, 8 ran
    assert _score(rows, "A", "physical").intervals["ex"].mean == 0.75  # 3 of 4
    assert _score(rows, "A", "mathematical").intervals["ex"].mean == pytest.approx(4 / 6)
    assert _score(rows, "B", "physical").intervals["ex"].mean == 0.0
    for row in rows:
        for interval in row.intervals.values():
            assert interval.low <= interval.mean <= interval.high
    assert "structural_similarity" not in a.intervals  # LogicCat has none


def test_paired_comparison_counts_discordant_items(two_runs):
    (pair,) = pair_rows(read_runs(map(str, two_runs)), resamples=500)
    assert (pair.a, pair.b, pair.n_common) == ("A", "B", 10)
    assert (pair.ex_a, pair.ex_b) == (0.7, 0.2)
    assert pair.difference.mean == pytest.approx(0.5)
    assert 0.0 < pair.difference.low <= 0.5 <= pair.difference.high <= 1.0
    assert (pair.a_only_correct, pair.b_only_correct) == (5, 0)
    assert pair.p_value == 0.0625


def test_failure_breakdown_counts_every_outcome(two_runs):
    by_run = {row.run: row for row in failure_rows(read_runs(map(str, two_runs)))}
    a, b = by_run["A"], by_run["B"]
    assert {k: v for k, v in a.outcomes.items() if v} == {
        "correct": 7,
        "wrong_result": 1,
        "error": 1,
        "timeout": 1,
    }
    assert {k: v for k, v in b.outcomes.items() if v} == {
        "correct": 2,
        "wrong_result": 3,
        "error": 2,
        "no_sql": 1,
        "missing": 1,
        "too_many_rows": 1,
    }
    assert a.error_kinds == (("no such column", 1),)
    assert b.error_kinds == (("no such column", 1), ("syntax error", 1))


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("no such column: t.x", "no such column"),
        ('near "FROM": syntax error', "syntax error"),
        ('Binder Error: Referenced column "x" not found', "Binder Error"),
        ('Parser Error: syntax error at or near "SELEC"', "syntax error"),
        ("misuse of aggregate: max()", "misuse of aggregate"),
        # MariaDB / MySQL through PyMySQL: the server's error code kept, names dropped.
        (
            "(1064) You have an error in your SQL syntax; check the manual near 'FROM'",
            "syntax error",
        ),
        ("(1146) Table 'school.staff' doesn't exist", "(1146) Table … doesn't exist"),
        ("(1242) Subquery returns more than 1 row", "(1242) Subquery returns more than 1 row"),
        (None, "(no message)"),
    ],
)
def test_error_kinds_drop_names_and_values(message, kind):
    assert error_kind(message) == kind


def test_report_files_tables_and_charts(two_runs, tmp_path):
    files = write_report(read_runs(map(str, two_runs)), tmp_path / "out", resamples=300)
    markdown = files.markdown.read_text(encoding="utf-8")
    page = files.html.read_text(encoding="utf-8")
    assert "| A | physical | 4 | 1.000 [1.000, 1.000] | 0.750 [" in markdown
    assert "| A | B | 10 (A 10, B 10) | 0.700 | 0.200 | +0.500 [" in markdown
    assert "| 5 | 0 | 0.0625 |" in markdown
    assert "300 resamples" in markdown
    names = sorted(path.name for path in files.images)
    assert names == [
        "categories-logiccat.png",
        "outcomes-logiccat.png",
        "paired-logiccat.png",
        "result-EX.png",
        "scores-logiccat.png",
    ]
    # The page embeds every chart (one file to share); the Markdown links the PNGs beside it.
    embedded = [
        base64.b64decode(source)
        for source in re.findall(r'<img src="data:image/png;base64,([^"]+)"', page)
    ]
    assert sorted(embedded) == sorted(path.read_bytes() for path in files.images)
    for path in files.images:
        assert f"]({path.name})" in markdown  # referenced relative to the report
        assert path.name not in page
        _assert_real_image(path)
    assert "<script" not in page and "http" not in page.split("</title>")[1]
    # The table of contents links every section heading, and each target exists once.
    contents = page.split('<nav class="toc">')[1].split("</nav>")[0]
    targets = re.findall(r'href="#([^"]+)"', contents)
    assert "Scores" in contents and len(targets) == len(set(targets)) > 3
    for target in targets:
        assert page.count(f' id="{target}"') == 1


def _assert_real_image(path):
    with Image.open(path) as image:
        assert image.format == "PNG"
        assert image.width > 300 and image.height > 150
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
        assert colours is not None and len(colours) > 20  # not blank, not a single colour


def test_a_mismatched_comparison_version_is_refused(score_item, write_score_file, tmp_path):
    old = write_score_file("old", [score_item(1, 1, version="1")], version="1")
    new = write_score_file("new", [score_item(1, 1, version="2")], version="2")
    with pytest.raises(UserError) as caught:
        write_report(read_runs([str(old), str(new)]), tmp_path / "refused")
    message = str(caught.value)
    assert "'old' (comparison version 1)" in message
    assert "'new' (comparison version 2)" in message
    assert not (tmp_path / "refused").exists()


def test_a_mismatched_dataset_version_is_refused(score_item, write_score_file, tmp_path):
    one = write_score_file("one", [score_item(1, 1)], dataset="logiccat-abc-builder1")
    two = write_score_file("two", [score_item(1, 1)], dataset="logiccat-abc-builder2")
    with pytest.raises(UserError, match="logiccat-abc-builder1 vs logiccat-abc-builder2"):
        write_report(read_runs([str(one), str(two)]), tmp_path / "refused")


def test_only_items_in_both_runs_are_compared(score_item, write_score_file, tmp_path):
    full = write_score_file("full", [score_item(i, 1) for i in range(1, 7)])
    part = write_score_file("part", [score_item(i, 0) for i in (1, 2, 3, 99)])
    runs = read_runs([str(full), str(part)])
    (pair,) = pair_rows(runs, resamples=200)
    assert (pair.n_a, pair.n_b, pair.n_common) == (6, 4, 3)
    assert (pair.a_only_correct, pair.b_only_correct, pair.difference.mean) == (3, 0, 1.0)
    markdown = write_report(runs, tmp_path / "r", resamples=200).markdown.read_text()
    assert "full has 6 items and part has 4: only the 3 items present in both are compared" in (
        markdown
    )


def test_tpcds_similarity_and_complexity_ratios(score_item, write_score_file, tmp_path):
    def item(i, ex, tables, joins, gold_joins, parsed=1.0):
        return score_item(
            i,
            ex,
            parsed=parsed,
            sim_tables=tables,
            sim_joins=1.0,
            structural_similarity=(tables + 1.0) / 2,
            join_count=joins,
            gold_join_count=gold_joins,
            cte_count=0.0,
            gold_cte_count=0.0,
        )

    model = write_score_file(
        "m",
        [
            item(1, 1, 1.0, 2.0, 2.0),
            item(2, 0, 0.5, 4.0, 2.0),
            # unparseable: counted as 0 (as TPC-DS does), left out of the complexity means
            item(3, 0, 0.0, 0.0, 10.0, parsed=0.0),
        ],
        task="tpcds",
    )
    files = write_report(read_runs([str(model)]), tmp_path / "t", resamples=200)
    runs = read_runs([str(model)])
    (similarity,) = similarity_rows(runs)
    assert list(similarity.features) == ["sim_tables", "sim_joins"]  # the paper's column order
    assert similarity.features["sim_tables"] == pytest.approx(0.5)
    assert similarity.average == pytest.approx(0.75)
    (complexity,) = complexity_rows(runs)
    assert complexity.counts["join_count"] == (3.0, 2.0, 2)
    assert complexity.ratio("join_count") == 1.5
    assert math.isnan(complexity.ratio("cte_count"))  # 0 / 0: no ratio
    scores = score_rows(runs, resamples=200)
    assert _score(scores, "m", view="tpcds").intervals["structural_similarity"].mean == 0.75
    markdown = files.markdown.read_text()
    assert "| m | 3 | 0.500 | 1.000 | 0.750 | – | 0.667 |" in markdown
    assert "1.50 (3.00 / 2.00)" in markdown
    names = {path.name for path in files.images}
    assert {"similarity-tpcds.png", "complexity-tpcds.png"} <= names
    for path in files.images:
        _assert_real_image(path)


def test_report_over_lmeval_folders(write_lmeval_run, score_item, tmp_path):
    def run(model, ex):
        return write_lmeval_run(
            model,
            {
                "logiccat_physical": [score_item(i, ex[i], category="physical") for i in (1, 2)],
                "logiccat_mathematical": [
                    score_item(i, ex[i], category="mathematical") for i in (3, 4)
                ],
            },
            groups={"logiccat": ["logiccat_physical", "logiccat_mathematical"]},
            output=tmp_path / model,
        )

    first = run("first", {1: 1, 2: 1, 3: 1, 4: 0})
    second = run("second", {1: 0, 2: 1, 3: 0, 4: 0})
    runs = read_runs([str(first), str(second)])
    scores = score_rows(runs, resamples=200)
    assert _score(scores, "first").intervals["ex"].mean == 0.75
    assert _score(scores, "first", "physical").intervals["ex"].mean == 1.0
    assert _score(scores, "second", view="logiccat_mathematical").intervals["ex"].mean == 0.0
    group_pair = next(pair for pair in pair_rows(runs, resamples=200) if pair.view == "logiccat")
    assert (group_pair.n_common, group_pair.a_only_correct, group_pair.b_only_correct) == (4, 2, 0)
    assert group_pair.p_value == 0.5
    files = write_report(read_runs([str(first), str(second)]), tmp_path / "r", resamples=200)
    # Every view gets tables; only the group gets charts (its tasks are its categories).
    assert "### logiccat_physical" in files.markdown.read_text()
    # The Result section shows the group, which stands for its tasks: first 3 of 4, second 1.
    result = files.markdown.read_text().split("## Runs")[0]
    assert "| logiccat | first | 4 | 0.750 [" in result
    assert "| logiccat | second | 4 | 0.250 [" in result
    assert "logiccat_physical" not in result
    assert sorted(path.name for path in files.images) == [
        "categories-logiccat.png",
        "outcomes-logiccat.png",
        "paired-logiccat.png",
        "result-EX.png",
        "scores-logiccat.png",
    ]


def test_cli_writes_the_report(two_runs, tmp_path, capsys):
    a, b = two_runs
    out = tmp_path / "cli"
    assert main(["report", f"model A={a}", str(b), "--output", str(out), "--resamples", "200"]) == 0
    assert "report on model A, B" in capsys.readouterr().out
    assert (out / "report.md").is_file() and (out / "report.html").is_file()
    assert "| model A | B |" in (out / "report.md").read_text()


def test_cli_refuses_mismatched_versions(score_item, write_score_file, tmp_path, capsys):
    old = write_score_file("old", [score_item(1, 1, version="1")], version="1")
    new = write_score_file("new", [score_item(1, 1, version="2")], version="2")
    assert main(["report", str(old), str(new), "--output", str(tmp_path / "x")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("sqlbench-lmeval report: error: cannot compare 'old'")
    assert "comparison version 1" in error and "comparison version 2" in error
    # The output folder is made before any work; nothing is written into it.
    assert not (tmp_path / "x").exists()  # the folder it made for the output is removed


def test_tables_follow_the_papers_column_orders():
    from sqlbench_lmeval.report.analysis import COUNT_METRICS, FEATURE_METRICS, present
    from sqlbench_lmeval.scoring.scored import ScoredItem

    # The TPC-DS paper's Table 2 (features) and Table 1 (complexity counts) column orders.
    table_2 = ("tables", "columns", "where_predicates", "constants", "functions")
    table_2 += ("aggregation", "joins")
    table_1 = ("distinct_column", "join", "where_predicate", "cte", "function_call", "subquery")
    assert FEATURE_METRICS == tuple(f"sim_{feature}" for feature in table_2)
    assert COUNT_METRICS == tuple(f"{count}_count" for count in table_1)
    # Whatever order the items hold them in.
    numbers = dict.fromkeys(sorted(FEATURE_METRICS, reverse=True), 0.5)
    item = ScoredItem.from_score({"id": 1, "status": "ok", "ves": 1, "ex": 0, **numbers})
    assert present(FEATURE_METRICS, [item]) == list(FEATURE_METRICS)


def test_a_single_run_has_no_paired_section(score_item, write_score_file, tmp_path):
    only = write_score_file("only", [score_item(1, 1), score_item(2, 0)])
    files = write_report(read_runs([str(only)]), tmp_path / "one", resamples=200)
    markdown = files.markdown.read_text()
    assert "## Paired comparisons" not in markdown
    assert "| only | all | 2 | 1.000 [1.000, 1.000] | 0.500 [" in markdown


def test_runs_without_common_items_compare_nothing(score_item, write_score_file, tmp_path):
    a = write_score_file("a", [score_item(1, 1)])
    b = write_score_file("b", [score_item(2, 1)])
    runs = read_runs([str(a), str(b)])
    (pair,) = pair_rows(runs, resamples=200)
    assert (pair.n_common, pair.p_value) == (0, 1.0)
    assert math.isnan(pair.difference.mean)
    markdown = write_report(runs, tmp_path / "none", resamples=200).markdown.read_text()
    assert "only the 0 items present in both are compared" in markdown
