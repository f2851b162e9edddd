"""How each answer ended and a run's numbers: :func:`verdict` classes a score dict (the classes
of docs/scoring.md#verdicts) and :func:`aggregate` makes means, counts and EX per category.

>>> verdict("ok", 1, False, "ok"), verdict("error", 0, True, "ok")
('correct', 'truncated')
>>> aggregate([])
{'n': 0}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from statistics import fmean

from sqlbench_lmeval.execution import Status
from sqlbench_lmeval.scoring.cost import summary as cost_summary
from sqlbench_lmeval.scoring.item import EXCLUDED, gold_broken
from sqlbench_lmeval.scoring.metrics import EX_ON_HEALTHY_GOLD, LOGGED_NUMBERS
from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.vocabulary import VerdictClass

VERDICTS = tuple(VerdictClass)


def verdict(status: str, ex: float, truncated: bool, gold_status: str) -> str:
    """The :data:`VERDICTS` class of an answer with this ``status``, ``ex`` and truncation, on
    an item with this ``gold_status`` (a score dict's); :data:`EXCLUDED` for an item left out
    (in no verdict class: counted apart, as ``n_excluded``).

    >>> verdict("ok", 0, False, "ok"), verdict("ok", 0, False, "error")
    ('wrong_result', 'broken_gold')
    >>> verdict("timeout", 0, False, "error"), verdict("ok", 0, True, "error")
    ('timeout', 'truncated')
    """
    if status == EXCLUDED:
        return EXCLUDED
    if status == Status.OK.value and ex >= 0.5:
        return VerdictClass.CORRECT
    if truncated:
        return VerdictClass.TRUNCATED
    if status != Status.OK.value:
        return status  # the answer's own failure: a fact about the answer, whatever gold did
    return VerdictClass.BROKEN_GOLD if gold_broken(gold_status) else VerdictClass.WRONG_RESULT


def item_verdict(item: ScoredItem) -> str:
    """The :func:`verdict` of a score read (``scoring.scored``)."""
    return verdict(item.status, item.ex, item.truncated, item.gold_status)


#: What to do about truncated outputs (printed by ``score``, shown by ``report``).
TRUNCATION_ADVICE = (
    "the output ended inside <think> or inside an unclosed code fence, i.e. at the generation "
    "limit; raise it with lm_eval --gen_kwargs max_gen_toks=N (task defaults: 512 for "
    "logiccat, 2048 for logiccat_cot, 4096 for tpcds; reasoning models need several thousand)"
)

#: What truncated outputs that end in a repetition loop mean (``Extraction.repetition_loop``).
LOOP_ADVICE = (
    "the output repeats the same text until the generation limit cuts it off; a larger "
    "max_gen_toks would not end the loop, so these items failed on the model, not the budget"
)


def aggregate(scores: Sequence[Mapping | ScoredItem]) -> dict:
    """Means of every numeric per-item metric, EX per category, and counts that explain them,
    over score dicts (or those already read, :class:`ScoredItem`).

    ``ex_on_healthy_gold`` restricts EX to items whose gold returned a non-empty, not all-NULL
    result that can be repeated (no RAND()): the number least disturbed by broken gold.
    Items :data:`EXCLUDED` (their gold did not finish) are in no mean and not in ``n``:
    ``n_excluded`` and ``excluded_ids`` count them. A metered run (``scoring.cost``) also has
    ``cost``: the sums and medians of what its items cost, excluded ones too (they were paid for).
    """
    items = [
        item if isinstance(item, ScoredItem) else ScoredItem.from_score(item) for item in scores
    ]
    metrics = _aggregate(items)
    spent = cost_summary({**item.values, **item.details} for item in items)
    if spent is not None:
        metrics["cost"] = spent
    return metrics


def _aggregate(items: Sequence[ScoredItem]) -> dict:
    excluded = [item.id for item in items if item.excluded]
    if excluded:  # in no mean; counted apart (a run where nothing was excluded is unchanged)
        metrics = _aggregate([item for item in items if not item.excluded])
        metrics["n_excluded"] = len(excluded)
        metrics["excluded_ids"] = excluded
        metrics.update(_counts(items))
        metrics.setdefault("verdict_counts", {})[EXCLUDED] = len(excluded)
        return metrics
    if not items:
        return {"n": 0}
    # Every number of the first item, in its score dict's order (the work counts aside).
    numeric = [name for name in items[0].values if name not in LOGGED_NUMBERS]
    metrics: dict = {"n": len(items)}
    for name in numeric:
        metrics[name] = fmean(float(i.values[name]) for i in items if name in i.values)
    for category in sorted({item.category for item in items if item.category}):
        in_category = [item for item in items if item.category == category]
        metrics[f"ex_{category}"] = fmean(item.ex for item in in_category)
        metrics[f"n_{category}"] = len(in_category)
    healthy = [item for item in items if item.healthy_gold]
    metrics["n_healthy_gold"] = len(healthy)
    metrics[EX_ON_HEALTHY_GOLD] = fmean(item.ex for item in healthy) if healthy else 0.0
    metrics.update(_counts(items))
    metrics["verdict_counts"] = dict(Counter(item_verdict(item) for item in items))
    metrics["n_truncated"] = sum(1 for item in items if item.truncated)
    metrics["n_truncated_loops"] = sum(1 for item in items if item.repetition_loop)
    metrics["n_reads_no_table"] = sum(1 for item in items if item.reads_no_table)
    return metrics


def _counts(items: Sequence[ScoredItem]) -> dict:
    """How many items have each status, gold status and reason."""
    return {
        "status_counts": dict(Counter(item.status for item in items)),
        "gold_status_counts": dict(Counter(item.gold_status for item in items)),
        "reason_counts": dict(Counter(item.reason for item in items)),
    }
