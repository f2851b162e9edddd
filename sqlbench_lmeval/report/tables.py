"""A small document model (sections of paragraphs, tables and images) and its two renderings:
Markdown and a self-contained HTML page (inline CSS, a table of contents, images embedded as
``data:`` URIs so the page alone shows its charts); text from runs is written as text in both.

>>> fmt_ci(Interval(mean=0.75, low=0.25, high=1.0, n=4)), fmt_p(3e-6), fmt(float("nan"))
('0.750 [0.250, 1.000]', '3.00e-06', '–')
>>> table = Table(("run", "EX"), (("a|b", "0.750"), ("<i>c</i>", "–")), numeric=(False, True))
>>> print(to_markdown("Report", [Section("Scores", (table,))]), end="")
# Report
<BLANKLINE>
## Scores
<BLANKLINE>
| run | EX |
| --- | ---: |
| a\\|b | 0.750 |
| &lt;i&gt;c&lt;/i&gt; | – |"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlbench_lmeval.report.stats import Interval


@dataclass(frozen=True)
class Table:
    """Cells are already formatted text; ``numeric`` marks right-aligned columns."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...] = ()

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"row {row!r} has {len(row)} cells, not {len(self.columns)}")


@dataclass(frozen=True)
class Image:
    """A PNG beside the report, referenced by its file name."""

    path: str
    alt: str


Block = str | Table | Image  # a str is a paragraph


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...]
    level: int = 2


# --- number formatting -------------------------------------------------------------------------


def fmt(value: float, digits: int = 3) -> str:
    """A number with ``digits`` decimals; an en dash for NaN (nothing to show)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"


def fmt_ci(interval: Interval, digits: int = 3) -> str:
    """``0.750 [0.250, 1.000]``."""
    if math.isnan(interval.mean):
        return "–"
    return (
        f"{fmt(interval.mean, digits)} [{fmt(interval.low, digits)}, {fmt(interval.high, digits)}]"
    )


def fmt_signed_ci(interval: Interval, digits: int = 3) -> str:
    if math.isnan(interval.mean):
        return "–"
    return f"{interval.mean:+.{digits}f} [{interval.low:+.{digits}f}, {interval.high:+.{digits}f}]"


def fmt_p(p: float) -> str:
    """A p-value: 4 significant digits, scientific below 0.0001."""
    if math.isnan(p):
        return "–"
    return f"{p:.2e}" if 0 < p < 1e-4 else f"{p:.4g}"


# --- Markdown ----------------------------------------------------------------------------------


def to_markdown(title: str, sections: Sequence[Section]) -> str:
    parts = [f"# {title}\n"]
    for section in sections:
        parts.append(f"{'#' * section.level} {section.title}\n")
        for block in section.blocks:
            parts.append(_block_markdown(block))
    return "\n".join(parts).rstrip() + "\n"


def _block_markdown(block: Block) -> str:
    if isinstance(block, Table):
        return table_markdown(block)
    if isinstance(block, Image):
        return f"![{block.alt}]({block.path})\n"
    return f"{block}\n"


def _cell(text: str) -> str:
    # Text from runs (model names, errors) may hold markup: a Markdown viewer that renders HTML
    # must show it as text, so <, > and & are written as entities.
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")


def table_markdown(table: Table) -> str:
    """One table as Markdown (its cells written as text)."""
    numeric = table.numeric or (False,) * len(table.columns)
    lines = [
        "| " + " | ".join(_cell(column) for column in table.columns) + " |",
        "| " + " | ".join("---:" if right else "---" for right in numeric) + " |",
    ]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in table.rows]
    return "\n".join(lines) + "\n"


# --- HTML --------------------------------------------------------------------------------------

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
img { max-width: 100%; margin: 0.5em 0 1.5em; }
nav.toc { border: 1px solid #ddd; background: #fafafa; padding: 0.5em 1.5em; margin: 1em 0; }
nav.toc ul { margin: 0.2em 0; padding-left: 1.2em; }
"""


def _anchors(sections: Sequence[Section]) -> list[str]:
    """One unique ``id`` per section, from its title (a level-3 view heading repeats across
    sections, so the section number keeps the ids apart)."""
    return [
        f"s{index}-" + (re.sub(r"[^a-z0-9]+", "-", section.title.lower()).strip("-") or "x")
        for index, section in enumerate(sections, start=1)
    ]


def _contents(sections: Sequence[Section], anchors: Sequence[str]) -> str:
    """The table of contents: every level-2 section, with its level-3 headings under it."""
    entries: list[tuple[str, list[str]]] = []
    for section, anchor in zip(sections, anchors, strict=True):
        link = f'<a href="#{anchor}">{html.escape(section.title)}</a>'
        if section.level <= 2 or not entries:
            entries.append((link, []))
        else:
            entries[-1][1].append(link)
    items = [
        f"<li>{link}"
        + ("<ul>" + "".join(f"<li>{s}</li>" for s in subs) + "</ul>" if subs else "")
        + "</li>"
        for link, subs in entries
    ]
    return '<nav class="toc"><strong>Contents</strong><ul>' + "".join(items) + "</ul></nav>"


def to_html(title: str, sections: Sequence[Section], images: Path | None = None) -> str:
    """A standalone page: no scripts, no external styles, a table of contents; with
    ``images`` (the folder the PNGs were saved in) each image is embedded as a ``data:`` URI,
    so the page needs nothing beside it; without, images are referenced by relative path."""
    anchors = _anchors(sections)
    body = [f"<h1>{html.escape(title)}</h1>", _contents(sections, anchors)]
    for section, anchor in zip(sections, anchors, strict=True):
        level = min(max(section.level, 2), 6)
        body.append(f'<h{level} id="{anchor}">{html.escape(section.title)}</h{level}>')
        body.extend(_block_html(block, images) for block in section.blocks)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def _block_html(block: Block, images: Path | None = None) -> str:
    if isinstance(block, Table):
        return _table_html(block)
    if isinstance(block, Image):
        source = block.path
        if images is not None:
            encoded = base64.b64encode((images / block.path).read_bytes()).decode("ascii")
            source = f"data:image/png;base64,{encoded}"
        return f'<img src="{html.escape(source)}" alt="{html.escape(block.alt)}">'
    return f"<p>{_inline_html(block)}</p>"


def _inline_html(text: str) -> str:
    # Paragraphs may use Markdown `code`; render just that, everything else is escaped text.
    escaped = html.escape(text)
    pieces = escaped.split("`")
    return "".join(
        f"<code>{piece}</code>" if index % 2 else piece for index, piece in enumerate(pieces)
    )


def _table_html(table: Table) -> str:
    numeric = table.numeric or (False,) * len(table.columns)
    head = "".join(f"<th>{html.escape(column)}</th>" for column in table.columns)
    rows = [
        "<tr>"
        + "".join(
            f'<td class="num">{html.escape(cell)}</td>'
            if right
            else f"<td>{html.escape(cell)}</td>"
            for cell, right in zip(row, numeric, strict=True)
        )
        + "</tr>"
        for row in table.rows
    ]
    return (
        f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n"
        + "\n".join(rows)
        + "\n</tbody>\n</table>"
    )


__all__ = [
    "Block",
    "Image",
    "Section",
    "Table",
    "fmt",
    "fmt_ci",
    "fmt_p",
    "fmt_signed_ci",
    "table_markdown",
    "to_html",
    "to_markdown",
]
