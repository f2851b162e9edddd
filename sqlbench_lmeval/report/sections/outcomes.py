"""The report's "Outcomes and failures" section: per view, how each run's items ended (one
outcome class per item, as ``score``, ``verify`` and the explorer count them), items whose gold
was not ok, answers that read no table, the most frequent error kinds, and a note per run with
truncated outputs that says how to give them room."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sqlbench_lmeval.execution import Status
from sqlbench_lmeval.report import plots
from sqlbench_lmeval.report.analysis import OUTCOMES, error_kind, outcome_of, runs_by_view
from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.report.sections import Context, by_view, paragraph
from sqlbench_lmeval.report.tables import Block, Section, Table
from sqlbench_lmeval.scoring.data_dependence import (
    CHANGED,
    DIFFERS,
    NO_TABLE,
    NOT_TESTED,
    UNCHANGED,
    UNDECIDABLE,
)
from sqlbench_lmeval.scoring.item import GOLD_HEALTHY
from sqlbench_lmeval.scoring.verdicts import LOOP_ADVICE, TRUNCATION_ADVICE
from sqlbench_lmeval.vocabulary import VerdictClass

TITLE = "Outcomes and failures"
EXPLANATION = paragraph(
    """
    One class per item, counted as `score`, `verify` and the explorer count them. Correct: ran
    and EX = 1. Wrong result: ran, but the result differs from gold. Broken gold: ran, on an
    item whose gold gave no result when the benchmark's data was prepared (not compared; EX 0
    for every model). Truncated: cut off by the generation limit and not correct, whatever its
    status. Other columns count execution statuses. Gold not ok: items whose gold query failed
    or returned nothing usable (scored as usual, but they say little about the model). Reads
    no data: answers that ran but do not read the data: they name no table, or matched gold
    with a result that is not gold's on a perturbed copy of the database where gold's changed
    (constants; EX counts them, `ex_reads_data` and `r_ves` do not). Under each table, how that
    was decided for the answers (docs/scoring.md, "Data dependence"): the flagged ways (no table
    named; not gold's result on a perturbed copy; unchanged on the copy, in runs scored before
    COMPARISON_VERSION 5) add up to Reads no data; changed: it reads the data (gold's result on
    every copy where gold's changed); undecidable: gold's result changed on no copy, so the test
    cannot tell; not tested: a server keeps no copy. An answer that did not match gold is
    not run again and is counted in none of them unless it names no table.
    """
)

#: ``data_dependence`` values, the flagged first, with their column titles.
DATA_DEPENDENCE_COLUMNS = (
    (NO_TABLE, "No table named"),
    (DIFFERS, "Not gold's on a copy"),
    (UNCHANGED, "Unchanged on the copy"),
    (CHANGED, "Changed (reads the data)"),
    (UNDECIDABLE, "Undecidable"),
    (NOT_TESTED, "Not tested"),
)

#: Error kinds listed per row of the failure table.
TOP_ERROR_KINDS = 3


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
    reads_no_table: int = 0  # answers that ran but do not read the data (flagged constants)
    # How many answers each ``data_dependence`` verdict judged (only the values that occur).
    data_dependence: Mapping[str, int] = field(default_factory=dict)


def sections(runs: Sequence[Run], context: Context) -> list[Section]:
    return by_view(TITLE, EXPLANATION, failure_rows(runs), context, _blocks)


def _blocks(view: str, rows: list[FailureRow], context: Context) -> list[Block]:
    outcomes = _outcome_names(rows)
    table = Table(
        (
            "Run",
            "n",
            *(name.replace("_", " ") for name in outcomes),
            "Gold not ok",
            "Reads no data",
            "Top error kinds",
        ),
        tuple(
            (
                row.run,
                str(row.n),
                *(str(row.outcomes.get(name, 0)) for name in outcomes),
                str(row.unhealthy_gold),
                str(row.reads_no_table),
                "; ".join(f"{kind} ×{count}" for kind, count in row.error_kinds[:TOP_ERROR_KINDS])
                or "–",
            )
            for row in rows
        ),
        (False, True, *(True for _ in outcomes), True, True, False),
    )
    return [
        table,
        *data_dependence_tables(rows),
        *truncation_notes(rows),
        *context.charts.draw("outcomes", view, "outcomes", plot_failures, rows),
    ]


def data_dependence_tables(rows: Sequence[FailureRow]) -> list[Block]:
    """Per run, how many answers each ``data_dependence`` verdict judged; nothing when no
    answer of the view was judged (runs scored before the test existed)."""
    if not any(row.data_dependence for row in rows):
        return []
    return [
        "Whether the answers read the data, as decided per answer:",
        Table(
            ("Run", *(title for _, title in DATA_DEPENDENCE_COLUMNS)),
            tuple(
                (
                    row.run,
                    *(
                        str(row.data_dependence.get(value, 0))
                        for value, _ in DATA_DEPENDENCE_COLUMNS
                    ),
                )
                for row in rows
            ),
            (False, *(True for _ in DATA_DEPENDENCE_COLUMNS)),
        ),
    ]


def truncation_notes(rows: Sequence[FailureRow]) -> list[str]:
    """Per run with truncated outputs: how many, and how to give them room; those that end in
    a repetition loop apart, since more room would not end them."""
    notes = []
    for row in rows:
        if row.truncated > row.looping:
            budget = row.truncated - row.looping
            notes.append(
                f"{row.run}: {budget} of {row.n} outputs were truncated: {TRUNCATION_ADVICE}."
            )
        if row.looping:
            notes.append(
                f"{row.run}: {row.looping} of {row.n} outputs were truncated in a repetition "
                f"loop: {LOOP_ADVICE}."
            )
    return notes


def failure_rows(runs: Sequence[Run]) -> list[FailureRow]:
    rows = []
    for view, results in runs_by_view(runs):
        for run, result in results:
            outcomes = Counter(outcome_of(item) for item in result.items)
            kinds = Counter(
                error_kind(item.error) for item in result.items if item.status == Status.ERROR.value
            )
            rows.append(
                FailureRow(
                    view=view,
                    run=run.name,
                    n=len(result.items),
                    outcomes={**{name: outcomes.get(name, 0) for name in OUTCOMES}, **outcomes},
                    error_kinds=tuple(sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
                    unhealthy_gold=sum(
                        1 for item in result.items if item.gold_status != GOLD_HEALTHY
                    ),
                    truncated=sum(1 for item in result.items if item.truncated),
                    looping=sum(1 for item in result.items if item.repetition_loop),
                    reads_no_table=sum(1 for item in result.items if item.reads_no_table),
                    data_dependence=dict(
                        Counter(
                            item.data_dependence
                            for item in result.items
                            if item.data_dependence is not None
                        )
                    ),
                )
            )
    return rows


def _outcome_names(rows: Sequence[FailureRow]) -> list[str]:
    """OUTCOMES, then any other status the rows counted, by name."""
    return list(OUTCOMES) + sorted({name for row in rows for name in row.outcomes} - set(OUTCOMES))


# Outcome colours: green for right, warm for failures, grey for missing.
_OUTCOME_COLOURS = {
    VerdictClass.CORRECT: "#2ca02c",
    VerdictClass.WRONG_RESULT: "#ff7f0e",
    VerdictClass.BROKEN_GOLD: "#bcbd22",
    VerdictClass.ERROR: "#d62728",
    VerdictClass.TIMEOUT: "#9467bd",
    VerdictClass.TOO_MANY_ROWS: "#8c564b",
    VerdictClass.NO_SQL: "#e377c2",
    VerdictClass.CRASHED: "#7f7f7f",
    VerdictClass.MISSING: "#c7c7c7",
}


def plot_failures(rows: Sequence[FailureRow]):
    """Share of items per outcome, one stacked horizontal bar per run."""
    figure = plots.new_figure(7.5, 1.2 + 0.5 * len(rows))
    axes = figure.subplots()
    left = [0.0] * len(rows)
    for name in _outcome_names(rows):
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
    return figure
