"""The gold card of a task on one engine and dialect: the ceiling of every metric (the gold as its
authors publish it, given as every item's answer, scored by ``score``'s own path), the same for
the gold we execute, gold status and flag counts, every item whose gold is unhealthy or whose
published gold misses, the dataset version and the authors' reference points (what each number
means: docs/gold-audit.md#the-gold-card).

>>> ceiling_numbers({"n": 3, "ex": 2 / 3, "ex_physical": 1.0, "n_physical": 1})
{'ex': 0.6667, 'ex_physical': 1.0}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from sqlbench_lmeval import benchmarks
from sqlbench_lmeval.execution import Limits
from sqlbench_lmeval.offline import score_predictions, task_items, task_target
from sqlbench_lmeval.scoring.item import GOLD_HEALTHY

#: Digits the card keeps of each number (a ceiling is read, not computed with).
DIGITS = 4


def gold_card(
    name: str,
    *,
    engine: str | None = None,
    dialect: str | None = None,
    cache_dir=None,
    limits: Limits = Limits(),
    workers: int | None = None,
    progress: bool = True,
    **options,
) -> dict:
    """The card of ``name`` (a benchmark, ``logiccat``: all its items, or one of our tasks) on
    ``engine`` (default: the benchmark's), the published gold read as ``dialect`` (default: the
    task's prompted dialect); ``options`` choose the data as for ``score``. A JSON-ready dict:
    ``ceiling`` maps each metric to the published gold's value, ``ceiling_executed_gold`` to
    the executed gold's."""
    benchmark, task = task_target(name)
    chosen = benchmarks.get(benchmark)
    data = {key: value for key, value in {"engine": engine, **options}.items() if value is not None}
    items = task_items(benchmark, task, cache_dir=cache_dir, dialect=dialect, **data)
    if chosen.published_gold is not None:
        published = chosen.published_gold(cache_dir=cache_dir, **data)
        published_dialect = chosen.published_dialect
    else:
        published = {item.id: item.gold_sql for item in items}
        published_dialect = items[0].dialect
    read_as = dialect or items[0].prompted_dialect
    common = {
        "task": task,
        "cache_dir": cache_dir,
        "limits": limits,
        "workers": workers,
        "progress": progress,
        **data,
    }
    as_published = score_predictions(
        benchmark, {item.id: published[item.id] for item in items}, dialect=read_as, **common
    )
    executed = {item.id: item.gold_sql for item in items}
    if (published, read_as) == (executed, items[0].dialect):  # the same answers: one run
        as_executed = as_published
    else:
        as_executed = score_predictions(benchmark, executed, dialect=items[0].dialect, **common)
    scored = {score["id"]: score for score in as_executed["items"]}
    return {
        "task": as_published["task"],
        "benchmark": benchmark,
        "engine": as_published["engine"],
        "dialect": read_as,
        "published_dialect": published_dialect,
        "dataset_version": as_published["dataset_version"],
        "comparison_version": as_published["comparison_version"],
        "sqlbench_lmeval_version": as_published["sqlbench_lmeval_version"],
        "n": len(items),
        "ceiling": ceiling_numbers(as_published["metrics"]),
        "ceiling_executed_gold": ceiling_numbers(as_executed["metrics"]),
        "gold_status": dict(Counter(item.gold_status for item in items).most_common()),
        "flags": dict(Counter(flag for item in items for flag in item.flags).most_common()),
        "unhealthy": [
            {
                "id": item.id,
                "gold_status": item.gold_status,
                "flags": list(item.flags),
                "gold_error": scored[item.id].get("gold_error"),
            }
            for item in items
            if item.gold_status != GOLD_HEALTHY
        ],
        "published_gold_misses": misses(as_published["items"]),
        "executed_gold_misses": misses(as_executed["items"]),
        "reference_points": [
            {
                "label": point.label,
                "metric": point.metric,
                "value": point.value,
                "items": point.items,
                "source": point.source,
            }
            for point in chosen.reference_points
        ],
    }


def misses(scores) -> list[dict]:
    """The items of ``scores`` whose answer did not match gold: id, status, reason, error."""
    return [
        {
            "id": score["id"],
            "status": score["status"],
            "reason": score.get("reason"),
            "error": score.get("error"),
        }
        for score in scores
        if score.get("ex") != 1
    ]


def ceiling_numbers(metrics: Mapping) -> dict[str, float]:
    """The metrics of a run's numbers (means: floats), rounded to :data:`DIGITS`; counts and
    tallies left out."""
    return {
        name: round(value, DIGITS)
        for name, value in metrics.items()
        if isinstance(value, float) and not name.startswith("n_")
    }


__all__ = ["DIGITS", "ceiling_numbers", "gold_card", "misses"]
