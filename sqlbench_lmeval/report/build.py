"""``sqlbench-lmeval report``: runs in, ``report.md`` + ``report.html`` + PNG charts out (the HTML
embeds the charts, so it is the one file to share; the Markdown links the PNGs); the report is
the sections of :data:`SECTIONS`, in that order, one module of ``report.sections`` each (the
sections: docs/reports.md#reports-what-reporthtml-holds; their protocol:
docs/layout.md#report-sections)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.report.analysis import check_comparable, grouped_tasks, view_names
from sqlbench_lmeval.report.metadata import marked
from sqlbench_lmeval.report.plots import Charts
from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.report.sections import (
    Context,
    SectionBuilder,
    complexity,
    cost,
    databases,
    engines,
    outcomes,
    overview,
    pairs,
    result,
    retries,
    sampling,
    scores,
    similarity,
)
from sqlbench_lmeval.report.stats import RESAMPLES, SEED
from sqlbench_lmeval.report.tables import to_html, to_markdown

#: The report's sections in order.
SECTIONS: tuple[SectionBuilder, ...] = (
    result.sections,  # Result: EX per run with its interval, chart and table (before contents)
    overview.sections,  # Runs: views, versions, sources; how the numbers are computed
    scores.sections,  # Scores: VES, EX variants (and structural similarity) with intervals
    databases.sections,  # Scores by database: EX of each run per database
    pairs.sections,  # Paired comparisons (EX): paired bootstrap, McNemar, Holm
    engines.sections,  # Cross-engine verdicts: items whose verdict changes with the engine
    outcomes.sections,  # Outcomes and failures, with notes on truncated outputs
    similarity.sections,  # Structural similarity to gold (the TPC-DS paper's Table 2)
    complexity.sections,  # Complexity relative to gold (the TPC-DS paper's Table 1)
    sampling.sections,  # Sampled runs: voting and pass@k
    retries.sections,  # Retried runs: valid after r retries
    cost.sections,  # Cost: tokens and latency per answer, EX against tokens (metered runs)
)


@dataclass(frozen=True)
class ReportFiles:
    markdown: Path
    html: Path
    images: tuple[Path, ...]


def write_report(
    runs: Sequence[Run],
    output: str | Path,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> ReportFiles:
    """Write ``report.md``, ``report.html`` and the PNGs they show into ``output``; refuses
    runs that cannot be compared (``UserError``, before anything is written)."""
    if not runs:
        raise UserError("no runs to report on")
    check_comparable(runs)
    runs = marked(runs)  # a --limit run says so in its name, wherever its numbers appear
    folder = Path(output)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(f"cannot create {folder}: {error}") from error
    charts = Charts(folder, frozenset(grouped_tasks(runs)), [])
    context = Context(tuple(view_names(runs)), charts, resamples, seed)
    sections = [section for build in SECTIONS for section in build(runs, context)]
    title = "sqlbench-lmeval report: " + ", ".join(run.name for run in runs)
    markdown = folder / "report.md"
    page = folder / "report.html"
    markdown.write_text(to_markdown(title, sections), encoding="utf-8")
    page.write_text(to_html(title, sections, images=folder), encoding="utf-8")
    return ReportFiles(markdown=markdown, html=page, images=tuple(charts.images))


__all__ = ["SECTIONS", "ReportFiles", "write_report"]
