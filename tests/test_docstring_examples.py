"""The examples in our docstrings run, as sqlglot's optimizer runs its own: every module of the
package whose docstrings hold a ``>>>`` example is imported and its examples checked. The docs
pages a docstring sends its reader to (``docs/PAGE.md#anchor``) exist."""

from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import pytest
from support.markdown_docs import REPO, anchors

PACKAGE = Path(__file__).resolve().parents[1] / "sqlbench_lmeval"

DOCS_LINK = re.compile(r"\bdocs/([\w-]+\.md)(?:#([\w-]+))?")

WITH_EXAMPLES = sorted(
    ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
    for path in PACKAGE.rglob("*.py")
    if ">>> " in path.read_text("utf-8")
)


def test_some_modules_show_examples():
    assert "sqlbench_lmeval.benchmarks" in WITH_EXAMPLES


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_docs_pages_named_in_the_package_exist():
    named = {
        (path.relative_to(PACKAGE.parent).as_posix(), *match.groups())
        for path in PACKAGE.rglob("*.py")
        for match in DOCS_LINK.finditer(path.read_text("utf-8"))
    }
    assert ("sqlbench_lmeval/execution/sqlite.py", "engines.md", "sqlite") in named
    broken = [
        (where, page, anchor)
        for where, page, anchor in sorted(named, key=str)
        if not (REPO / "docs" / page).is_file()
        or (anchor and anchor not in anchors(REPO / "docs" / page))
    ]
    assert not broken, broken
