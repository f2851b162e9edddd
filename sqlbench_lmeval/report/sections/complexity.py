"""The report's "Complexity relative to gold (paper Table 1)" section: per view, each run's mean of
every complexity count over the items with a parseable prediction, divided by gold's mean on the
same items (docs/reports.md#reports-what-reporthtml-holds). ``report.complexity`` is another
thing: the charts of ``sqlbench-lmeval complexity`` over workloads, not a section of this report."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlbench_lmeval.report import plots
from sqlbench_lmeval.report.analysis import (
    COUNT_METRICS,
    GOLD_COUNT,
    PARSED,
    mean,
    present,
    runs_by_view,
)
from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.report.sections import Context, by_view, paragraph
from sqlbench_lmeval.report.tables import Block, Section, Table, fmt
from sqlbench_lmeval.scoring.scored import ScoredItem

TITLE = "Complexity relative to gold (paper Table 1)"
EXPLANATION = paragraph(
    """
    Model mean / gold mean of each complexity count over the items with a parseable prediction
    (the paper's Table 1 ratio; above 1: the model writes more complex SQL than gold); in
    brackets the two means. A dash: gold's mean is 0.
    """
)


@dataclass(frozen=True)
class ComplexityRow:
    """One run's mean complexity per count against gold's on the same items (paper Table 1)."""

    view: str
    run: str
    counts: Mapping[str, tuple[float, float, int]]  # name -> (model mean, gold mean, items)

    def ratio(self, name: str) -> float:
        model, gold, _ = self.counts[name]
        return model / gold if gold else math.nan


def sections(runs: Sequence[Run], context: Context) -> list[Section]:
    return by_view(TITLE, EXPLANATION, complexity_rows(runs), context, _blocks)


def _blocks(view: str, rows: list[ComplexityRow], context: Context) -> list[Block]:
    names = list(rows[0].counts)
    table = Table(
        ("Run", *(name.replace("_", " ") for name in names)),
        tuple(
            (
                row.run,
                *(
                    f"{fmt(row.ratio(name), 2)} ({fmt(row.counts[name][0], 2)} / "
                    f"{fmt(row.counts[name][1], 2)})"
                    if name in row.counts
                    else "–"
                    for name in names
                ),
            )
            for row in rows
        ),
        (False, *(True for _ in names)),
    )
    return [
        table,
        *context.charts.draw(
            "complexity", view, "complexity relative to gold", plot_complexity_ratios, rows
        ),
    ]


def complexity_names(items: Sequence[ScoredItem]) -> list[str]:
    """Counts reported for both the prediction (``x``) and gold (``gold_x``)."""
    counts = present([*COUNT_METRICS, *GOLD_COUNT.values()], items)
    return [name for name in COUNT_METRICS if name in counts and GOLD_COUNT[name] in counts]


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
                    (
                        item.numbers.get(name, math.nan),
                        item.numbers.get(GOLD_COUNT[name], math.nan),
                    )
                    for item in result.items
                    if item.numbers.get(PARSED, 1.0) >= 0.5
                ]
                pairs = [(m, g) for m, g in pairs if not (math.isnan(m) or math.isnan(g))]
                counts[name] = (
                    mean([m for m, _ in pairs]),
                    mean([g for _, g in pairs]),
                    len(pairs),
                )
            rows.append(ComplexityRow(view=view, run=run.name, counts=counts))
    return rows


def plot_complexity_ratios(rows: Sequence[ComplexityRow]):
    """Model mean complexity over gold mean per count (the paper's Table 1); 1 = as complex."""
    names = list(rows[0].counts) if rows else []
    figure = plots.new_figure(max(6.0, 1.0 * len(names) + 0.3 * len(rows)), 3.8)
    axes = figure.subplots()
    series = {row.run: [row.ratio(name) for name in names] for row in rows}
    plots.grouped_bars(axes, [name.replace("_", " ") for name in names], series)
    axes.axhline(1.0, color="#888", linewidth=1, linestyle="--")
    axes.set_ylabel("model mean / gold mean")
    axes.tick_params(axis="x", labelrotation=30)
    return figure
