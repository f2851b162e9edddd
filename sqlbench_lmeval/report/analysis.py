"""What the report's sections and the explorer share: the metric names and labels the report reads
(from the metric registry, ``scoring.metrics``), views of runs (a task or an lm-eval group) and
whether runs can be compared, items paired by id, each item's outcome and error kind, and means
that leave NaN out; each section computes its own numbers in ``report.sections``.

>>> error_kind('Binder Error: Referenced column "x" not found')
'Binder Error'
>>> error_kind("(1146) Table 'logiccat.t' doesn't exist")
"(1146) Table … doesn't exist"
>>> error_kind("no such column: t.x"), mean([1.0, float("nan"), 0.0])
('no such column', 0.5)"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import fields
from itertools import combinations

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.report.runs import Run, TaskResult
from sqlbench_lmeval.scoring.metrics import (
    COMPLEXITY_COUNT,
    COUNT_SIMILARITY,
    EX,
    FEATURE,
    MEAN_EX,
    METRICS,
    PARSED,
    PASS_AT,
    RETRIES_USED,
    STRUCTURAL_SIMILARITY,
    VES,
    VOTED_EX,
    after_retries,
    metric,
    names,
)
from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.scoring.verdicts import VERDICTS, item_verdict

# --- metric names and labels: all from the metric registry (scoring.metrics) -----------------

#: The Scores table's columns (``Metric.in_scores_table``), in registry order; a column of one
#: benchmark's metric is shown when the items have it.
SCORE_COLUMNS = tuple(m for m in METRICS if m.in_scores_table)
#: Per SQL feature, the similarity to gold of one feature (TPC-DS), in the paper's Table 2 order.
FEATURE_METRICS = names(family=FEATURE)
#: Complexity counts of the prediction, in the paper's Table 1 order, and gold's by count.
COUNT_METRICS = names(family=COMPLEXITY_COUNT)
GOLD_COUNT = {m.gold_of: m.name for m in METRICS if m.gold_of is not None}
# Sampled runs: VOTED_EX, MEAN_EX and PASS_AT (k -> name); TPC-DS: PARSED; retried runs:
# RETRIES_USED (the registry's names, imported above) and validity and EX of the last attempt.
VES_AFTER_RETRIES = after_retries(VES)
EX_AFTER_RETRIES = after_retries(EX)

#: Outcome classes of the failure breakdown, in column order: ``scoring.verdicts.VERDICTS``, the
#: classes ``score``, ``verify`` and the explorer count too. "wrong_result" ran but differs;
#: "broken_gold" ran on an item whose gold is broken; "truncated" was cut off by the generation
#: limit and is not correct.
OUTCOMES = VERDICTS

# Metrics that are fields of every scored item rather than entries of its ``numbers``.
_ITEM_FIELDS = frozenset(f.name for f in fields(ScoredItem)) & frozenset(names())


def item_metric(item: ScoredItem, name: str) -> float:
    """A metric of one item by name (NaN when the item does not have it)."""
    if name in _ITEM_FIELDS:
        return getattr(item, name)
    return item.numbers.get(name, math.nan)


def label(name: str) -> str:
    """The registry's label of a metric (``sim_where_predicates`` -> ``Where predicates``)."""
    return metric(name).label


def present(names_in_order: Sequence[str], items: Sequence[ScoredItem]) -> list[str]:
    """Those of ``names_in_order`` that some item has among its ``numbers``, in that order."""
    found = {name for item in items for name in item.numbers}
    return [name for name in names_in_order if name in found]


# --- views, compatibility, pairing -----------------------------------------------------------


def check_comparable(runs: Sequence[Run]) -> None:
    """Refuse runs judged by different comparison rules, or views built from different data.

    Raises ``UserError`` naming both values. A version nobody recorded is not a conflict.
    """
    for first, second in combinations(runs, 2):
        a, b = first.comparison_version, second.comparison_version
        if a is not None and b is not None and a != b:
            raise UserError(
                f"cannot compare {first.name!r} (comparison version {a}) with {second.name!r} "
                f"(comparison version {b}): EX was judged by different rules; rescore one run "
                "with the same sqlbench-lmeval version"
            )
        first_views, second_views = first.views(), second.views()
        for name in first_views.keys() & second_views.keys():
            a, b = first_views[name].dataset_version, second_views[name].dataset_version
            # The same items on two engines name the engine in their dataset version: those
            # runs pair item by item (the cross-engine section lists where verdicts differ).
            if engines_differ(first_views[name], second_views[name]):
                continue
            if a is not None and b is not None and a != b:
                raise UserError(
                    f"cannot compare {first.name!r} with {second.name!r} on {name}: dataset "
                    f"version {a} vs {b} (the items differ); score both on the same data"
                )


