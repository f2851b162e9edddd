"""The numbers of a report, computed from runs: scores, paired comparisons, failures,
structural similarity (paper Table 2) and complexity ratios (paper Table 1).

Everything here is plain data; ``report.tables`` and ``report.plots`` only render it.
A "view" is a task or an lm-eval group of tasks (see ``runs.Run.views``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.report.runs import Run, ScoredItem, TaskResult
from sqlbench_lmeval.report.stats import (
    RESAMPLES,
    SEED,
    Interval,
    bootstrap_cis,
    holm,
    mcnemar_exact,
    paired_bootstrap_ci,
)
from sqlbench_lmeval.scoring import VERDICTS, verdict

#: Execution metrics in table order, with their column titles.
EXECUTION_METRICS = (("ves", "VES"), ("ex", "EX"), ("ex_strict", "EX strict"), ("ex_set", "EX set"))
#: Shown beside them when a benchmark reports it (TPC-DS).
SIMILARITY_METRIC = ("structural_similarity", "Struct. sim.")
COUNT_SIMILARITY_METRIC = "structural_count_similarity"
#: 1.0 when the prediction parsed as one statement (TPC-DS); similarities count a miss as 0.
PARSED = "parsed"

#: Outcome classes of the failure breakdown, in column order: ``scoring.VERDICTS``, the classes
#: ``score``, ``verify`` and the explorer count too. "wrong_result" ran but differs; "truncated"
#: was cut off by the generation limit and is not correct.
OUTCOMES = VERDICTS

# The paper's Table 2 column order; a feature name is placed by the first keyword it contains.
_FEATURE_ORDER = ("table", "column", "predicate", "where", "constant", "function", "aggreg", "join")
# The paper's Table 1 column order for complexity counts.
_COUNT_ORDER = ("column", "join", "predicate", "where", "cte", "function", "subquer")


def item_metric(item: ScoredItem, name: str) -> float:
    """A metric of one item by name (NaN when the item does not have it)."""
    if name in ("ves", "ex", "ex_strict", "ex_set"):
        return getattr(item, name)
    return item.numbers.get(name, math.nan)


# --- compatibility -----------------------------------------------------------------------------


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


# --- scores ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreRow:
    """One run's means and intervals on one view, or on one category inside it."""

    view: str
    category: str | None  # None: the whole view
    run: str
    n: int
    intervals: Mapping[str, Interval]  # metric name -> interval, in table order


def score_metrics(items: Sequence[ScoredItem]) -> list[tuple[str, str]]:
    """(name, title) of the metrics a table over ``items`` shows."""
    metrics = list(EXECUTION_METRICS)
    if any(SIMILARITY_METRIC[0] in item.numbers for item in items):
        metrics.append(SIMILARITY_METRIC)
    return metrics


def score_rows(
    runs: Sequence[Run], *, resamples: int = RESAMPLES, seed: int = SEED
) -> list[ScoreRow]:
    """Per view, per run: the whole view, then each category (when there are several)."""
    rows = []
    for view, results in runs_by_view(runs):
        # The same columns for every run of a view (a metric a run lacks shows as NaN).
        metrics = [
            name for name, _ in score_metrics([i for _, result in results for i in result.items])
        ]
        for run, result in results:
            rows.append(_score_row(view, None, run.name, result.items, metrics, resamples, seed))
            categories = sorted({item.category for item in result.items if item.category})
            if len(categories) > 1:
                for category in categories:
                    items = [item for item in result.items if item.category == category]
                    rows.append(
                        _score_row(view, category, run.name, items, metrics, resamples, seed)
                    )
    return rows


def _score_row(view, category, run, items, metrics, resamples, seed) -> ScoreRow:
    values = np.array(
        [[item_metric(item, name) for name in metrics] for item in items], dtype=float
    ).reshape(len(items), len(metrics))
    intervals = bootstrap_cis(values, resamples=resamples, seed=seed)
    return ScoreRow(view, category, run, len(items), dict(zip(metrics, intervals, strict=True)))


# --- paired comparisons ------------------------------------------------------------------------


