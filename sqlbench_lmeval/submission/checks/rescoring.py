"""Re-scoring: the numbers a run claims, per item (the logged score dict and the numbers
beside it) and in aggregate (the results file), against ours; each mismatch names its items and
the likely cause, and only a benign named cause (another comparison version, a time limit, gold
that calls RAND()) leaves the run standing. Numbers made by another lm-eval version's way of
passing results to ``process_results`` (``lmeval.versions``) are named as that, not as an edit:
they do not stand either, but nobody edited them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from statistics import fmean

from sqlbench_lmeval.execution import Status
from sqlbench_lmeval.execution.outcome import UNFINISHED
from sqlbench_lmeval.lmeval.versions import flattens_results, passed_results
from sqlbench_lmeval.report.runs import parse_python_literal
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
    version = task.submission.settings.get("lm_eval_version")
    _rescoring(task.logged, answers, task.scored, logged_scores, task.add, version)


#: An answer's statuses that say it did not finish (a time limit, a crash), as written.
UNFINISHED_STATUSES = frozenset(status.value for status in UNFINISHED)

#: Numbers closer than this are equal (scores are means of 0/1 or similarities in [0, 1]).
TOLERANCE = 1e-9


def _rescoring(logged, answers, scores, logged_scores, add, version=None) -> None:
    """Claimed numbers (per item: the logged score dict and the numbers beside it; in
    aggregate: the results file) against ours; ``version`` is the lm-eval version the run
    records."""
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
                cause = _likely_cause(answer, claim, mine, differ, beside, version)
                mismatched.setdefault(cause, []).append(item_id)
                break
    for cause, ids in mismatched.items():
        benign = cause.startswith(BENIGN_CAUSES)
        add(
            "rescoring",
            "item_mismatch",
            FINDING if benign else REJECT,
            f"{len(ids)} item(s) claim numbers this scorer does not give; likely cause: {cause}"
            + (
                ""
                if benign
                else " (the claims do not stand)"
                if cause.startswith(VERSION_CAUSE)
                else " (no benign cause: the claims do not stand)"
            ),
            sorted(set(ids)),
        )
    explained = bool(mismatched) and all(c.startswith(BENIGN_CAUSES) for c in mismatched)
    # Items whose claims another lm-eval version made explain an aggregate made of them, but
    # leave it standing no more than they stand themselves.
    by_version = (
        bool(mismatched)
        and not explained
        and all(c.startswith((*BENIGN_CAUSES, VERSION_CAUSE)) for c in mismatched)
    )
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
    if differ and (explained or by_version):
        explaining = {item_id for ids in mismatched.values() for item_id in ids}
        claimed = {name: logged.claimed_metrics[name] for name in differ_names}
        adds_up = _claims_add_up(claimed, logged_scores, answers, explaining)
        explained, by_version = explained and adds_up, by_version and adds_up
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
                else f" (the means of the items' numbers above, as lm-eval {version} made them: "
                "the claimed numbers do not stand)"
                if by_version
                else " (no item explains it: the claimed numbers do not stand)"
            ),
        )


def _claims_add_up(claimed_metrics: Mapping, scores, answers, explaining: set[int]) -> bool:
    """Whether each claimed aggregate that differs from ours is lm-eval's mean of our numbers
    with the ``explaining`` items' logged numbers in place of ours: only then do those items
    explain the difference (one benign item never excuses an aggregate edited otherwise)."""
    for name, value in claimed_metrics.items():
        carried = []
        for score in scores:
            numbers = answers[score.id].claimed_numbers if score.id in explaining else score.values
            if is_number(numbers.get(name)):
                carried.append(float(numbers[name]))
        if not carried or not _close(value, fmean(carried), 1e-6):
            return False
    return True


#: Causes of a claimed number differing from ours that leave the run standing (re-scored by
#: us): another comparison version, or an answer that hit a time limit here or there.
BENIGN_CAUSES = ("the run was judged under comparison version", "execution limits or machine speed")
#: Gold that calls RAND() (LogicCat 865, 1423, 1425, 1440) repeats itself since every statement
#: starts from one seed (docs/engines.md#one-seed-for-every-statement, execution version 5), but
#: a run scored by an earlier version drew other numbers, and runs do not record that version:
#: an honest answer's verdict there can still differ from ours, so the cause stays benign.
RANDOM_GOLD_CAUSE = (
    "gold's result is random (it calls RAND()): a run scored before execution version 5 drew "
    "other numbers"
)
BENIGN_CAUSES += (RANDOM_GOLD_CAUSE,)
#: How a cause made by another lm-eval version's way of passing results begins: not benign (the
#: numbers beside the score dicts are not the answers' scores), not an edit either.
VERSION_CAUSE = "lm-eval's way of passing results"


def _likely_cause(
    answer: LoggedAnswer, claim: Mapping, mine: ScoredItem, names, beside, lm_eval=None
) -> str:
    """Why ``claim`` (the logged score dict's numbers, or with ``beside`` the numbers logged
    beside it) differs from ours on ``names``; ``lm_eval`` is the run's lm-eval version."""
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
            return _passing_cause(answer, claim, lm_eval) or (
                "the sample's metrics differ from its own score dict: edited after scoring"
            )
    if (
        status is not None
        and status != Status.OK.value
        and any(claim.get(n) for n in (EX, VES) if is_number(claim.get(n)))
    ):
        return f"numbers claimed for an answer whose own status is {status}: edited"
    if UNREPEATABLE_FLAGS & set(mine.flags):
        return RANDOM_GOLD_CAUSE
    return "same status, another verdict: other comparison rules, gold result or edited numbers"


def _passing_cause(answer: LoggedAnswer, beside: Mapping, version) -> str | None:
    """The cause to name when the numbers logged ``beside`` a score dict are exactly what our
    ``process_results`` gives for what lm-eval ``version`` passed it of the logged filter
    output (0.5 flattens each item's filtered responses: a score dict logged unwrapped, as
    sqlbench-lmeval wrote it before it supported 0.5, arrived as its keys); None otherwise."""
    if not flattens_results(version) or not isinstance(answer.claimed_raw, list):
        return None
    try:
        logged = [_parsed(value) for value in answer.claimed_raw]
    except (SyntaxError, ValueError, RecursionError):
        return None
    passed = passed_results(logged, version)
    # heavy: lm-eval's filter module; read only for a run whose claims differ from its dicts
    from sqlbench_lmeval.lmeval.hooks import process_results

    numbers = process_results(dict(answer.doc), passed)
    if set(numbers) != set(beside) or not all(_close(beside[n], v) for n, v in numbers.items()):
        return None
    received = (
        "the score dict's keys"
        if passed and all(isinstance(element, str) for element in passed)
        else "no score dict"
    )
    return (
        f"{VERSION_CAUSE}: lm-eval {version} flattens each item's filtered responses before "
        f"process_results, which received {received} (the filter output of a sqlbench-lmeval "
        "older than its support of that lm-eval) and logged those numbers beside the score "
        "dict, not the answer's scores; re-run with this sqlbench-lmeval"
    )


def _parsed(value):
    """A logged filter output read back: a Python repr parsed, lists element by element."""
    if isinstance(value, str):
        return parse_python_literal(value)
    if isinstance(value, list):
        return [_parsed(element) for element in value]
    return value


def _close(a, b, tolerance: float = TOLERANCE) -> bool:
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tolerance