def engines_differ(a: TaskResult, b: TaskResult) -> bool:
    """Both results say where their SQL ran, and it was not the same engine."""
    return a.engine is not None and b.engine is not None and a.engine != b.engine


def view_names(runs: Sequence[Run]) -> list[str]:
    """Every view name of every run, first-seen order."""
    names: dict[str, None] = {}
    for run in runs:
        names.update(dict.fromkeys(run.views()))
    return list(names)


def runs_by_view(runs: Sequence[Run]) -> list[tuple[str, list[tuple[Run, TaskResult]]]]:
    """Per view name (first-seen order), the runs that have it with their result for it."""
    return [
        (view, [(run, run.views()[view]) for run in runs if view in run.views()])
        for view in view_names(runs)
    ]


def grouped_tasks(runs: Sequence[Run]) -> set[str]:
    """Tasks that belong to an lm-eval group of some run (their group view holds them)."""
    return {
        task
        for run in runs
        for group, tasks in run.groups
        if group in run.views()
        for task in tasks
    }


def paired_items(result_a: TaskResult, result_b: TaskResult) -> list[tuple[ScoredItem, ScoredItem]]:
    """The items both results answered, matched by id, in ``result_a``'s order."""
    by_id_b = {item.id: item for item in result_b.items}
    return [(item, by_id_b[item.id]) for item in result_a.items if item.id in by_id_b]


# --- items -------------------------------------------------------------------------------------


def outcome_of(item: ScoredItem) -> str:
    """The failure-breakdown class of an item (``scoring.verdicts.verdict``)."""
    return item_verdict(item)


def error_kind(message: str | None) -> str:
    """A short class of an engine error message, for counting: names and values removed."""
    if not message:
        return "(no message)"
    text = message.strip().splitlines()[0]
    # MySQL/MariaDB (PyMySQL): "(1146) Table 'db.t' doesn't exist"; the code names the kind.
    server = re.match(r"\((\d{4})\)\s*(.*)", text)
    if server and server.group(1) == "1064":  # "You have an error in your SQL syntax; ..."
        return "syntax error"
    if server:
        message = re.sub(r"(['\"`]).*?\1", "…", server.group(2)).split(";")[0]
        return f"({server.group(1)}) {message[:60].strip()}"
    if "syntax error" in text.lower():
        return "syntax error"
    # DuckDB: "Binder Error: Referenced column ..." -> "Binder Error"
    match = re.match(r"([A-Z][A-Za-z ]*Error)\s*:", text)
    if match:
        return match.group(1)
    # SQLite: "no such column: t.x", "ambiguous column name: id", "misuse of aggregate: max()"
    head = text.split(":", 1)[0]
    head = re.sub(r"(['\"`]).*?\1", "…", head)
    head = re.sub(r"\d+", "N", head)
    return head[:60].strip() or "(no message)"


def mean(values: Sequence[float]) -> float:
    """The mean of the values that are not NaN (NaN when none is)."""
    values = [value for value in values if not math.isnan(value)]
    return sum(values) / len(values) if values else math.nan


def metric_mean(items: Sequence[ScoredItem], name: str) -> float:
    """The mean of a metric over the items that have it."""
    return mean([item_metric(item, name) for item in items])


__all__ = [
    "COUNT_METRICS",
    "EX",
    "COUNT_SIMILARITY",
    "EX_AFTER_RETRIES",
    "FEATURE_METRICS",
    "GOLD_COUNT",
    "MEAN_EX",
    "OUTCOMES",
    "PARSED",
    "PASS_AT",
    "RETRIES_USED",
    "SCORE_COLUMNS",
    "STRUCTURAL_SIMILARITY",
    "VES_AFTER_RETRIES",
    "VOTED_EX",
    "check_comparable",
    "engines_differ",
    "error_kind",
    "grouped_tasks",
    "item_metric",
    "label",
    "mean",
    "metric_mean",
    "outcome_of",
    "paired_items",
    "present",
    "runs_by_view",
    "view_names",
]