@dataclass(frozen=True)
class PairRow:
    """Run ``a`` against run ``b`` on the items of one view that both answered."""

    view: str
    a: str
    b: str
    n_a: int  # items of the view in run a
    n_b: int
    n_common: int  # items present in both: the only ones compared
    ex_a: float  # EX of a on the common items
    ex_b: float
    difference: Interval  # EX(a) - EX(b), paired bootstrap over the common items
    a_only_correct: int  # McNemar's b: a right, b wrong
    b_only_correct: int  # McNemar's c: a wrong, b right
    p_value: float  # exact two-sided McNemar on those two counts
    # Holm-adjusted over every pair of runs on this view (equals p_value for a single pair).
    p_holm: float = math.nan


def pair_rows(
    runs: Sequence[Run], *, resamples: int = RESAMPLES, seed: int = SEED
) -> list[PairRow]:
    """Every two runs on every view they share, matched by item id."""
    rows = []
    for view, having in runs_by_view(runs):
        view_rows = [
            _pair_row(view, run_a.name, result_a, run_b.name, result_b, resamples, seed)
            for (run_a, result_a), (run_b, result_b) in combinations(having, 2)
        ]
        adjusted = holm([row.p_value for row in view_rows])
        rows.extend(replace(row, p_holm=p) for row, p in zip(view_rows, adjusted, strict=True))
    return rows


def paired_items(result_a: TaskResult, result_b: TaskResult) -> list[tuple[ScoredItem, ScoredItem]]:
    """The items both results answered, matched by id, in ``result_a``'s order."""
    by_id_b = {item.id: item for item in result_b.items}
    return [(item, by_id_b[item.id]) for item in result_a.items if item.id in by_id_b]


def _pair_row(view, name_a, result_a: TaskResult, name_b, result_b: TaskResult, resamples, seed):
    pairs = paired_items(result_a, result_b)
    ex_a = [a.ex for a, _ in pairs]
    ex_b = [b.ex for _, b in pairs]
    a_only = sum(1 for a, b in zip(ex_a, ex_b, strict=True) if a >= 0.5 > b)
    b_only = sum(1 for a, b in zip(ex_a, ex_b, strict=True) if b >= 0.5 > a)
    return PairRow(
        view=view,
        a=name_a,
        b=name_b,
        n_a=len(result_a.items),
        n_b=len(result_b.items),
        n_common=len(pairs),
        ex_a=_mean(ex_a),
        ex_b=_mean(ex_b),
        difference=paired_bootstrap_ci(ex_a, ex_b, resamples=resamples, seed=seed),
        a_only_correct=a_only,
        b_only_correct=b_only,
        p_value=mcnemar_exact(a_only, b_only),
    )


# --- failures ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FailureRow:
    """How one run's items on one view ended."""

    view: str
    run: str
    n: int
    outcomes: Mapping[str, int]  # OUTCOMES, plus any status we do not know, by count
    error_kinds: tuple[tuple[str, int], ...]  # most frequent first
    unhealthy_gold: int  # items whose gold did not return a usable result
    truncated: int = 0  # outputs cut off by the generation limit (any outcome)
    looping: int = 0  # of those, outputs that end in a repetition loop
    truncated: int = 0  # outputs cut off by the generation limit (correct ones too)
    reads_no_table: int = 0  # answers that ran but read no table (constants)


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


