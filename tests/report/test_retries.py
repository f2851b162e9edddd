"""The report's "valid after r retries" table and retries histogram, on planned attempts.

Each item's attempts are planned as outcomes: ``correct`` (ran, same result as gold),
``wrong`` (ran, different result), ``error``, ``no_sql``. The repair loop stops at the first
attempt that ran, so a plan ends at its first correct/wrong outcome. The score dict follows
from the plan by the metric definitions (``plan_score``); the table's numbers are counted by
hand below, per run.
"""

from __future__ import annotations

from sqlbench_lmeval.report import read_runs, write_report
from sqlbench_lmeval.report.sections.retries import retry_rows

RAN = ("correct", "wrong")

# Run A: item -> attempts. Valid at (retries): 1->0, 2->0, 3->1, 4->2, 5 never, 6->3.
PLAN_A = {
    1: ["correct"],
    2: ["wrong"],
    3: ["error", "correct"],
    4: ["error", "error", "wrong"],
    5: ["error", "error", "error", "error"],
    6: ["no_sql", "no_sql", "error", "correct"],
}
# Run B: valid at 1->1, 2->0, 3->0, 4 never, 5->1, 6->0.
PLAN_B = {
    1: ["error", "correct"],
    2: ["wrong"],
    3: ["correct"],
    4: ["error", "error"],
    5: ["no_sql", "wrong"],
    6: ["correct"],
}


def plan_score(score_item, item_id: int, attempts: list[str]) -> dict:
    """The score dict of a planned item: the first attempt gives ves/ex and the status, the
    last one ves@retry/ex@retry."""
    first, last = attempts[0], attempts[-1]
    return score_item(
        item_id,
        first == "correct",
        "ok" if first in RAN else first,
        category="c",
        **{"ves@retry": int(last in RAN), "ex@retry": int(last == "correct")},
        retries_used=len(attempts) - 1,
        final_status="ok" if last in RAN else last,
        attempts=[{"output": outcome} for outcome in attempts],
    )


def test_valid_after_r_retries_counts_and_histogram(write_score_file, score_item, tmp_path):
    runs = read_runs([
        f"{name}={write_score_file(name, [plan_score(score_item, i, a) for i, a in plan.items()])}"
        for name, plan in (("A", PLAN_A), ("B", PLAN_B))
    ])  # fmt: skip
    a, b = retry_rows(runs)
    # A, valid after r (cumulative): r0 items 1,2 -> 2; r1 +3 -> 3; r2 +4 -> 4; r3 +6 -> 5.
    # The view's largest r is 3 (A's items 5 and 6), so B's row has four columns too:
    # B: r0 items 2,3,6 -> 3; r1 +1,5 -> 5; then 5, 5.
    assert (a.run, a.n, a.valid_after, a.never_valid) == ("A", 6, (2, 3, 4, 5), 1)
    assert (b.run, b.n, b.valid_after, b.never_valid) == ("B", 6, (3, 5, 5, 5), 1)
    # EX: A's first attempts correct only for item 1; last attempts for 1, 3, 6.
    # B's first: 3, 6; last: 1, 3, 6.
    assert (a.ex_first, a.ex_after) == (1 / 6, 3 / 6)
    assert (b.ex_first, b.ex_after) == (2 / 6, 3 / 6)
    # Histogram, retries used = len(attempts) - 1: A 0,0,1,2,3,3; B 1,0,0,1,1,0.
    assert a.retries_used == (2, 1, 1, 2)
    assert b.retries_used == (3, 3, 0, 0)

    files = write_report(runs, tmp_path / "report", resamples=200)
    text = files.markdown.read_text(encoding="utf-8")
    assert "## Retried runs: valid after r retries" in text
    assert (
        "| A | 6 | 2 (33.3%) | 3 (50.0%) | 4 (66.7%) | 5 (83.3%) | 1 (16.7%) | 0.167 | 0.500 |"
        in text
    )
    assert (
        "| B | 6 | 3 (50.0%) | 5 (83.3%) | 5 (83.3%) | 5 (83.3%) | 1 (16.7%) | 0.333 | 0.500 |"
        in text
    )
    histogram = tmp_path / "report" / "retries-logiccat.png"
    assert histogram in files.images
    assert histogram.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_runs_without_retries_have_no_retry_section(write_score_file, score_item, tmp_path):
    items = [score_item(i, a[0] == "correct", "ok" if a[0] in RAN else a[0])
             for i, a in PLAN_A.items()]  # fmt: skip
    runs = read_runs([str(write_score_file("plain", items))])
    assert retry_rows(runs) == []
    files = write_report(runs, tmp_path / "report", resamples=200)
    assert "Retried runs" not in files.markdown.read_text(encoding="utf-8")
    assert not any(image.name.startswith("retries-") for image in files.images)
