"""The report's "Cost: tokens and latency" section (``--model sqlbench-metered``): per task and
run, the tokens per answer (median and total), the median latency, the spend where ``score
--price`` gave one, and where the numbers came from; then a chart of EX against the median
tokens per answer, one point per run. A run without measurement is named as such and has no
point: nothing is drawn or written as zero for it (what is measured: docs/cost.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from sqlbench_lmeval.report import plots
from sqlbench_lmeval.report.analysis import EX, metric_mean, runs_by_view
from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.report.sections import Context, by_view, paragraph
from sqlbench_lmeval.report.tables import Block, Section, Table, fmt
from sqlbench_lmeval.scoring.cost import SPEND, TOKENIZER

TITLE = "Cost: tokens and latency"
EXPLANATION = paragraph(
    """
    For runs whose answers were metered (lm_eval --model sqlbench-metered): the tokens of each
    answer's requests, prompt and completion together (samples and retried attempts included),
    as the median per answer and the total over the answers counted; the median wall latency
    per answer; the spend, in the prices' own currency, only where `score --price` gave the
    prices. "From" says where the counts came from: the server's usage (what the server says;
    nothing here can check it), or a named tokenizer (verify counts again). Latency is one
    run's wall clock on one machine and network: compare it across runs made the same way. A
    run that was not metered has no numbers here, not zeros. The chart sets EX against the
    median tokens per answer, one point per metered run. Definitions: docs/cost.md.
    """
)


@dataclass(frozen=True)
class CostRow:
    view: str
    run: str
    n: int  # items of the view
    metered: int  # items with a measured cost (0: the run was not metered)
    counted: int  # ... of which both token counts are known
    median_tokens: float | None
    total_tokens: int | None
    median_latency_s: float | None
    spend: float | None  # the sum of the items' spend; None: no price was given
    sources: str  # where the counts came from, with how many items each
    ex: float


def sections(runs: Sequence[Run], context: Context) -> list[Section]:
    rows = cost_rows(runs)
    # A task none of whose runs was metered has no table: there is nothing to compare.
    measured_views = {row.view for row in rows if row.metered}
    rows = [row for row in rows if row.view in measured_views]
    return by_view(TITLE, EXPLANATION, rows, context, _blocks)


def cost_rows(runs: Sequence[Run]) -> list[CostRow]:
    """One row per (view, run), metered or not (a row with ``metered`` 0 says it was not)."""
    rows = []
    for view, results in runs_by_view(runs):
        for run, result in results:
            costs = [(item, item.cost) for item in result.items if item.cost is not None]
            counted = [
                (item, cost)
                for item, cost in costs
                if cost.prompt_tokens is not None and cost.completion_tokens is not None
            ]
            tokens = [cost.prompt_tokens + cost.completion_tokens for _, cost in counted]
            latencies = [cost.latency_s for _, cost in costs if cost.latency_s is not None]
            spends = [item.values[SPEND] for item, _ in costs if SPEND in item.values]
            rows.append(
                CostRow(
                    view=view,
                    run=run.name,
                    n=len(result.items),
                    metered=len(costs),
                    counted=len(counted),
                    median_tokens=float(median(tokens)) if tokens else None,
                    total_tokens=sum(tokens) if tokens else None,
                    median_latency_s=float(median(latencies)) if latencies else None,
                    spend=sum(spends) if spends else None,
                    sources=sources_text([cost for _, cost in costs]),
                    ex=metric_mean(result.items, EX),
                )
            )
    return rows


def sources_text(costs) -> str:
    """Where the counts came from, with the number of answers each: ``usage 3``,
    ``tokenizer ./tok 2``, ``not counted 1``."""
    counts = Counter(
        f"{cost.tokens_from} {cost.tokenizer}"
        if cost.tokens_from == TOKENIZER and cost.tokenizer
        else (cost.tokens_from or "not counted")
        for cost in costs
    )
    return ", ".join(f"{source} {n}" for source, n in sorted(counts.items()))


def _blocks(view: str, rows: list[CostRow], context: Context) -> list[Block]:
    measured = [row for row in rows if row.metered]
    priced = any(row.spend is not None for row in measured)
    table = Table(
        (
            "Run",
            "n",
            "metered",
            "tokens per answer (median)",
            "tokens (total)",
            "latency per answer (median, s)",
            *(("spend",) if priced else ()),
            "from",
        ),
        tuple(
            (
                row.run,
                str(row.n),
                _metered_text(row),
                _amount(row.median_tokens, 1),
                _amount(row.total_tokens),
                fmt(row.median_latency_s, 2),
                *((fmt(row.spend, 4),) if priced else ()),
                row.sources or "–",
            )
            for row in measured
        ),
        (False, True, True, True, True, True, *((True,) if priced else ()), False),
    )
    blocks: list[Block] = [table]
    unmeasured = [row.run for row in rows if not row.metered]
    if unmeasured:
        blocks.append(
            "Not measured (not run with sqlbench-metered; no numbers, and no point in the "
            "chart): " + ", ".join(unmeasured) + "."
        )
    charted = [row for row in measured if row.median_tokens is not None]
    if charted:
        blocks.extend(
            context.charts.draw(
                "cost", view, "EX against tokens per answer", plot_ex_against_tokens, charted
            )
        )
    return blocks


def _metered_text(row: CostRow) -> str:
    """How many answers were metered, and how many of them counted when not all were."""
    return f"{row.metered}" + (f" ({row.counted} counted)" if row.counted < row.metered else "")


def _amount(value, digits: int = 0) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def plot_ex_against_tokens(rows: Sequence[CostRow]):
    """EX (y) against the median tokens per answer (x), one labelled point per run."""
    figure = plots.new_figure(5.5, 3.6)
    axes = figure.subplots()
    for row in rows:
        axes.scatter([row.median_tokens], [row.ex], s=36, label=row.run, zorder=3)
        axes.annotate(
            row.run,
            (row.median_tokens, row.ex),
            textcoords="offset points",
            xytext=(5, 5),
            fontsize="small",
        )
    axes.set_xlabel("tokens per answer (median: prompt + completion)")
    axes.set_ylabel("EX")
    axes.set_ylim(-0.05, 1.05)
    low = min(row.median_tokens for row in rows)
    high = max(row.median_tokens for row in rows)
    margin = max((high - low) * 0.15, high * 0.1, 1.0)
    axes.set_xlim(max(0.0, low - margin), high + margin)
    axes.grid(alpha=0.3)
    axes.set_axisbelow(True)
    return figure


__all__ = ["TITLE", "CostRow", "cost_rows", "plot_ex_against_tokens", "sections"]
