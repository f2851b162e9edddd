"""PNG charts of a report, drawn with matplotlib's Agg renderer.

matplotlib is imported inside the functions only (``sqlbench-lmeval --help`` must stay fast),
and figures are built with the object API (``Figure`` + ``FigureCanvasAgg``), never pyplot: no
global state, no GUI backend, nothing to close.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from sqlbench_lmeval.report.analysis import (
    OUTCOMES,
    ComplexityRow,
    FailureRow,
    PairRow,
    ScoreRow,
    SimilarityRow,
    feature_label,
)

DPI = 110

# Outcome colours: green for right, warm for failures, grey for missing.
_OUTCOME_COLOURS = {
    "correct": "#2ca02c",
    "wrong_result": "#ff7f0e",
    "error": "#d62728",
    "timeout": "#9467bd",
    "too_many_rows": "#8c564b",
    "no_sql": "#e377c2",
    "crashed": "#7f7f7f",
    "missing": "#c7c7c7",
}


def new_figure(width: float, height: float):
    """A matplotlib Figure bound to the Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def save(figure, path: Path) -> Path:
    # A tight box keeps labels that sit outside the axes (polar ticks, legends) in the image.
    figure.savefig(path, format="png", dpi=DPI, bbox_inches="tight", pad_inches=0.1)
    return path


def grouped_bars(axes, groups: Sequence[str], series: dict[str, Sequence[float]], errors=None):
    """Bars per group (x) and series (colour); ``errors[name]`` = (lower, upper) offsets."""
    count = max(len(series), 1)
    width = 0.8 / count
    for index, (name, values) in enumerate(series.items()):
        positions = [x - 0.4 + width * (index + 0.5) for x in range(len(groups))]
        heights = [0.0 if math.isnan(value) else value for value in values]
        yerr = None
        if errors is not None and name in errors:
            yerr = [[0.0 if math.isnan(e) else e for e in side] for side in errors[name]]
        axes.bar(positions, heights, width, label=name, yerr=yerr, capsize=3)
    axes.set_xticks(range(len(groups)), list(groups))
    axes.grid(axis="y", alpha=0.3)
    axes.set_axisbelow(True)
    if len(series) > 1:
        axes.legend(fontsize="small")


def plot_scores(rows: Sequence[ScoreRow], metrics: Sequence[tuple[str, str]], path: Path) -> Path:
    """Each run's metric means with their 95% bootstrap intervals, on one view."""
    figure = new_figure(max(5.0, 1.4 * len(metrics) + 0.4 * len(rows)), 3.6)
    axes = figure.subplots()
    series, errors = {}, {}
    for row in rows:
        means = [row.intervals[name].mean for name, _ in metrics]
        series[row.run] = means
        errors[row.run] = (
            [row.intervals[name].mean - row.intervals[name].low for name, _ in metrics],
            [row.intervals[name].high - row.intervals[name].mean for name, _ in metrics],
        )
    grouped_bars(axes, [title for _, title in metrics], series, errors)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("mean over items (95% CI)")
    axes.set_title(f"{rows[0].view}: scores" if rows else "scores")
    return save(figure, path)


def plot_pairs(rows: Sequence[PairRow], path: Path) -> Path:
    """EX differences between runs with paired 95% intervals (a forest plot), on one view."""
    figure = new_figure(6.5, 0.9 + 0.45 * len(rows))
    axes = figure.subplots()
    labels = [f"{row.a} − {row.b} (n={row.n_common})" for row in rows]
    for y, row in enumerate(rows):
        interval = row.difference
        axes.errorbar(
            [interval.mean],
            [y],
            xerr=[[interval.mean - interval.low], [interval.high - interval.mean]],
            fmt="o",
            color="#1f77b4",
            capsize=4,
        )
    axes.axvline(0.0, color="#888", linewidth=1, linestyle="--")
    axes.set_yticks(range(len(rows)), labels)
    axes.invert_yaxis()
    axes.set_xlabel("difference in EX (paired bootstrap 95% CI)")
    axes.set_title(f"{rows[0].view}: paired EX differences" if rows else "paired differences")
    return save(figure, path)


def plot_failures(rows: Sequence[FailureRow], path: Path) -> Path:
    """Share of items per outcome, one stacked horizontal bar per run."""
    figure = new_figure(7.5, 1.2 + 0.5 * len(rows))
    axes = figure.subplots()
    names = list(OUTCOMES) + sorted({name for row in rows for name in row.outcomes} - set(OUTCOMES))
    left = [0.0] * len(rows)
    for name in names:
        shares = [row.outcomes.get(name, 0) / row.n if row.n else 0.0 for row in rows]
        if not any(shares):
            continue
        axes.barh(
            range(len(rows)),
            shares,
            left=left,
            label=name.replace("_", " "),
            color=_OUTCOME_COLOURS.get(name),
        )
        left = [a + b for a, b in zip(left, shares, strict=True)]
    axes.set_yticks(range(len(rows)), [row.run for row in rows])
    axes.invert_yaxis()
    axes.set_xlim(0, 1)
    axes.set_xlabel("share of items")
    axes.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    axes.set_title(f"{rows[0].view}: outcomes" if rows else "outcomes")
    return save(figure, path)


def plot_similarity(rows: Sequence[SimilarityRow], path: Path) -> Path:
    """Mean Jaccard similarity to gold per SQL feature (the paper's Table 2 as bars)."""
    features = list(rows[0].features) if rows else []
    groups = [feature_label(name) for name in features] + ["Average"]
    figure = new_figure(max(6.0, 0.9 * len(groups) + 0.3 * len(rows)), 3.8)
    axes = figure.subplots()
    series = {
        row.run: [row.features.get(name, math.nan) for name in features] + [row.average]
        for row in rows
    }
    grouped_bars(axes, groups, series)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("mean similarity to gold")
    axes.tick_params(axis="x", labelrotation=30)
    axes.set_title(f"{rows[0].view}: structural similarity per feature" if rows else "")
    return save(figure, path)


def plot_complexity_ratios(rows: Sequence[ComplexityRow], path: Path) -> Path:
    """Model mean complexity over gold mean per count (the paper's Table 1); 1 = as complex."""
    names = list(rows[0].counts) if rows else []
    figure = new_figure(max(6.0, 1.0 * len(names) + 0.3 * len(rows)), 3.8)
    axes = figure.subplots()
    series = {row.run: [row.ratio(name) for name in names] for row in rows}
    grouped_bars(axes, [name.replace("_", " ") for name in names], series)
    axes.axhline(1.0, color="#888", linewidth=1, linestyle="--")
    axes.set_ylabel("model mean / gold mean")
    axes.tick_params(axis="x", labelrotation=30)
    axes.set_title(f"{rows[0].view}: complexity relative to gold" if rows else "")
    return save(figure, path)


__all__ = [
    "new_figure",
    "plot_complexity_ratios",
    "plot_failures",
    "plot_pairs",
    "plot_scores",
    "plot_similarity",
    "save",
]
