"""``verify`` on a sampled task (``tpcds_sc``: 8 answers per item at temperature 0.7): its own
sampling settings are not a finding, every sample is re-scored, and the voted numbers the run
claims (``ex_maj``, ``pass_at_k``, ...) agree with ours. A real ``lm_eval`` run of a scripted
model (``support.verify_runs``) on the first 2 items; the 97 others are missing."""

from __future__ import annotations

import pytest
from support.verify_runs import run_tpcds

from sqlbench_lmeval.submission.logged import read_submissions
from sqlbench_lmeval.submission.verify import verify_submission

pytestmark = pytest.mark.slow


def test_a_sampled_run_verifies_with_its_own_settings(tpcds_cache, tpcds_items, tmp_path):
    cache = tpcds_cache
    folder = run_tpcds(
        tmp_path / "lm", cache, tpcds_items, {}, task="tpcds_sc", extra_args=["--limit", "2"]
    )
    (submission,) = read_submissions(str(folder))
    (logged,) = submission.tasks
    assert [len(answer.outputs) for answer in logged.answers] == [8, 8]
    verification = verify_submission(submission, cache_dir=cache, workers=2)
    (task,) = verification.tasks
    problems = {f.code: f.items for f in task.findings if f.severity != "info"}
    assert set(problems) == {"missing_items"} and len(problems["missing_items"]) == 97
    # Eight wrong answers per item: no vote wins gold, no sample is right.
    assert task.metrics_logged["ex_maj"] == 0 and task.metrics_logged["pass_at_8"] == 0
    assert task.metrics_logged["n"] == 2 and task.facts["repeats"] == 8
