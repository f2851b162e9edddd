"""The report's first section, "Runs": every run's views with their item counts, comparison and
dataset versions and source, and how the numbers of the report are computed."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from sqlbench_lmeval import benchmarks
from sqlbench_lmeval.report.metadata import run_metadata
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
                    str(len(result.items))
                    # Left out because their gold did not finish: in no number below.
                    + (f" (+{len(result.excluded)} excluded)" if result.excluded else ""),
                    result.comparison_version or "unknown",
                    result.dataset_version or "unknown",
                    _shown(run.source),
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
    # A board's test set scored with our copy of its hidden gold (logiccat_test) says so.
    noted: dict[str, dict[str, None]] = {}
    for run in runs:
        for name, result in run.views().items():
            if note := benchmarks.gold_note(result.dataset_version):
                noted.setdefault(note, {})[name] = None
    notes += tuple(f"{', '.join(names)}: scored with the {note}." for note, names in noted.items())
    return [Section(TITLE, (table, *_details(runs), *notes, method))]


def _shown(source: str) -> str:
    """A run's path as a shared page shows it: the user's home folder written as ``~``."""
    home = str(Path.home())
    if home not in ("", "/") and (source == home or source.startswith(home + os.sep)):
        return "~" + source[len(home) :]
    return source


def _details(runs: Sequence[Run]) -> list:
    """How each run was made, as its results file records it; a note on limited runs."""
    known = [(run, run_metadata(run)) for run in runs]
    rows = tuple(
        (
            run.name,
            meta.model or "unknown",
            meta.model_args or "unknown",
            meta.date or "unknown",
            meta.generation or "unknown",
            meta.lm_eval_version or "unknown",
            meta.limit or "all items",
        )
        for run, meta in known
    )
    table = Table(
        ("Run", "Model", "Model arguments", "Date", "Generation", "lm-eval", "Items run"),
        rows,
    )
    limited = [run.name for run, meta in known if meta.limit is not None]
    if not limited:
        return [table]
    note = (
        "Runs marked [--limit …] answered only the first items of their tasks: their means "
        "are over those items and are not comparable with those of full runs: "
        + ", ".join(limited)
        + "."
    )
    return [table, note]
