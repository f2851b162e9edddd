"""The report's "Scores" section: per view, each run's mean VES and EX variants (and TPC-DS's
structural similarity) with bootstrap intervals, for the whole view and for each category."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace

import numpy as np

from sqlbench_lmeval.report import plots
from sqlbench_lmeval.report.analysis import (
    SCORE_COLUMNS,
    item_metric,
    label,
    present,
    runs_by_view,
)
from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.report.sections import Context, by_view, paragraph
from sqlbench_lmeval.report.stats import RESAMPLES, SEED, Interval, bootstrap_cis
from sqlbench_lmeval.report.tables import Block, Section, Table, fmt_ci
from sqlbench_lmeval.scoring.efficiency import resolved_by_counts
from sqlbench_lmeval.scoring.item import GOLD_HEALTHY
from sqlbench_lmeval.scoring.metrics import (
    EX,
    EX_ON_HEALTHY_GOLD,
    R_VES,
    is_metric,
    not_defined,
)
from sqlbench_lmeval.scoring.scored import ScoredItem

#: EX over the items whose gold is healthy (``gold_status`` "ok"): what EX says about the model
#: once gold that is empty, erroring or otherwise doubtful is set aside. Computed here from
#: each item's EX and gold status; a score that carries the metric itself is used as it is.
HEALTHY_EX = EX_ON_HEALTHY_GOLD
HEALTHY_EX_LABEL = "EX (healthy gold)"

TITLE = "Scores"
EXPLANATION = paragraph(
    """
    VES: the prediction ran without error, within the time limit and the row cap. EX: same
    result as gold (rows as a multiset, in order when gold's outermost ORDER BY defines one;
    numbers with a small tolerance). EX strict: identical ordered rows. EX set: same set of rows
    (BIRD's rule). EX (healthy gold): EX over the items whose gold returned a non-empty, not
    all-NULL result that can be repeated; an empty answer scores nothing there, however many
    of the task's gold results are empty. R-VES (work): BIRD's R-VES buckets on gold's work /
    the answer's work, as counted by the engine (the same on every machine), square-rooted; 0
    unless EX is 1; not defined on an engine that counts no work (PostgreSQL).
    """
)


def _label(name: str) -> str:
    return HEALTHY_EX_LABEL if name == HEALTHY_EX and not is_metric(name) else label(name)


def _value(item: ScoredItem, name: str) -> float:
    if name == HEALTHY_EX and name not in item.numbers:
        return item.ex if item.gold_status == GOLD_HEALTHY else float("nan")
    return item_metric(item, name)


@dataclass(frozen=True)
class ScoreRow:
    """One run's means and intervals on one view, or on one category inside it."""

    view: str
    category: str | None  # None: the whole view
    run: str
    n: int
    intervals: Mapping[str, Interval]  # metric name -> interval, in table order
    #: Scores-table metrics the run's engine cannot give, with why (``metrics.not_defined``:
    #: r_ves where the engine counts no work); shown as such, never as a number.
    undefined: Mapping[str, str] = field(default_factory=dict)
    #: Correct answers whose r_ves bucket a work count of 0 picked, not the queries
    #: (``efficiency.resolved_by_counts``; docs/r-ves.md, "Resolution").
    r_ves_unresolved: int = 0


def sections(runs: Sequence[Run], context: Context) -> list[Section]:
    rows = score_rows(runs, resamples=context.resamples, seed=context.seed)
    return by_view(TITLE, EXPLANATION, rows, context, _blocks)


def _blocks(view: str, rows: list[ScoreRow], context: Context) -> list[Block]:
    # Every row of a view has the same metrics, in column order (score_rows).
    metrics = [(name, _label(name)) for name in rows[0].intervals]
    table = Table(
        ("Run", "Category", "n", *(title for _, title in metrics)),
        tuple(
            (
                row.run,
                row.category or "all",
                str(row.n),
                *(
                    "not defined" if name in row.undefined else fmt_ci(row.intervals[name])
                    for name, _ in metrics
                ),
            )
            # Whole-view rows first, then each category with the runs side by side (a stable
            # sort: score_rows lists the runs in report order).
            for row in sorted(rows, key=lambda row: row.category or "")
        ),
        (False, False, True, *(True for _ in metrics)),
    )
    whole = [row for row in rows if row.category is None]
    notes = [
        f"{label(name)} of {row.run}: {reason}."
        for row in whole
        for name, reason in row.undefined.items()
    ]
    notes += [
        f"{label(R_VES)} of {row.run}: on {row.r_ves_unresolved} correct answer(s) a work "
        "count of 0, taken as one unit, picked the bucket, not the queries (docs/r-ves.md, "
        '"Resolution").'
        for row in whole
        if row.r_ves_unresolved
    ]
    bars, same = coinciding(whole, metrics)
    notes += [
        f"{' = '.join(titles)}: the same mean and interval for every run here, shown as one bar."
        for titles in same
    ]
    charts = context.charts.draw("scores", view, "scores", plot_scores, whole, bars)
    by_category = [row for row in rows if row.category is not None]
    if by_category:
        charts += context.charts.draw(
            "categories", view, "EX by category", plot_categories, by_category
        )
    return [table, *notes, *charts]


def coinciding(
    rows: Sequence[ScoreRow], metrics: Sequence[tuple[str, str]]
) -> tuple[list[tuple[str, str]], list[list[str]]]:
    """The metrics to draw, one bar for each set of metrics whose mean and interval are equal
    for every run (EX = EX strict = EX set = R-VES in most runs: four equal bars say
    nothing), titled "EX = EX strict"; and the title lists of those sets."""
    groups: list[tuple[str, list[str], tuple]] = []
    for name, title in metrics:
        key = tuple(
            (
                round(r.intervals[name].mean, 12),
                round(r.intervals[name].low, 12),
                round(r.intervals[name].high, 12),
            )
            if name not in r.undefined and not np.isnan(r.intervals[name].mean)
            else (name,)  # undefined or empty: never merged
            for r in rows
        )
        for group in groups:
            if group[2] == key:
                group[1].append(title)
                break
        else:
            groups.append((name, [title], key))
    bars = [(name, " = ".join(titles)) for name, titles, _ in groups]
    return bars, [titles for _, titles, _ in groups if len(titles) > 1]


def score_metrics(items: Sequence[ScoredItem]) -> list[str]:
    """The metrics a table over ``items`` shows, in column order: the registry's Scores-table
    metrics of every benchmark, and those of one benchmark that the items have (TPC-DS's
    structural similarity)."""
    of_some = present([m.name for m in SCORE_COLUMNS], items)
    # VES and the EX family every score has; a newer metric (r_ves) only runs scored with it.
    always = {f.name for f in fields(ScoredItem)}
    return [m.name for m in SCORE_COLUMNS if m.name in always or m.name in of_some]


def score_rows(
    runs: Sequence[Run], *, resamples: int = RESAMPLES, seed: int = SEED
) -> list[ScoreRow]:
    """Per view, per run: the whole view, then each category (when there are several)."""
    rows = []
    for view, results in runs_by_view(runs):
        # The same columns for every run of a view (a metric a run lacks shows as NaN).
        metrics = score_metrics([item for _, result in results for item in result.items])
        if HEALTHY_EX not in metrics:
            metrics.append(HEALTHY_EX)
        for run, result in results:
            undefined = _undefined(result.items, result.engine)
            common = (metrics, resamples, seed, undefined)
            whole = _score_row(view, None, run.name, result.items, *common)
            rows.append(replace(whole, r_ves_unresolved=r_ves_unresolved(result.items)))
            categories = sorted({item.category for item in result.items if item.category})
            if len(categories) > 1:
                for category in categories:
                    items = [item for item in result.items if item.category == category]
                    rows.append(_score_row(view, category, run.name, items, *common))
    return rows


def r_ves_unresolved(items: Sequence[ScoredItem]) -> int:
    """How many of ``items`` are correct answers with an r_ves whose bucket the work counts do
    not resolve (a count of 0 decided it: ``efficiency.resolved_by_counts``)."""
    return sum(
        1
        for item in items
        if R_VES in item.numbers
        and item.ex >= 0.5
        and not item.reads_no_table
        and resolved_by_counts(item.gold_work, item.work) is False
    )


def _undefined(items: Sequence[ScoredItem], engine: str | None) -> dict[str, str]:
    """The Scores-table metrics that no item carries because ``engine`` cannot give them."""
    carried = set(present([m.name for m in SCORE_COLUMNS], items))
    reasons = {m.name: not_defined(m.name, engine) for m in SCORE_COLUMNS if m.name not in carried}
    return {name: reason for name, reason in reasons.items() if reason is not None}


def _score_row(view, category, run, items, metrics, resamples, seed, undefined) -> ScoreRow:
    values = np.array(
        [[_value(item, name) for name in metrics] for item in items], dtype=float
    ).reshape(len(items), len(metrics))
    intervals = bootstrap_cis(values, resamples=resamples, seed=seed)
    by_metric = dict(zip(metrics, intervals, strict=True))
    return ScoreRow(view, category, run, len(items), by_metric, undefined)


def plot_categories(rows: Sequence[ScoreRow]):
    """EX per category (x) and run (colour) with 95% bootstrap intervals, on one view."""
    categories = sorted({row.category for row in rows})
    runs = list(dict.fromkeys(row.run for row in rows))
    at = {(row.category, row.run): row.intervals[EX] for row in rows}
    figure = plots.new_figure(max(5.0, 0.9 * len(categories) * max(1, len(runs)) ** 0.5), 3.8)
    axes = figure.subplots()
    series, errors = {}, {}
    for run in runs:
        cells = [at.get((category, run)) for category in categories]
        series[run] = [cell.mean if cell else float("nan") for cell in cells]
        errors[run] = (
            [cell.mean - cell.low if cell else float("nan") for cell in cells],
            [cell.high - cell.mean if cell else float("nan") for cell in cells],
        )
    plots.grouped_bars(axes, categories, series, errors)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("EX (95% CI)")
    if len(categories) > 4:
        axes.tick_params(axis="x", labelrotation=30)
    return figure


def _tick(title: str) -> str:
    """A bar's label on two metrics a line, so "EX = EX strict = EX set = ..." stays under
    its bar instead of running into the next one."""
    parts = title.split(" = ")
    lines = [" = ".join(parts[i : i + 2]) for i in range(0, len(parts), 2)]
    return "\n= ".join(lines)


def plot_scores(rows: Sequence[ScoreRow], metrics: Sequence[tuple[str, str]]):
    """Each run's metric means with their 95% bootstrap intervals, on one view."""
    figure = plots.new_figure(max(5.0, 1.4 * len(metrics) + 0.4 * len(rows)), 3.6)
    axes = figure.subplots()
    series, errors = {}, {}
    for row in rows:
        means = [row.intervals[name].mean for name, _ in metrics]
        series[row.run] = means
        errors[row.run] = (
            [row.intervals[name].mean - row.intervals[name].low for name, _ in metrics],
            [row.intervals[name].high - row.intervals[name].mean for name, _ in metrics],
        )
    plots.grouped_bars(axes, [_tick(title) for _, title in metrics], series, errors)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("mean over items (95% CI)")
    return figure
