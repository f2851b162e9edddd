"""The report's "Sampled runs: voting and pass@k" section (``*_sc`` tasks, ``score --samples``):
voting against the first sample in a table, and the pass@k curve in a chart (what it shows:
docs/reports.md#reports-what-reporthtml-holds)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from sqlbench_lmeval.report import plots
from sqlbench_lmeval.report.analysis import (
    EX,
    MEAN_EX,
    PASS_AT,
    VOTED_EX,
    metric_mean,
    runs_by_view,
)
from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.report.sections import Context, by_view, paragraph
from sqlbench_lmeval.report.tables import Block, Section, Table, fmt

TITLE = "Sampled runs: voting and pass@k"
EXPLANATION = paragraph(
    """
    For runs with several samples per question: EX of the first sample, ex_maj (execution-result
    voting: the largest group of equal results wins, ties to the earliest), ex_mean (mean over
    samples), and pass@k (unbiased estimator of Chen et al. 2021).
    """
)


@dataclass(frozen=True)
class SamplingRow:
    view: str
    run: str
    n: int
    ex_first: float  # EX of each item's first sample
    ex_maj: float
    ex_mean: float
    pass_at: dict[int, float]  # k -> mean pass@k


def sections(runs: Sequence[Run], context: Context) -> list[Section]:
    return by_view(TITLE, EXPLANATION, sampling_rows(runs), context, _blocks)


def _blocks(view: str, rows: list[SamplingRow], context: Context) -> list[Block]:
    ks = sorted({k for row in rows for k in row.pass_at})
    table = Table(
        ("Run", "n", "EX (first)", VOTED_EX, MEAN_EX, *(f"pass@{k}" for k in ks)),
        tuple(
            (
                row.run,
                str(row.n),
                fmt(row.ex_first),
                fmt(row.ex_maj),
                fmt(row.ex_mean),
                *(fmt(row.pass_at.get(k, math.nan)) for k in ks),
            )
            for row in rows
        ),
        (False, *(True for _ in range(4 + len(ks)))),
    )
    return [
        table,
        *context.charts.draw("pass_at_k", view, "pass@k (dashed: ex_maj)", plot_pass_at_k, rows),
    ]


def sampling_rows(runs: Sequence[Run]) -> list[SamplingRow]:
    """One row per (view, run) whose items were sampled; means over the view's items."""
    rows = []
    for view, results in runs_by_view(runs):
        for run, result in results:
            items = result.items
            if not items or not any(VOTED_EX in item.numbers for item in items):
                continue
            names = {name for item in items for name in item.numbers}
            ks = [k for k, name in PASS_AT.items() if name in names]
            rows.append(
                SamplingRow(
                    view=view,
                    run=run.name,
                    n=len(items),
                    ex_first=metric_mean(items, EX),
                    ex_maj=metric_mean(items, VOTED_EX),
                    ex_mean=metric_mean(items, MEAN_EX),
                    pass_at={k: metric_mean(items, PASS_AT[k]) for k in ks},
                )
            )
    return rows


def plot_pass_at_k(rows: Sequence[SamplingRow]):
    """pass@k against k (log scale), one line per run, with the voted EX as a dashed level."""
    figure = plots.new_figure(5.5, 3.6)
    axes = figure.subplots()
    for row in rows:
        ks = sorted(row.pass_at)
        line = axes.plot(ks, [row.pass_at[k] for k in ks], marker="o", label=f"{row.run} pass@k")
        axes.axhline(row.ex_maj, linestyle="--", color=line[0].get_color(), alpha=0.6)
    axes.set_xscale("log", base=2)
    ticks = sorted({k for row in rows for k in row.pass_at})
    axes.set_xticks(ticks, [str(k) for k in ticks])
    axes.set_xlabel("k (samples drawn)")
    axes.set_ylabel("mean over items")
    axes.set_ylim(0, 1.05)
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    return figure
