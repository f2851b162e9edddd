"""Holm-adjusted p-values of the paired tests when more than two runs are compared."""

from __future__ import annotations

import pytest

from sqlbench_lmeval.report import read_runs, write_report
from sqlbench_lmeval.report.sections.pairs import pair_rows
from sqlbench_lmeval.report.stats import holm


def test_holm_by_hand():
    # Sorted: 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04, but never below the step
    # before it: 0.06). Returned in the input order.
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    # Capped at 1, and still monotone: 0.5 x 2 = 1.0, then max(1.0, 0.6) = 1.0.
    assert holm([0.5, 0.6]) == [1.0, 1.0]
    assert holm([0.2]) == [0.2]  # one test: nothing to adjust
    assert holm([]) == []


@pytest.fixture
def three_runs(score_item, write_score_file):
    """Six items. A gets all right, B items 1-2, C items 1-5 (ids 1..6)."""
    right = {"A": {1, 2, 3, 4, 5, 6}, "B": {1, 2}, "C": {1, 2, 3, 4, 5}}
    return [
        str(write_score_file(name, [score_item(i, i in ids) for i in range(1, 7)]))
        for name, ids in right.items()
    ]


def test_pairs_of_three_runs_get_holm_p_values(three_runs, tmp_path):
    # Exact McNemar: A vs B has 4 discordant items all for A: 2 * (1/2)^4 = 0.125.
    # A vs C: 1 discordant item: 2 * 1/2 = 1.0. B vs C: 3, all for C: 2 * (1/2)^3 = 0.25.
    # Holm over m = 3: 0.125 x 3 = 0.375; 0.25 x 2 = 0.5; 1.0 x 1 = 1.0 (monotone already).
    rows = pair_rows(read_runs(three_runs), resamples=200)
    found = {(row.a, row.b): (row.p_value, row.p_holm) for row in rows}
    assert found == {
        ("A", "B"): pytest.approx((0.125, 0.375)),
        ("A", "C"): pytest.approx((1.0, 1.0)),
        ("B", "C"): pytest.approx((0.25, 0.5)),
    }
    markdown = write_report(read_runs(three_runs), tmp_path / "r", resamples=200).markdown
    text = markdown.read_text(encoding="utf-8")
    assert "| McNemar p | Holm p |" in text
    assert "| 4 | 0 | 0.125 | 0.375 |" in text
    assert "adjusted for the 3 comparisons" in text


def test_two_runs_show_no_holm_column(three_runs, tmp_path):
    runs = read_runs(three_runs[:2])
    (pair,) = pair_rows(runs, resamples=200)
    assert pair.p_holm == pair.p_value  # one comparison: Holm changes nothing
    text = write_report(runs, tmp_path / "r", resamples=200).markdown.read_text(encoding="utf-8")
    assert "Holm p" not in text
