"""The documentation a user reads: README.md is a doorway, the task READMEs are small and in
lm-eval's template, every link and anchor resolves, every shell block is run by the suite or
marked illustrative, the Tasks table names every task and every metric lm-eval prints, the CLI
reference is what the program's ``--help`` says, and no text speaks the project's internal
language. ``mkdocs build --strict`` (in ``.ci/run``) checks the links and anchors of docs/."""

from __future__ import annotations

import fnmatch
import importlib.util
import re
import sys
from pathlib import Path

import pytest
from support.markdown_docs import (
    REPO,
    USER_FILES,
    anchors,
    blocks,
    links,
    prose,
    shell_blocks,
)

from sqlbench_lmeval.lmeval.task_specs import read_config, task_groups, task_specs
from sqlbench_lmeval.scoring.metrics import RETRY, metric

README = REPO / "README.md"
TASK_READMES = USER_FILES[1:]
DOCS = REPO / "docs"
# Pages a user reads: the site's pages.
PAGES = sorted(p for p in DOCS.glob("*.md"))
TEMPLATE = ("Paper", "Citation", "Groups, tags and tasks", "Checklist", "Changelog")
INTERNAL = re.compile(
    r"\bthe\s+seed\b|\bseed's\b|\bseed\s+words\b|\bissues?\s+#?\d+|\bbuilder\s+\d+|\bbundle\s+builder\b"
    r"|\bbuilder\d+\b",
    re.IGNORECASE,
)


def _load_cli_generator():
    spec = importlib.util.spec_from_file_location("gen_cli", DOCS / "gen_cli.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_is_a_doorway_of_at_most_200_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; the rest belongs in docs/"


@pytest.mark.parametrize("path", TASK_READMES, ids=lambda p: p.parent.name)
def test_task_readme_follows_lm_evals_template_within_8_kb(path):
    size = len(path.read_bytes())
    assert size <= 8 * 1024, f"{path.relative_to(REPO)} is {size} bytes; rules go to docs/"
    headings = re.findall(r"^### (.+)$", prose(path), re.M)
    assert [h for h in headings if h in TEMPLATE] == list(TEMPLATE), headings


@pytest.mark.parametrize("path", TASK_READMES, ids=lambda p: p.parent.name)
def test_task_readme_changelog_has_an_entry_for_each_task_version(path):
    # Two results of one task version must be comparable: the version a task records is the
    # last entry of its README's changelog, which says what that version changed.
    changelog = prose(path).split("### Changelog", 1)[1]
    entries = re.findall(r"^- (\d+(?:\.\d+)*)[ :]", changelog, re.M)
    versions = {
        spec.version for spec in task_specs().values() if spec.benchmark == path.parent.name
    }
    assert versions and entries, (versions, entries)
    assert versions == {entries[-1]}, f"tasks record {versions}; the changelog's last is {entries}"


@pytest.mark.parametrize("path", [*USER_FILES, *PAGES], ids=lambda p: str(p.relative_to(REPO)))
def test_no_internal_words(path):
    text = path.read_text(encoding="utf-8")
    found = [
        f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}"
        for m in INTERNAL.finditer(text)
    ]
    assert found == [], f"{path.relative_to(REPO)} speaks internal language: {found}"


