"""The sections of ``report.md`` / ``report.html``: one module per section, one entry point each.

Every section module defines ``TITLE`` (its heading) and

    sections(runs: Sequence[Run], context: Context) -> list[Section]

which reads the runs itself and returns the section's headings with their blocks: the level-2
heading ``TITLE`` with its ``EXPLANATION``, usually followed by one level-3 heading per view (a
task or an lm-eval group, in ``context.views`` order; :func:`by_view` builds that shape). An
empty list leaves the section out of the report (a single run has no paired comparison, a run
that was not sampled no sampling section). The numbers behind a section's tables are public
functions of its module (``pair_rows``, ``retry_rows``, ...), so tests check them without
rendering; its plot functions draw figures that ``context.charts`` titles and saves.
``report.build.SECTIONS`` lists the sections in report order; adding a section is one module
here plus its line in that list (``tests/report/test_sections.py`` checks both).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from sqlbench_lmeval.report.plots import Charts
from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.report.tables import Block, Section


@dataclass(frozen=True)
class Context:
    """What every section is given beside the runs."""

    views: tuple[str, ...]  # every view name of every run, first-seen order (report order)
    charts: Charts  # draws the section's PNGs into the report folder
    resamples: int  # bootstrap resamples per interval
    seed: int  # the seed of every bootstrap


#: A section's entry point.
SectionBuilder = Callable[[Sequence[Run], Context], list[Section]]


class _ViewRow(Protocol):
    @property
    def view(self) -> str: ...


Row = TypeVar("Row", bound=_ViewRow)


def by_view(
    title: str,
    explanation: str,
    rows: Sequence[Row],
    context: Context,
    blocks: Callable[[str, list[Row], Context], Iterable[Block]],
) -> list[Section]:
    """A section with a table (and chart) per view: the heading and its explanation, then one
    level-3 heading per view that has rows, holding ``blocks(view, that view's rows, context)``;
    nothing when there are no rows at all."""
    if not rows:
        return []
    sections = [Section(title, (explanation,))]
    for view in context.views:
        view_rows = [row for row in rows if row.view == view]
        if view_rows:
            sections.append(Section(view, tuple(blocks(view, view_rows, context)), level=3))
    return sections


def paragraph(text: str) -> str:
    """Prose written across source lines as one paragraph: each run of white space (line breaks
    and indentation) becomes one space."""
    return " ".join(text.split())


__all__ = ["Context", "SectionBuilder", "by_view", "paragraph"]
