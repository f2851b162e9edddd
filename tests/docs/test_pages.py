"""Every page README.md or the site's navigation (mkdocs.yml ``nav``) names opens with its title,
one level-1 heading, and the pages others lean on keep their sections (:data:`SECTIONS`, each
page's required level-2 headings in order). A page replaced by a fragment (as
docs/DEVELOPING.md once was: its layers, import rules, names, tests and how-to-add sections gave
way to one CI section without a title) fails here, though every link to it still resolves.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from support.markdown_docs import REPO, links, prose

DOCS = REPO / "docs"
README = REPO / "README.md"

#: The sections a page must keep, in this order (others may stand between them). Rename or drop
#: one here in the same change that does it on the page, and only when the page still says it.
SECTIONS = {
    "DEVELOPING.md": [
        "Layers",
        "Imports",
        "Names",
        "Tests",
        "Generated files",
        "Adding a benchmark, an engine, a metric, a stage, a check or a section",
        "CI: what `bash .ci/run` does",
    ],
    "layout.md": ["The core", "Modules", "Report sections"],
    "adding-a-benchmark.md": ["What each field must do"],
    "adding-an-engine.md": ["Files you touch", "What must hold (checked by tests)"],
    "adding-a-metric.md": ["A per-answer metric computed from execution (the common case)"],
    "scoring.md": ["Metrics", "How scoring runs", "Verdicts"],
    "install.md": ["Install: what each extra adds", "How lm-eval finds the tasks"],
    "verify.md": ["Verdicts", "Exit codes"],
}


def _nav_pages(entry) -> list[str]:
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, dict):
        return [page for value in entry.values() for page in _nav_pages(value)]
    return [page for item in entry for page in _nav_pages(item)]


def named_pages() -> dict[str, str]:
    """The pages of docs/ that the site's navigation or README.md names: name -> who names it."""
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    named = dict.fromkeys(_nav_pages(config["nav"]), "mkdocs.yml nav")
    for target in links(README):
        path = target.partition("#")[0]
        if path.startswith("docs/") and path.endswith(".md"):
            named.setdefault(path.removeprefix("docs/"), "README.md")
    return named


def headings(path: Path) -> list[tuple[int, str]]:
    """(level, text) of each heading of ``path``, fenced blocks left out."""
    found = []
    for line in prose(path).splitlines():
        match = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if match:
            found.append((len(match.group(1)), match.group(2)))
    return found


def missing(path: Path, required: list[str]) -> list[str]:
    """What ``path`` lacks: a title (its first line of text a level-1 heading, the only one),
    or one of the ``required`` level-2 sections in their order."""
    problems = []
    first = next((line for line in prose(path).splitlines() if line.strip()), "")
    titles = [text for level, text in headings(path) if level == 1]
    if not re.match(r"^# \S", first) or len(titles) != 1:
        problems.append(f"a title: one '# ...' line opening the page (found {titles})")
    sections = [text for level, text in headings(path) if level == 2]
    kept = [text for text in sections if text in required]
    if kept != required:
        problems.append(f"the sections {required} in this order (found {sections})")
    return problems


def test_the_checker_sees_a_missing_title_and_a_lost_section(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("\n\n## The user-path stage of CI\n\n```bash\n# not a heading\n```\n")
    assert len(missing(page, ["The user-path stage of CI"])) == 1  # the title
    page.write_text("# Developing\n\n## Layers\n\n## Tests\n")
    assert missing(page, ["Layers", "Tests"]) == []
    assert len(missing(page, ["Tests", "Layers"])) == 1  # out of order
    assert len(missing(page, ["Layers", "Imports", "Tests"])) == 1


def test_the_named_pages_include_the_developer_guide_from_both_sides():
    named = named_pages()
    assert named["DEVELOPING.md"] == "mkdocs.yml nav" and "index.md" in named
    assert set(SECTIONS) <= set(named), "a page kept here is named by neither README nor nav"


@pytest.mark.parametrize("name", sorted(named_pages()))
def test_every_named_page_has_its_title_and_sections(name):
    path = DOCS / name
    assert path.is_file(), f"{named_pages()[name]} names docs/{name}, which does not exist"
    assert missing(path, SECTIONS.get(name, [])) == [], f"docs/{name} lacks"
