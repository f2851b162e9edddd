"""The documentation site renders as its Markdown source reads.

MkDocs renders with Python-Markdown, which nests a list only under four spaces and starts a list
only after a blank line; a reader of the source (and GitHub, and every CommonMark renderer) nests
under the parent item's text and lets a list follow a paragraph. Where the two disagree the site
shows something else than the source says: execution statuses numbered as pipeline steps, metric
definitions run together into one paragraph. So the site is built (``mkdocs build``, the
project's mkdocs.yml) and every page's lists, item by item (nesting, kind, start, text), are
compared with a CommonMark reading of the same file (markdown-it-py). Write nested lists four
spaces in and put a blank line before a list, and both agree.
"""

from __future__ import annotations

import difflib
from html.parser import HTMLParser
from pathlib import Path

import markdown
import pytest
from markdown_it import MarkdownIt
from mkdocs.commands.build import build
from mkdocs.config import load_config
from support.markdown_docs import REPO

DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md"))


class _ListItems(HTMLParser):
    """The list items of an HTML page: (the lists they sit in, outermost first, each ``ul`` or
    ``ol`` with its ``start``; the item's own text, nested lists left out). With ``main_only``,
    only inside the page's ``role="main"`` element (the theme's navigation is lists too)."""

    def __init__(self, main_only: bool):
        super().__init__(convert_charrefs=True)
        self.main_only = main_only
        self.depth = 0  # open elements that have an end tag, for finding the main one's end
        self.main_depth: int | None = None
        self.lists: list[str] = []
        self.open_items: list[int] = []
        self.items: list[list[str]] = []

    VOID = {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "source", "wbr"}

    def _inside(self) -> bool:
        return not self.main_only or self.main_depth is not None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.VOID:
            return
        self.depth += 1
        if self.main_only and self.main_depth is None and dict(attrs).get("role") == "main":
            self.main_depth = self.depth
        if not self._inside():
            return
        if tag in ("ul", "ol"):
            start = dict(attrs).get("start")
            self.lists.append(f"{tag} start={start}" if start and start != "1" else tag)
        elif tag == "li":
            self.items.append([" > ".join(self.lists), ""])
            self.open_items.append(len(self.items) - 1)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        if self._inside():
            if tag in ("ul", "ol"):
                self.lists.pop()
            elif tag == "li":
                self.open_items.pop()
        if self.main_depth == self.depth:
            self.main_depth = None
        self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self._inside() and self.open_items:
            self.items[self.open_items[-1]][1] += data


def list_items(html: str, *, main_only: bool = False) -> list[str]:
    """Each list item of ``html`` as one line: its lists, then its text with blanks collapsed."""
    parser = _ListItems(main_only)
    parser.feed(html)
    parser.close()
    return [f"[{lists}] {' '.join(text.split())}" for lists, text in parser.items]


def commonmark(text: str) -> str:
    """``text`` rendered by the CommonMark reference rules (tables on, as the site has them)."""
    return MarkdownIt("commonmark").enable("table").render(text)


def differences(site_html: str, source: str) -> list[str]:
    """The list items where the built page and the CommonMark reading of its source differ."""
    return list(
        difflib.unified_diff(
            list_items(commonmark(source)),
            list_items(site_html, main_only=True),
            "source (CommonMark)",
            "site (MkDocs)",
            lineterm="",
            n=0,
        )
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    build(load_config(str(REPO / "mkdocs.yml"), site_dir=str(folder)))
    return folder


def built_page(site: Path, page: Path) -> Path:
    """Where the site writes ``page`` (mkdocs' directory URLs: ``x.md`` -> ``x/index.html``)."""
    return site / ("index.html" if page.stem == "index" else f"{page.stem}/index.html")


def mkdocs_page(text: str) -> str:
    """``text`` rendered as the site renders a page's body (Python-Markdown with mkdocs.yml's
    extensions), in the theme's main element."""
    config = load_config(str(REPO / "mkdocs.yml"))
    body = markdown.markdown(
        text, extensions=config["markdown_extensions"], extension_configs=config["mdx_configs"]
    )
    return f'<div role="main">{body}</div>'


def test_the_comparison_sees_a_list_nested_three_spaces_in():
    # As docs/scoring.md had it: execution statuses under a numbered step, three spaces in.
    source = "1. **Extraction**\n2. **Execution**, one of:\n   - `ok`: it ran;\n   - `error`.\n"
    assert list_items(commonmark(source)) == [
        "[ol] Extraction",
        "[ol] Execution, one of:",
        "[ol > ul] ok: it ran;",
        "[ol > ul] error.",
    ]
    assert differences(mkdocs_page(source), source) != []
    fixed = source.replace("   - ", "    - ")  # four spaces in: both read it alike
    assert differences(mkdocs_page(fixed), fixed) == []


def test_the_comparison_sees_a_list_right_after_a_paragraph():
    source = "Departures, and why:\n1. Work, not time.\n2. No trimming.\n"
    assert differences(mkdocs_page(source), source) != []
    fixed = source.replace(":\n1.", ":\n\n1.")
    assert differences(mkdocs_page(fixed), fixed) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_site_shows_each_pages_lists_as_its_source_reads(site, page):
    built = built_page(site, page)
    assert built.is_file(), f"mkdocs wrote no {built.relative_to(site)}"
    found = differences(built.read_text(encoding="utf-8"), page.read_text(encoding="utf-8"))
    assert found == [], (
        f"docs/{page.name}: the site's lists differ from the source's (nest four spaces in, "
        "a blank line before a list):\n" + "\n".join(found)
    )
