"""The report's first section, "Result": what a reader came for, on the first screen (before the
table of contents and the runs' metadata): each view's EX per run with its 95% interval, drawn
as one chart with the table beside it (TPC-DS adds its paper's primary metric, the structural
similarity, as a column). The numbers are those of the Scores section (the same bootstrap of the
same items, one seeded generator per column); views inside a group are left to that section,
their group stands for them here."""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sqlbench_lmeval.report import plots
from sqlbench_lmeval.report.analysis import STRUCTURAL_SIMILARITY, item_metric, label, runs_by_view
from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.report.sections import Context, paragraph
from sqlbench_lmeval.report.stats import Interval, bootstrap_cis
from sqlbench_lmeval.report.tables import Beside, Section, Table, fmt_ci
from sqlbench_lmeval.scoring.metrics import EX

TITLE = "Result"
EXPLANATION = paragraph(
    """
    EX (the share of answers whose result equals gold's) of each run, with its 95% bootstrap
    interval; the sections below break it down (other metrics, categories, paired tests).
    """
)


@dataclass(frozen=True)
class ResultRow:
    """One run's EX (and, where its items have it, structural similarity) on one view."""

    view: str
    run: str
    n: int
    ex: Interval
    similarity: Interval | None  # None: the view's items carry no structural similarity


def result_rows(runs: Sequence[Run], context: Context) -> list[ResultRow]:
    """Per view that gets a chart (a group, or a task in none), per run that has it."""
    rows = []
    for view, results in runs_by_view(runs):
        if view in context.charts.skip:
            continue
        for run, result in results:
            names = [EX]
            if any(STRUCTURAL_SIMILARITY in item.numbers for item in result.items):
                names.append(STRUCTURAL_SIMILARITY)
            values = np.array(
                [[item_metric(item, name) for name in names] for item in result.items],
                dtype=float,
            ).reshape(len(result.items), len(names))
            intervals = bootstrap_cis(values, resamples=context.resamples, seed=context.seed)
            similarity = intervals[1] if len(intervals) > 1 else None
            rows.append(ResultRow(view, run.name, len(result.items), intervals[0], similarity))
    return rows


def sections(runs: Sequence[Run], context: Context) -> list[Section]:
    rows = result_rows(runs, context)
    if not rows:
        return []
    similarity = any(row.similarity is not None for row in rows)
    table = Table(
        (
            "Task / group",
            "Run",
            "n",
            "EX [95% CI]",
            *([f"{label(STRUCTURAL_SIMILARITY)} [95% CI]"] if similarity else []),
        ),
        tuple(
            (
                row.view,
                row.run,
                str(row.n),
                fmt_ci(row.ex),
                *([fmt_ci(row.similarity) if row.similarity else "–"] if similarity else []),
            )
            for row in rows
        ),
        (False, False, True, True, *([True] if similarity else [])),
    )
    chart = context.charts.draw("result", "EX", "each run with its 95% interval", plot_result, rows)
    return [Section(TITLE, (EXPLANATION, Beside((*chart, table))), lead=True)]


def plot_result(rows: Sequence[ResultRow]):
    """EX per view and run as horizontal bars with their 95% intervals, one colour per run,
    the views top to bottom in report order."""
    runs = list(dict.fromkeys(row.run for row in rows))
    colours = {run: f"C{index % 10}" for index, run in enumerate(runs)}
    views = len({row.view for row in rows})
    # Long run names on short lines, so the bars keep the chart's width; "[--limit 30]" is kept
    # on one line (its spaces made non-breaking).
    names = [row.run if views == 1 else f"{row.view}: {row.run}" for row in rows]
    ticks = [
        textwrap.fill(re.sub(r"\[[^\]]*\]", lambda m: m.group(0).replace(" ", "\u00a0"), name), 24)
        for name in names
    ]
    lines = sum(max(1, tick.count("\n") + 1) for tick in ticks)
    figure = plots.new_figure(4.6, max(1.6, 0.2 * lines + 0.12 * len(rows) + 0.9))
    axes = figure.subplots()
    positions = list(range(len(rows)))[::-1]  # the first row at the top
    for y, row in zip(positions, rows, strict=True):
        mean = 0.0 if math.isnan(row.ex.mean) else row.ex.mean
        error = (
            None
            if math.isnan(row.ex.mean)
            else [[row.ex.mean - row.ex.low], [row.ex.high - row.ex.mean]]
        )
        axes.barh(y, mean, height=0.7, color=colours[row.run], xerr=error, capsize=3)
    axes.set_yticks(positions, ticks)
    axes.set_xlim(0, 1)
    axes.set_xlabel("EX (95% CI)")
    axes.grid(axis="x", alpha=0.3)
    axes.set_axisbelow(True)
    return figure


__all__ = ["EXPLANATION", "TITLE", "ResultRow", "plot_result", "result_rows", "sections"]