@pytest.mark.parametrize("path", USER_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_and_anchors_resolve(path):
    broken = []
    for target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with anchor #{anchor}")
    assert broken == [], f"{path.relative_to(REPO)}: {broken}"


def test_the_link_checker_finds_a_broken_anchor(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## Tie-aware `EX`\n\n[ok](#tie-aware-ex) [bad](#gold-on-x)\n")
    assert anchors(page) == {"title", "tie-aware-ex"}
    assert [t for t in links(page) if t.partition("#")[2] not in anchors(page)] == ["#gold-on-x"]


@pytest.mark.parametrize("path", USER_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_shell_block_is_run_or_marked_illustrative(path):
    for block in shell_blocks(path):
        if block.marker == "illustrative":
            assert block.marker_text, f"{block.where}: say why the block is not run"
        elif block.marker == "tested":
            test_file = REPO / block.marker_text.split()[0]
            assert test_file.is_file(), f"{block.where}: no test file {test_file}"
            # The test reads the block from the README, so an edited block is what it runs.
            source = test_file.read_text(encoding="utf-8")
            assert "markdown_docs" in source, f"{test_file} does not read the block"
    languages = {block.language for block in blocks(path)}
    assert "" not in languages, f"{path.relative_to(REPO)}: a fence without a language"


def _table_rows(path: Path, header: str) -> list[list[str]]:
    """The cells of the Markdown table whose header row starts with ``header``."""
    lines = prose(path).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def _names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _printed(cell: str, metrics: list[str], where: str) -> set[str]:
    """The metric names a cell's patterns (``sim_*``) stand for; each must stand for one."""
    chosen = set()
    for pattern in _names(cell):
        matched = fnmatch.filter(metrics, pattern)
        assert matched, f"{where}: `{pattern}` is no metric of the task"
        chosen.update(matched)
    return chosen


def test_tasks_table_names_every_task_and_every_metric_it_prints():
    rows = _table_rows(README, "| task |")
    specs, groups = task_specs(), task_groups()
    listed: dict[str, list[str]] = {}
    for task_cell, _items, metrics_cell, _docs in rows:
        for name in _names(task_cell):
            assert name not in listed, f"{name} is in two rows"
            listed[name] = [metrics_cell]
    assert set(listed) == set(specs) | set(groups), "the Tasks table and tasks/ differ"
    for name, (cell,) in listed.items():
        if name in groups:
            (path,) = REPO.glob(f"tasks/*/{name}.yaml")  # a group's file, in its benchmark
            config = read_config(path)
            yaml_metrics = [entry["metric"] for entry in config["aggregate_metric_list"]]
        else:
            yaml_metrics = list(specs[name].metrics)
        shown = _printed(cell, yaml_metrics, f"row of {name}")
        # Only runs of the repair model print the retry numbers; the note under the table
        # names them.
        expected = {m for m in yaml_metrics if metric(m).family != RETRY}
        assert shown == expected, f"{name}: the table says {sorted(shown)}, the YAML {expected}"
    note = prose(README)
    for name in {m for spec in specs.values() for m in spec.metrics if metric(m).family == RETRY}:
        assert f"`{name}`" in note, f"the README does not name the retry metric {name}"


def test_one_bibtex_key_per_paper_everywhere():
    keys: dict[str, set[str]] = {}
    for path in [*USER_FILES, *PAGES]:
        text = path.read_text(encoding="utf-8")
        for key, body in re.findall(r"@\w+\{([^,]+),(.*?)\n\}", text, re.S):
            arxiv = re.search(r"arXiv:(\d{4}\.\d{4,5})", body)
            assert arxiv, f"{path}: entry {key} names no arXiv id"
            keys.setdefault(arxiv.group(1), set()).add(key)
    assert keys, "no BibTeX entry found"
    assert {paper: len(k) for paper, k in keys.items()} == dict.fromkeys(keys, 1), keys


def test_cli_reference_names_every_command_and_option():
    generator = _load_cli_generator()
    from sqlbench_lmeval.cli import build_parser

    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    for name, command in generator.commands(parser).items():
        assert f"\n## {name}\n" in page, f"docs/cli.md lacks the command {name}"
        section = page.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        for action in command._actions:
            for option in action.option_strings:
                assert option in section, f"docs/cli.md: {name} lacks {option}"


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="argparse 3.13 formats options otherwise")
def test_cli_reference_is_what_help_prints():
    generator = _load_cli_generator()
    assert (DOCS / "cli.md").read_text(encoding="utf-8") == generator.render(), (
        "docs/cli.md is stale: run python regenerate.py"
    )
