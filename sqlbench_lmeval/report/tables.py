"""A small document model (sections of paragraphs, tables and images) and its two renderings:
Markdown and a self-contained HTML page (inline CSS; images referenced by relative path)."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

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
        return _table_markdown(block)
    if isinstance(block, Image):
        return f"![{block.alt}]({block.path})\n"
    return f"{block}\n"


def _cell(text: str) -> str:
    # Text from runs (model names, errors) may hold markup: a Markdown viewer that renders HTML
    # must show it as text, so <, > and & are written as entities.
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("\n", " ")


def _table_markdown(table: Table) -> str:
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
"""


def to_html(title: str, sections: Sequence[Section]) -> str:
    """A standalone page: no scripts, no external styles; images by relative path."""
    body = [f"<h1>{html.escape(title)}</h1>"]
    for section in sections:
        level = min(max(section.level, 2), 6)
        body.append(f"<h{level}>{html.escape(section.title)}</h{level}>")
        body.extend(_block_html(block) for block in section.blocks)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def _block_html(block: Block) -> str:
    if isinstance(block, Table):
        return _table_html(block)
    if isinstance(block, Image):
        return f'<img src="{html.escape(block.path)}" alt="{html.escape(block.alt)}">'
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
    "to_html",
    "to_markdown",
]
