"""The sections of ``report.md`` / ``report.html``: one module per section, each with ``TITLE`` and
one entry point, ``sections(runs, context)``, listed in report order by
``report.build.SECTIONS`` (the protocol and how to add a section:
docs/layout.md#report-sections)."""

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
