"""Every script in ``perf/`` is named in docs/measurements.md, with what it measures: a script
nobody can find is a script nobody runs (or one to remove)."""

from __future__ import annotations

import re

from support.markdown_docs import REPO

PAGE = REPO / "docs" / "measurements.md"


def named_scripts(text: str) -> set[str]:
    """The ``perf/NAME.py`` the page names in its list of scripts (a line of its own)."""
    return set(re.findall(r"^- `perf/(\w+\.py)`: \S", text, re.M))


def test_the_reader_sees_only_listed_scripts():
    text = "- `perf/a.py`: what it measures\nsee perf/b.py\n- `perf/c.py`:\n"
    assert named_scripts(text) == {"a.py"}


def test_every_perf_script_is_named_with_what_it_measures():
    scripts = {path.name for path in (REPO / "perf").glob("*.py") if not path.name.startswith("_")}
    assert scripts, "no perf/ scripts found"
    assert sorted(scripts - named_scripts(PAGE.read_text(encoding="utf-8"))) == []