def failure_rows(runs: Sequence[Run]) -> list[FailureRow]:
    rows = []
    for view, results in runs_by_view(runs):
        for run, result in results:
            outcomes = Counter(outcome_of(item) for item in result.items)
            kinds = Counter(
                error_kind(item.error) for item in result.items if item.status == "error"
            )
            rows.append(
                FailureRow(
                    view=view,
                    run=run.name,
                    n=len(result.items),
                    outcomes={**{name: outcomes.get(name, 0) for name in OUTCOMES}, **outcomes},
                    error_kinds=tuple(sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
                    unhealthy_gold=sum(1 for item in result.items if item.gold_status != "ok"),
                    truncated=sum(1 for item in result.items if item.truncated),
                    looping=sum(1 for item in result.items if item.repetition_loop),
                    reads_no_table=sum(1 for item in result.items if item.reads_no_table),
                )
            )
    return rows


# --- structural similarity (paper Table 2) ------------------------------------------------------


@dataclass(frozen=True)
class SimilarityRow:
    """One run's mean similarity per SQL feature on one view (the paper's Table 2 row)."""

    view: str
    run: str
    n: int
    features: Mapping[str, float]  # sim_<feature> -> mean, in the paper's column order
    average: float  # mean structural_similarity
    count_based: float  # mean structural_count_similarity (NaN when absent)
    parsed: float  # share of parseable predictions (NaN when the benchmark does not say)


def feature_label(name: str) -> str:
    """``sim_where_predicates`` -> ``Where predicates``."""
    return name.removeprefix("sim_").replace("_", " ").capitalize()


def _ordered(names, order) -> list[str]:
    def key(name):
        ranks = [rank for rank, word in enumerate(order) if word in name]
        return (ranks[0] if ranks else len(order), name)

    return sorted(names, key=key)


def similarity_rows(runs: Sequence[Run]) -> list[SimilarityRow]:
    rows = []
    for view, results in runs_by_view(runs):
        for run, result in results:
            names = {name for item in result.items for name in item.numbers}
            features = _ordered([name for name in names if name.startswith("sim_")], _FEATURE_ORDER)
            if not features:
                continue
            rows.append(
                SimilarityRow(
                    view=view,
                    run=run.name,
                    n=len(result.items),
                    features={name: _metric_mean(result.items, name) for name in features},
                    average=_metric_mean(result.items, SIMILARITY_METRIC[0]),
                    count_based=_metric_mean(result.items, COUNT_SIMILARITY_METRIC),
                    parsed=_metric_mean(result.items, PARSED),
                )
            )
    return rows


# --- complexity ratios (paper Table 1) ----------------------------------------------------------


@dataclass(frozen=True)
class ComplexityRow:
    """One run's mean complexity per count against gold's on the same items (paper Table 1)."""

    view: str
    run: str
    counts: Mapping[str, tuple[float, float, int]]  # name -> (model mean, gold mean, items)

    def ratio(self, name: str) -> float:
        model, gold, _ = self.counts[name]
        return model / gold if gold else math.nan


def complexity_names(items: Sequence[ScoredItem]) -> list[str]:
    """Counts reported for both the prediction (``x``) and gold (``gold_x``)."""
    names = {name for item in items for name in item.numbers}
    return _ordered([name for name in names if f"gold_{name}" in names], _COUNT_ORDER)


def complexity_rows(runs: Sequence[Run]) -> list[ComplexityRow]:
    """Means over the items with a parseable prediction (``parsed`` 1, when a benchmark reports
    it: TPC-DS counts an unparseable prediction as 0) where both counts are known."""
    rows = []
    for view, results in runs_by_view(runs):
        for run, result in results:
            names = complexity_names(result.items)
            if not names:
                continue
            counts = {}
            for name in names:
                pairs = [
                    (item.numbers.get(name, math.nan), item.numbers.get(f"gold_{name}", math.nan))
                    for item in result.items
                    if item.numbers.get(PARSED, 1.0) >= 0.5
                ]
                pairs = [(m, g) for m, g in pairs if not (math.isnan(m) or math.isnan(g))]
                counts[name] = (
                    _mean([m for m, _ in pairs]),
                    _mean([g for _, g in pairs]),
                    len(pairs),
                )
            rows.append(ComplexityRow(view=view, run=run.name, counts=counts))
    return rows


# --- helpers -----------------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float:
    values = [value for value in values if not math.isnan(value)]
    return sum(values) / len(values) if values else math.nan


def _metric_mean(items: Sequence[ScoredItem], name: str) -> float:
    return _mean([item_metric(item, name) for item in items])


__all__ = [
    "EXECUTION_METRICS",
    "OUTCOMES",
    "ComplexityRow",
    "FailureRow",
    "PairRow",
    "ScoreRow",
    "SimilarityRow",
    "check_comparable",
    "complexity_names",
    "complexity_rows",
    "error_kind",
    "failure_rows",
    "feature_label",
    "grouped_tasks",
    "item_metric",
    "outcome_of",
    "pair_rows",
    "score_metrics",
    "score_rows",
    "similarity_rows",
    "view_names",
]
