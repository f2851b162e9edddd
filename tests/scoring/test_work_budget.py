"""The rule for an answer that runs out of time where the engine counts work as it runs
(docs/failures.md#an-answer-that-runs-out-of-time): an answer stopped at its work budget is
``timeout`` as it is, naming the budget; one that ran past the clock first runs again alone under
gold's time limit, so that the budget decides; without a budget the rule of gold's time
applies; an answer's run on a perturbed copy gets the budget times the copy's size. Real SQLite
files and real worker processes."""

from __future__ import annotations

from sqlbench_lmeval.execution import Database, Job, Limits, Outcome, Status
from sqlbench_lmeval.execution.deadline import over_budget
from sqlbench_lmeval.scoring.data_dependence import copy_limits
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.timeouts import RULE, settle, still_late, timed_out_line

LOOP = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
GOLD = "SELECT name FROM pump ORDER BY name"


def score(database: Database, limits: Limits) -> list[dict]:
    """A looping answer to item 1 and gold's own SQL to item 2, both of gold ``GOLD``."""
    items = [Item(n, f"question {n}", database, GOLD, "sqlite", "physical", "ok") for n in (1, 2)]
    return Scorer(limits=limits, workers=1, progress=False).score(items, [LOOP, GOLD])


def test_an_answer_stopped_at_its_budget_stands_as_it_is(pumps):
    stopped = over_budget(1 << 20, "VM steps", 0.0)
    # settle runs nothing for it: no pool, no workers asked, the very outcome back.
    assert settle(Job(pumps, LOOP), Job(pumps, GOLD), stopped, Limits()) is stopped
    scores = score(pumps, Limits(timeout_s=300, work_budget=1 << 20))
    assert [(s["status"], s["ex"]) for s in scores] == [("timeout", 0), ("ok", 1)]
    assert scores[0]["error"] == "stopped at its work budget of 1,048,576 VM steps"


def test_an_answer_past_the_clock_runs_again_until_the_budget_decides(pumps):
    # No machine takes 2**23 VM steps within 10 ms: the first run stops at the clock, the run
    # again alone (gold's 60 s) at the budget, and the error is the budget's, as on any load.
    scores = score(pumps, Limits(timeout_s=0.01, work_budget=1 << 23))
    assert [(s["status"], s["ex"]) for s in scores] == [("timeout", 0), ("ok", 1)]
    assert scores[0]["error"] == "stopped at its work budget of 8,388,608 VM steps"
    assert timed_out_line(scores) == (
        f"1 answer(s) timed out: items 1 at their work budget of 8,388,608 VM steps "
        f"(the rule: {RULE})"
    )


def test_without_a_budget_the_rule_of_golds_time_applies(pumps):
    scores = score(pumps, Limits(timeout_s=0.05, work_budget=None))
    assert scores[0]["status"] == "timeout" and scores[0]["error"] == still_late(0.05)
    assert "three times its gold's time" in scores[0]["error"]


def test_the_line_names_each_rule_that_applied():
    scores = [
        {"id": 1, "status": "timeout", "error": over_budget(1 << 28, "VM steps", 0.0).error},
        {"id": 2, "status": "timeout", "error": still_late(10.0)},
        {"id": 3, "status": "timeout", "error": still_late(10.0, measured=False, budget=True)},
        {"id": 4, "status": "timeout", "error": over_budget(1 << 28, "VM steps", 0.0).error},
        {"id": 5, "status": "ok"},
    ]
    assert timed_out_line(scores) == (
        "4 answer(s) timed out: items 1, 4 at their work budget of 268,435,456 VM steps; "
        "items 2 under the answers' limit of 10 s (or three times gold's time, where longer), "
        "also when run again alone on a fresh worker; items 3 under the answers' limit of 10 s "
        "(then gold's, within the work budget), also when run again alone on a fresh worker "
        f"(the rule: {RULE})"
    )
    assert timed_out_line([{"id": 5, "status": "ok"}]) is None


def test_a_copy_scales_the_budget_with_the_time_limit(tmp_path):
    for name, size in (("a.db", 1000), ("b.db", 1900)):
        (tmp_path / name).write_bytes(bytes(size))
    original, copy = (Database("sqlite", str(tmp_path / n)) for n in ("a.db", "b.db"))
    scaled = copy_limits(Limits(timeout_s=10, work_budget=1000), original, copy)
    assert (scaled.timeout_s, scaled.work_budget, scaled.count_work) == (20.0, 2000, False)
    assert copy_limits(Limits(work_budget=None), original, copy).work_budget is None


def test_a_stop_at_the_clock_is_not_a_stop_at_the_budget(pumps):
    # Only an outcome whose error is the budget's stands without a second run.
    late = Outcome(Status.TIMEOUT, error="stopped after 0.01 s")
    again = settle(Job(pumps, GOLD), None, late, Limits(timeout_s=0.01))
    assert again.status is Status.OK and again.rows == (("A",), ("B",))
