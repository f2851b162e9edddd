"""The report says how many correct answers got an r_ves bucket that a work count of 0 picked
(docs/r-ves.md, "Resolution"): the counts are each item's logged ``work`` and ``gold_work``."""

import math

from sqlbench_lmeval.report import read_runs, write_report
from sqlbench_lmeval.report.sections.scores import r_ves_unresolved


def test_answers_whose_bucket_a_zero_count_picked_are_counted(
    score_item, write_score_file, tmp_path
):
    # MariaDB counts rows read; r_ves takes a 0 as one unit. Per item, gold's and the
    # answer's counts, and whether the counts alone pick the bucket:
    items = [
        # 0 and 0: ratio 1 by the convention; two queries under one row each could be any ratio.
        score_item(1, 1, r_ves=1.0, work=0, gold_work=0),
        # the answer's 0 beside gold's 3: any work under a row is a ratio above 3, bucket 1.25.
        score_item(2, 1, r_ves=math.sqrt(1.25), work=0, gold_work=3),
        # gold's 0 beside the answer's 2: ratio 0.5 by the convention, anything under it truly.
        score_item(3, 1, r_ves=math.sqrt(0.75), work=2, gold_work=0),
        # gold's 0 beside the answer's 5: under 0.2 either way, bucket 0.25.
        score_item(4, 1, r_ves=0.5, work=5, gold_work=0),
        # wrong, and a flagged constant: r_ves 0 whatever the counts.
        score_item(5, 0, r_ves=0.0, work=0, gold_work=0),
        score_item(6, 1, r_ves=0.0, work=0, gold_work=0, reads_no_table=True),
        # both counted: resolved.
        score_item(7, 1, r_ves=1.0, work=40, gold_work=41),
    ]
    runs = read_runs([f"m={write_score_file('m', items, engine='mysql')}"])
    assert r_ves_unresolved(runs[0].tasks[0].items) == 2  # items 1 and 3
    text = write_report(runs, tmp_path / "report", resamples=100).markdown.read_text("utf-8")
    assert (
        "R-VES (work) of m: on 2 correct answer(s) a work count of 0, taken as one unit, "
        'picked the bucket, not the queries (docs/r-ves.md, "Resolution").'
    ) in text


def test_no_note_when_every_count_resolves_its_bucket(score_item, write_score_file, tmp_path):
    items = [score_item(1, 1, r_ves=1.0, work=9, gold_work=9)]
    runs = read_runs([f"m={write_score_file('m', items, engine='sqlite')}"])
    text = write_report(runs, tmp_path / "report", resamples=100).markdown.read_text("utf-8")
    assert "picked the bucket" not in text
