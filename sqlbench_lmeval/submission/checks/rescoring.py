"""Re-scoring: the numbers a run claims, per item (the logged score dict and the numbers
beside it) and in aggregate (the results file), against ours; each mismatch names its items and
the likely cause, and only a benign named cause (another comparison version, a time limit, gold
that calls RAND()) leaves the run standing."""

from __future__ import annotations

import math
from collections.abc import Mapping
from statistics import fmean

from sqlbench_lmeval.execution import Status
from sqlbench_lmeval.execution.outcome import UNFINISHED
from sqlbench_lmeval.scoring.answer import UNREPEATABLE_FLAGS
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION
from sqlbench_lmeval.scoring.metrics import EX, VES
from sqlbench_lmeval.scoring.scored import ScoredItem, is_number
from sqlbench_lmeval.scoring.verdicts import aggregate
from sqlbench_lmeval.submission.checks.base import (
    FINDING,
    INFO,
    REJECT,
    CheckedTask,
)
from sqlbench_lmeval.submission.logged import LoggedAnswer

#: Whether the check reads the task's scores (it runs after the scoring).
NEEDS_SCORES = True


def check(task: CheckedTask) -> None:
    answers = task.answers
    logged_scores = [score for score in task.scored if score.id in answers]
    _rescoring(task.spec, task.logged, answers, task.scored, logged_scores, task.add)


#: An answer's statuses that say it did not finish (a time limit, a crash), as written.
UNFINISHED_STATUSES = frozenset(status.value for status in UNFINISHED)

#: Numbers closer than this are equal (scores are means of 0/1 or similarities in [0, 1]).
TOLERANCE = 1e-9


def _rescoring(spec, logged, answers, scores, logged_scores, add) -> None:
    """Claimed numbers (per item: the logged score dict and the numbers beside it; in
    aggregate: the results file) against ours."""
    ours = {score.id: score for score in scores}
    mismatched: dict[str, list[int]] = {}
    for item_id, answer in answers.items():
        mine = ours[item_id]
        claims = [(False, answer.claimed_fields(list(mine.values))), (True, answer.claimed_numbers)]
        for beside, claim in claims:
            differ = [
                name
                for name, value in claim.items()
                if is_number(value) and name in mine.values and not _close(value, mine.values[name])
            ]
            if differ:
                cause = _likely_cause(answer, claim, mine, differ, beside)
                mismatched.setdefault(cause, []).append(item_id)
                break
    for cause, ids in mismatched.items():
        benign = cause.startswith(BENIGN_CAUSES)
        add(
            "rescoring",
            "item_mismatch",
            FINDING if benign else REJECT,
            f"{len(ids)} item(s) claim numbers this scorer does not give; likely cause: {cause}"
            + ("" if benign else " (no benign cause: the claims do not stand)"),
            sorted(set(ids)),
        )
    explained = bool(mismatched) and all(c.startswith(BENIGN_CAUSES) for c in mismatched)
    effective = (logged.n_samples or {}).get("effective")
    if effective is not None and int(effective) != len(logged.answers):
        add(
            "rescoring",
            "aggregate_not_compared",
            INFO,
            f"the results file averages over {effective} items, the samples log holds "
            f"{len(logged.answers)} lines: its aggregates were not compared",
        )
        return
    mine = aggregate(logged_scores) if logged_scores else {}
    differ_names = [
        name
        for name, value in sorted(logged.claimed_metrics.items())
        if is_number(mine.get(name)) and not _close(value, mine[name], 1e-6)
    ]
    differ = [
        f"{name} claimed {logged.claimed_metrics[name]:.4f}, re-scored {mine[name]:.4f}"
        for name in differ_names
    ]
    if differ and explained:
        benign = {item_id for ids in mismatched.values() for item_id in ids}
        claimed = {name: logged.claimed_metrics[name] for name in differ_names}
        explained = _claims_add_up(claimed, logged_scores, answers, benign)
    if differ:
        add(
            "rescoring",
            "aggregate_mismatch",
            FINDING if explained else REJECT,
            "the run's aggregate numbers differ from the re-scored ones over the same items: "
            + "; ".join(differ[:8])
            + (" ..." if len(differ) > 8 else "")
            + (
                " (explained by the items' benign differences above)"
                if explained
                else " (no item explains it: the claimed numbers do not stand)"
            ),
        )


def _claims_add_up(claimed_metrics: Mapping, scores, answers, benign: set[int]) -> bool:
    """Whether each claimed aggregate that differs from ours is lm-eval's mean of our numbers
    with the ``benign`` items' logged numbers in place of ours: only then do those items explain
    the difference (one benign item never excuses an aggregate edited otherwise)."""
    for name, value in claimed_metrics.items():
        carried = []
        for score in scores:
            numbers = answers[score.id].claimed_numbers if score.id in benign else score.values
            if is_number(numbers.get(name)):
                carried.append(float(numbers[name]))
        if not carried or not _close(value, fmean(carried), 1e-6):
            return False
    return True


#: Causes of a claimed number differing from ours that leave the run standing (re-scored by
#: us): another comparison version, or an answer that hit a time limit here or there.
BENIGN_CAUSES = ("the run was judged under comparison version", "execution limits or machine speed")
#: Gold that calls RAND() (LogicCat 865, 1423, 1425, 1440) gives another result on every run, so
#: an honest answer's verdict there can differ between the run's machine and ours.
RANDOM_GOLD_CAUSE = "gold's result is random (it calls RAND()): it differs between any two runs"
BENIGN_CAUSES += (RANDOM_GOLD_CAUSE,)


def _likely_cause(answer: LoggedAnswer, claim: Mapping, mine: ScoredItem, names, beside) -> str:
    """Why ``claim`` (the logged score dict's numbers, or with ``beside`` the numbers logged
    beside it) differs from ours on ``names``."""
    claimed = answer.claimed or {}
    version = claimed.get("comparison_version")
    if version is not None and str(version) != COMPARISON_VERSION:
        return f"the run was judged under comparison version {version} (now {COMPARISON_VERSION})"
    status = claimed.get("status")
    if status is not None and status != mine.status:
        if {status, mine.status} & UNFINISHED_STATUSES:
            return (
                f"execution limits or machine speed: status {status} in the run, {mine.status} here"
            )
        if claimed.get("gold_status") not in (None, mine.gold_status):
            return (
                f"gold status {claimed.get('gold_status')} in the run, "
                f"{mine.gold_status} here: other data or engine"
            )
        return f"status {status} in the run, {mine.status} here"
    if answer.claimed and beside:
        inner = [
            n
            for n in names
            if is_number(answer.claimed.get(n)) and not _close(answer.claimed[n], claim[n])
        ]
        if inner:
            return "the sample's metrics differ from its own score dict: edited after scoring"
    if (
        status is not None
        and status != Status.OK.value
        and any(claim.get(n) for n in (EX, VES) if is_number(claim.get(n)))
    ):
        return f"numbers claimed for an answer whose own status is {status}: edited"
    if UNREPEATABLE_FLAGS & set(mine.flags):
        return RANDOM_GOLD_CAUSE
    return "same status, another verdict: other comparison rules, gold result or edited numbers"


def _close(a, b, tolerance: float = TOLERANCE) -> bool:
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tolerance
