"""``regenerate.py``: one command rewrites every generated file, and ``--check`` fails when it
would change any. Run on a copy of the generated files and their sources, never on this tree."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys

import pytest
from support.markdown_docs import REPO


def _regenerate():
    spec = importlib.util.spec_from_file_location("regenerate", REPO / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


regenerate = _regenerate()

COPIED = ("tasks", "docs/cli.md", "docs/statement-rule.md", "docs/layout.md", "fixtures/logiccat")


@pytest.fixture
def tree(tmp_path):
    """A copy of the files the generators write and read, laid out as in the repository."""
    for name in COPIED:
        source, target = REPO / name, tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy(source, target)
    return tmp_path


def _edit(path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path}: no {old!r}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="argparse 3.13 formats options otherwise")
def test_check_fails_naming_each_stale_file_and_a_run_makes_them_current(tree, capsys):
    assert regenerate.main(["--check", "--root", str(tree)]) == 0
    template = tree / "tasks" / "tpcds" / "_tpcds_template_yaml"
    _edit(template, "  - metric: ex\n", "  - metric: ex_typed_by_hand\n")
    _edit(tree / "docs" / "cli.md", "## score\n", "## score (edited)\n")
    table = tree / "docs" / "statement-rule.md"
    _edit(table, "| `SHOW TABLES` | `not_read_only` |", "| `SHOW TABLES` | EX 1 |")
    records = tree / "fixtures" / "logiccat" / "shared_layout" / "records-4036.json"
    _edit(records, "North Hub", "South Hub")
    layout = tree / "docs" / "layout.md"
    stated = regenerate.CORE_SIZE.search(layout.read_text(encoding="utf-8")).group(0)
    _edit(layout, stated, regenerate.CORE_SIZE.sub(r"\g<1>1\g<3>2", stated))
    before = {path: path.read_bytes() for path in (template, table, records, layout)}

    assert regenerate.main(["--check", "--root", str(tree)]) == 1
    named = set(re.findall(r"^(\S+): differs", capsys.readouterr().err, re.M))
    assert named == {str(p) for p in (template, tree / "docs" / "cli.md", table, records, layout)}
    assert {path: path.read_bytes() for path in before} == before  # --check wrote nothing

    assert regenerate.main(["--root", str(tree)]) == 0
    assert regenerate.main(["--check", "--root", str(tree)]) == 0
    for name in ("tasks/tpcds/_tpcds_template_yaml", "docs/statement-rule.md", "docs/layout.md"):
        assert (tree / name).read_bytes() == (REPO / name).read_bytes()
    assert records.read_bytes() == (REPO / records.relative_to(tree)).read_bytes()


def test_the_core_size_counts_the_cores_modules(tree):
    """The numbers written are the lines of the core's modules and of the package's, as
    ``tests/test_import_graph.py`` tells the core apart: counted here from the files."""
    graph = regenerate._script(REPO / "tests" / "test_import_graph.py")
    core = [path for module, path in graph.MODULES.items() if graph.in_core(module)]
    assert REPO / "sqlbench_lmeval" / "scoring" / "scorer.py" in core
    assert REPO / "sqlbench_lmeval" / "execution" / "mysql.py" not in core
    lines = sum(len(path.read_text(encoding="utf-8").splitlines()) for path in core)
    total = sum(
        len(path.read_text(encoding="utf-8").splitlines())
        for path in (REPO / "sqlbench_lmeval").rglob("*.py")
    )
    written = regenerate.core_size(tree)[tree / "docs" / "layout.md"].decode("utf-8")
    match = regenerate.CORE_SIZE.search(written)
    assert (match.group(2), match.group(4)) == (f"{round(lines, -2):,}", f"{round(total, -2):,}")


def test_a_page_without_the_tables_marker_is_refused(tree):
    _edit(tree / "docs" / "statement-rule.md", regenerate.STATEMENT_RULE_MARKER, "")
    with pytest.raises(SystemExit, match="no line"):
        regenerate.stale(tree)
