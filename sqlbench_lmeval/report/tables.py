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
| \\<i\\>c\\</i\\> | – |"""

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


@dataclass(frozen=True)
class Beside:
    """Blocks set side by side on the page (a chart and its table), one after the other in
    Markdown."""

    blocks: tuple[Table | Image, ...]


Block = str | Table | Image | Beside  # a str is a paragraph


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...]
    level: int = 2
    #: Shown before the table of contents (the report's result, what its first screen shows).
    lead: bool = False


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
    parts = [f"# {_cell(title)}\n"]
    for section in sections:
        parts.append(f"{'#' * section.level} {_cell(section.title)}\n")
        for block in section.blocks:
            parts.append(_block_markdown(block))
    return "\n".join(parts).rstrip() + "\n"


def _block_markdown(block: Block) -> str:
    if isinstance(block, Beside):
        return "\n".join(_block_markdown(inner) for inner in block.blocks)
    if isinstance(block, Table):
        return table_markdown(block)
    if isinstance(block, Image):
        return f"![{block.alt}]({block.path})\n"
    return f"{block}\n"


def _cell(text: str) -> str:
    # Text from runs (model names, errors) may hold markup: a Markdown viewer that renders HTML
    # must show it as text, and the file read as text must read as the run wrote it, so \, <,
    # > and & are backslash-escaped (CommonMark shows "\<" as "<"), never written as entities.
    return re.sub(r"([\\<>&|])", r"\\\1", str(text)).replace("\n", " ")


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
td.num { text-align: right; font-variant-numeric: tabular-nums; }
/* A long path or model argument without spaces wraps rather than widen the page. */
td:not(.num) { overflow-wrap: anywhere; }
.nb { white-space: nowrap; }
.beside { display: flex; gap: 2em; align-items: flex-start; }
.beside img { margin-top: 0; max-width: 45%; min-width: 0; }
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
    lead = next((i for i, section in enumerate(sections) if not section.lead), len(sections))
    body = [f"<h1>{html.escape(title)}</h1>"]
    for index, (section, anchor) in enumerate(zip(sections, anchors, strict=True)):
        if index == lead:
            body.append(_contents(sections, anchors))
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
    if isinstance(block, Beside):
        inner = "\n".join(_block_html(part, images) for part in block.blocks)
        return f'<div class="beside">\n{inner}\n</div>'
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


def _unbroken(text: str) -> str:
    """A cell's escaped text with each bracketed part kept on one line: a table narrower than
    its numbers wraps "0.750 [0.250, 1.000]" between the mean and its interval, and a run named
    "G [--limit 30]" never at the hyphens of its option.

    >>> _unbroken("G [--limit 30]")
    'G <span class="nb">[--limit 30]</span>'
    """
    return re.sub(
        r"\[[^\[\]]*\]", lambda m: f'<span class="nb">{m.group(0)}</span>', html.escape(text)
    )


def _table_html(table: Table) -> str:
    numeric = table.numeric or (False,) * len(table.columns)
    head = "".join(f"<th>{html.escape(column)}</th>" for column in table.columns)
    rows = [
        "<tr>"
        + "".join(
            f'<td class="num">{_unbroken(cell)}</td>' if right else f"<td>{_unbroken(cell)}</td>"
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
    "Beside",
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
