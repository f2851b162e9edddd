"""The report's "Paired comparisons (EX)" section: every two runs on every view they share,
matched by item id: EX of each on the common items, the paired bootstrap interval of the
difference, McNemar's exact test on the discordant items, and Holm's adjustment when a view
has more than one pair."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations

from sqlbench_lmeval.report import plots
from sqlbench_lmeval.report.analysis import mean, paired_items, runs_by_view
from sqlbench_lmeval.report.runs import Run, TaskResult
from sqlbench_lmeval.report.sections import Context, by_view, paragraph
from sqlbench_lmeval.report.stats import (
    RESAMPLES,
    SEED,
    Interval,
    holm,
    mcnemar_exact,
    paired_bootstrap_ci,
)
from sqlbench_lmeval.report.tables import Block, Section, Table, fmt, fmt_p, fmt_signed_ci

TITLE = "Paired comparisons (EX)"
EXPLANATION = paragraph(
    """
    Δ EX = EX(A) − EX(B) on the common items. A only / B only: items only that run got right
    (McNemar's discordant pairs).
    """
)


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


def sections(runs: Sequence[Run], context: Context) -> list[Section]:
    rows = pair_rows(runs, resamples=context.resamples, seed=context.seed)
    return by_view(TITLE, EXPLANATION, rows, context, _blocks)


def _blocks(view: str, rows: list[PairRow], context: Context) -> list[Block]:
    # With more than one pair, each p-value is one of several tests: Holm adjusts for that.
    several = len(rows) > 1
    table = Table(
        (
            "A",
            "B",
            "Common items",
            "EX A",
            "EX B",
            "Δ EX [95% CI]",
            "A only",
            "B only",
            "McNemar p",
            *(("Holm p",) if several else ()),
        ),
        tuple(
            (
                row.a,
                row.b,
                f"{row.n_common} (A {row.n_a}, B {row.n_b})",
                fmt(row.ex_a),
                fmt(row.ex_b),
                fmt_signed_ci(row.difference),
                str(row.a_only_correct),
                str(row.b_only_correct),
                fmt_p(row.p_value),
                *((fmt_p(row.p_holm),) if several else ()),
            )
            for row in rows
        ),
        (False, False, True, True, True, True, True, True, True, *((True,) if several else ())),
    )
    blocks: list[Block] = [table]
    if several:
        blocks.append(
            f"Holm p: the McNemar p-values adjusted for the {len(rows)} comparisons on "
            f"{view} (Holm's step-down method, which bounds the chance of any false "
            "positive among them); read this column, not the unadjusted one, when "
            "looking for any significant pair."
        )
    partial = [row for row in rows if row.n_common < max(row.n_a, row.n_b)]
    for row in partial:
        blocks.append(
            f"{row.a} has {row.n_a} items and {row.b} has {row.n_b}: only the "
            f"{row.n_common} items present in both are compared."
        )
    blocks.extend(context.charts.draw("paired", view, "paired EX differences", plot_pairs, rows))
    return blocks


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
        ex_a=mean(ex_a),
        ex_b=mean(ex_b),
        difference=paired_bootstrap_ci(ex_a, ex_b, resamples=resamples, seed=seed),
        a_only_correct=a_only,
        b_only_correct=b_only,
        p_value=mcnemar_exact(a_only, b_only),
    )


def plot_pairs(rows: Sequence[PairRow]):
    """EX differences between runs with paired 95% intervals (a forest plot), on one view."""
    figure = plots.new_figure(6.5, 0.9 + 0.45 * len(rows))
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
    return figure
