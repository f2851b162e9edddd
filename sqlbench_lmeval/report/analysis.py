"""What the report's sections and the explorer share: the metric names the report reads (all
of them here, in one place), views of runs and whether runs can be compared, items paired by
id, each item's outcome and error kind, and means that leave NaN out.

A "view" is a task or an lm-eval group of tasks (see ``runs.Run.views``). The numbers of each
section are computed in its own module under ``report.sections``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from itertools import combinations

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.report.runs import Run, ScoredItem, TaskResult
from sqlbench_lmeval.scoring.pipeline import VERDICTS, verdict

# --- metric names and labels -------------------------------------------------------------------

#: Execution metrics in table order, with their column titles.
EXECUTION_METRICS = (("ves", "VES"), ("ex", "EX"), ("ex_strict", "EX strict"), ("ex_set", "EX set"))
#: Shown beside them when a benchmark reports it (TPC-DS).
SIMILARITY_METRIC = ("structural_similarity", "Struct. sim.")
COUNT_SIMILARITY_METRIC = "structural_count_similarity"
#: 1.0 when the prediction parsed as one statement (TPC-DS); similarities count a miss as 0.
PARSED = "parsed"
#: Per SQL feature: ``sim_<feature>``, the similarity to gold of one feature (TPC-DS).
FEATURE_PREFIX = "sim_"
#: A complexity count ``x`` of the prediction has gold's beside it as ``gold_x`` (TPC-DS).
GOLD_PREFIX = "gold_"
#: Sampled runs (``sampled_scoring``): EX of the voted answer, the mean EX over the samples, and
#: ``pass_at_<k>``.
VOTED_EX = "ex_maj"
MEAN_EX = "ex_mean"
PASS_AT = re.compile(r"pass_at_(\d+)$")
#: Retried runs (``retry_envelope``): validity and EX of the last attempt, retries used.
VES_AFTER_RETRIES = "ves@retry"
EX_AFTER_RETRIES = "ex@retry"
RETRIES_USED = "retries_used"

#: Outcome classes of the failure breakdown, in column order: ``scoring.VERDICTS``, the classes
#: ``score``, ``verify`` and the explorer count too. "wrong_result" ran but differs; "truncated"
#: was cut off by the generation limit and is not correct.
OUTCOMES = VERDICTS

# The paper's Table 2 column order; a feature name is placed by the first keyword it contains.
FEATURE_ORDER = ("table", "column", "predicate", "where", "constant", "function", "aggreg", "join")
# The paper's Table 1 column order for complexity counts.
COUNT_ORDER = ("column", "join", "predicate", "where", "cte", "function", "subquer")

# Metrics that are fields of every scored item rather than entries of its ``numbers``.
_ITEM_FIELDS = frozenset(name for name, _ in EXECUTION_METRICS)


def item_metric(item: ScoredItem, name: str) -> float:
    """A metric of one item by name (NaN when the item does not have it)."""
    if name in _ITEM_FIELDS:
        return getattr(item, name)
    return item.numbers.get(name, math.nan)


def feature_label(name: str) -> str:
    """``sim_where_predicates`` -> ``Where predicates``."""
    return name.removeprefix(FEATURE_PREFIX).replace("_", " ").capitalize()


def ordered(names, order) -> list[str]:
    """``names`` in a paper's column ``order``: each by the first keyword of ``order`` it
    contains (the rest last), ties by name."""

    def key(name):
        ranks = [rank for rank, word in enumerate(order) if word in name]
        return (ranks[0] if ranks else len(order), name)

    return sorted(names, key=key)


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
    """The failure-breakdown class of an item (``scoring.verdict``)."""
    return verdict(item.status, item.ex, item.truncated)


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
    "COUNT_ORDER",
    "COUNT_SIMILARITY_METRIC",
    "EXECUTION_METRICS",
    "EX_AFTER_RETRIES",
    "FEATURE_ORDER",
    "FEATURE_PREFIX",
    "GOLD_PREFIX",
    "MEAN_EX",
    "OUTCOMES",
    "PARSED",
    "PASS_AT",
    "RETRIES_USED",
    "SIMILARITY_METRIC",
    "VES_AFTER_RETRIES",
    "VOTED_EX",
    "check_comparable",
    "engines_differ",
    "error_kind",
    "feature_label",
    "grouped_tasks",
    "item_metric",
    "mean",
    "metric_mean",
    "ordered",
    "outcome_of",
    "paired_items",
    "runs_by_view",
    "view_names",
]
