"""The report's "Structural similarity to gold (paper Table 2)" section: per view, each run's
mean similarity to gold per SQL feature, their average, the count-based variant and the share
of parseable predictions (TPC-DS; views whose items carry no ``sim_<feature>`` are left out)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlbench_lmeval.report import plots
from sqlbench_lmeval.report.analysis import (
    COUNT_SIMILARITY,
    FEATURE_METRICS,
    PARSED,
    STRUCTURAL_SIMILARITY,
    label,
    metric_mean,
    present,
    runs_by_view,
)
from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.report.sections import Context, by_view, paragraph
from sqlbench_lmeval.report.tables import Block, Section, Table, fmt

TITLE = "Structural similarity to gold (paper Table 2)"
EXPLANATION = paragraph(
    """
    Mean over items of the multiset Jaccard similarity of each SQL feature between prediction
    and gold; Average is the mean over the features (structural_similarity); Count-based
    compares feature sizes (min/max, structural_count_similarity). An unparseable prediction
    scores 0 on all of them; Parsed is the share of parseable predictions.
    """
)


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


def sections(runs: Sequence[Run], context: Context) -> list[Section]:
    return by_view(TITLE, EXPLANATION, similarity_rows(runs), context, _blocks)


def _blocks(view: str, rows: list[SimilarityRow], context: Context) -> list[Block]:
    features = list(rows[0].features)
    table = Table(
        (
            "Run",
            "n",
            *(label(name) for name in features),
            "Average",
            "Count-based",
            "Parsed",
        ),
        tuple(
            (
                row.run,
                str(row.n),
                *(fmt(row.features.get(name, math.nan)) for name in features),
                fmt(row.average),
                fmt(row.count_based),
                fmt(row.parsed),
            )
            for row in rows
        ),
        (False, True, *(True for _ in features), True, True, True),
    )
    return [
        table,
        *context.charts.draw(
            "similarity", view, "structural similarity per feature", plot_similarity, rows
        ),
    ]


def similarity_rows(runs: Sequence[Run]) -> list[SimilarityRow]:
    rows = []
    for view, results in runs_by_view(runs):
        for run, result in results:
            features = present(FEATURE_METRICS, result.items)
            if not features:
                continue
            rows.append(
                SimilarityRow(
                    view=view,
                    run=run.name,
                    n=len(result.items),
                    features={name: metric_mean(result.items, name) for name in features},
                    average=metric_mean(result.items, STRUCTURAL_SIMILARITY),
                    count_based=metric_mean(result.items, COUNT_SIMILARITY),
                    parsed=metric_mean(result.items, PARSED),
                )
            )
    return rows


def plot_similarity(rows: Sequence[SimilarityRow]):
    """Mean Jaccard similarity to gold per SQL feature (the paper's Table 2 as bars)."""
    features = list(rows[0].features) if rows else []
    groups = [label(name) for name in features] + ["Average"]
    figure = plots.new_figure(max(6.0, 0.9 * len(groups) + 0.3 * len(rows)), 3.8)
    axes = figure.subplots()
    series = {
        row.run: [row.features.get(name, math.nan) for name in features] + [row.average]
        for row in rows
    }
    plots.grouped_bars(axes, groups, series)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("mean similarity to gold")
    axes.tick_params(axis="x", labelrotation=30)
    return figure
