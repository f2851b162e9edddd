"""The report counts, per run, how each answer's reading of the data was decided
(``data_dependence``), beside the outcomes table's "Reads no data" column (the flagged ones)."""

from sqlbench_lmeval.report import read_runs, write_report
from sqlbench_lmeval.report.sections.outcomes import failure_rows


def test_data_dependence_verdicts_are_counted_per_run(score_item, write_score_file, tmp_path):
    # Run "mixed": two constants (one names no table, one dressed up as a query), three
    # answers that read the data, one the test could not decide, one wrong answer (not run
    # again: no verdict). Run "plain": scored before the test existed (no field at all).
    mixed = [
        score_item(1, 1, data_dependence="no_table", reads_no_table=True),
        score_item(2, 1, data_dependence="differs", reads_no_table=True),
        score_item(3, 1, data_dependence="changed"),
        score_item(4, 1, data_dependence="changed"),
        score_item(5, 1, data_dependence="changed"),
        score_item(6, 1, data_dependence="undecidable"),
        score_item(7, 0, data_dependence=None),
    ]
    plain = [score_item(i, 1) for i in range(1, 8)]
    runs = read_runs(
        [f"mixed={write_score_file('mixed', mixed)}", f"plain={write_score_file('plain', plain)}"]
    )
    rows = {row.run: row for row in failure_rows(runs)}
    assert rows["mixed"].reads_no_table == 2
    assert rows["mixed"].data_dependence == {
        "no_table": 1,
        "differs": 1,
        "changed": 3,
        "undecidable": 1,
    }
    assert rows["plain"].data_dependence == {}
    text = write_report(runs, tmp_path / "report", resamples=100).markdown.read_text("utf-8")
    # The outcomes table: gold not ok 0, the two flagged answers, no errors.
    assert "| Gold not ok | Reads no data | Top error kinds |" in text
    (outcomes,) = [line for line in text.splitlines() if line.startswith("| mixed | 7 |")]
    assert outcomes.endswith("| 0 | 2 | – |")
    header = (
        "| Run | No table named | Not gold's on a copy | Unchanged on the copy | "
        "Changed (reads the data) | Undecidable | Not tested |"
    )
    assert header in text
    assert "| mixed | 1 | 1 | 0 | 3 | 1 | 0 |" in text
    assert "| plain | 0 | 0 | 0 | 0 | 0 | 0 |" in text


def test_no_table_of_data_dependence_when_no_answer_was_judged(
    score_item, write_score_file, tmp_path
):
    runs = read_runs([f"old={write_score_file('old', [score_item(1, 1), score_item(2, 0)])}"])
    text = write_report(runs, tmp_path / "report", resamples=100).markdown.read_text("utf-8")
    assert "| Run | No table named |" not in text
