"""The report's first section, "Runs": every run's views with their item counts, comparison and
dataset versions and source, and how the numbers of the report are computed."""

from __future__ import annotations

from collections.abc import Sequence

from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.report.sections import Context
from sqlbench_lmeval.report.stats import LEVEL
from sqlbench_lmeval.report.tables import Section, Table

TITLE = "Runs"


def sections(runs: Sequence[Run], context: Context) -> list[Section]:
    rows = []
    for run in runs:
        for name, result in run.views().items():
            rows.append(
                (
                    run.name,
                    name,
                    str(len(result.items)),
                    result.comparison_version or "unknown",
                    result.dataset_version or "unknown",
                    run.source,
                )
            )
    table = Table(
        ("Run", "Task / group", "Items", "Comparison version", "Dataset version", "Source"),
        tuple(rows),
        (False, False, True, False, False, False),
    )
    method = (
        f"Means are over items; brackets give {LEVEL:.0%} percentile bootstrap intervals "
        f"({context.resamples:,} resamples of the items, seed {context.seed}). Paired "
        "comparisons use only the items both runs answered, resample those items (keeping each "
        "item's two answers together), and test EX with the exact two-sided McNemar test on the "
        "discordant items."
    )
    # How a run was read, where a reader must know it (an incomplete run's samples file).
    notes = tuple(f"Run {run.name}: {note}" for run in runs for note in run.notes)
    return [Section(TITLE, (table, *notes, method))]
