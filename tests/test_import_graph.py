"""The package's layers point one way, read from the source with ``ast`` (nothing is imported).

Every ``import`` of a ``sqlbench_lmeval`` module counts, at module level, inside a function (a
dependency all the same) or under ``if TYPE_CHECKING:`` (a type one module needs from another
is a dependency too: a circle through it is a circle, whether or not it runs). The rules are the
layers docs/DEVELOPING.md describes (:data:`LAYERS`): the helpers and ``sql/`` at the bottom,
then ``execution/``, ``scoring/``, the data layer under every benchmark (``data/``, which knows
no benchmark), the benchmarks (none importing another), the lm-eval layer, report and
submission, and the CLI on top; and the core (:data:`CORE`, docs/layout.md) never imports the
server engines or the submission tools.
"""

from __future__ import annotations

import ast
import functools
import re
import tokenize
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "sqlbench_lmeval"
ROOT = "sqlbench_lmeval"

#: Engine modules: what runs SQL (as opposed to the result types of ``execution.outcome`` and
#: the limits and jobs of ``execution.job``, which pure code may name).
ENGINE_MODULES = {
    f"{ROOT}.execution.{name}"
    for name in (
        "sqlite",
        "duckdb",
        "mysql",
        "mysql_admin",
        "postgres",
        "postgres_admin",
        "runner",
        "pool",
        "worker",
        "cache",
    )
}

#: The benchmarks: each package of ours with a ``benchmark.py`` (docs/adding-a-benchmark.md).
BENCHMARKS = tuple(
    sorted(path.parent.name for path in PACKAGE.glob("*/benchmark.py") if path.parent != PACKAGE)
)

#: The layers, bottom first, each a tuple of the package's top-level modules and packages ("" is
#: the package itself, for its version): a module imports only from its own layer and the layers
#: below it (docs/DEVELOPING.md#layers).
LAYERS = (
    ("", "errors", "paths", "jsonl", "build_lock", "vocabulary"),
    ("sql",),
    ("execution",),
    ("scoring",),
    ("data",),
    ("benchmarks", *BENCHMARKS),
    ("lmeval", "offline"),
    ("report", "submission", "audit"),
    ("cli", "__main__"),
)

#: The server engines: the MySQL/MariaDB and PostgreSQL engines with their account modules, and
#: what each benchmark does on those servers.
SERVER_ENGINES = {
    f"{ROOT}.execution.mysql",
    f"{ROOT}.execution.mysql_admin",
    f"{ROOT}.execution.postgres",
    f"{ROOT}.execution.postgres_admin",
    f"{ROOT}.logiccat.server",
    f"{ROOT}.tpcds.postgres",
}

#: The core: what turns an answer into a score whatever the benchmark or the caller (the SQL
#: layer, the execution layer without the server engines, scoring, the benchmark registry and
#: the helpers). docs/layout.md states its size.
CORE_LAYERS = (
    "",
    "errors",
    "paths",
    "jsonl",
    "build_lock",
    "vocabulary",
    "sql",
    "execution",
    "scoring",
)
CORE_MODULES = {f"{ROOT}.benchmarks"}

#: Modules allowed to import inside functions without saying why: start-up paths, where every
#: import waits until a command needs it (``sqlbench-lmeval --help`` must stay instant; the
#: discovery hook runs at every interpreter start through the ``.pth`` file; the worker process
#: imports the runner only once its stdout is redirected, so that nothing printed while importing
#: can corrupt its frames).
START_UP_MODULES = {f"{ROOT}.cli", f"{ROOT}.lmeval.discovery", f"{ROOT}.execution.worker"}

#: Reasons a function-level import may give, as a comment on its lines or the line above.
LAZY_REASONS = ("optional:", "heavy:", "platform:")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _targets(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The modules of ours an import statement loads (``from pkg import sub`` names ``pkg.sub``
    when ``sub`` is a module, else ``pkg``)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        names = [
            f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
            for alias in node.names
        ]
    return {name for name in names if name == ROOT or name.startswith(ROOT + ".")}


@functools.cache
def imports_of(module: str) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Each import statement of ``module`` and whether it is inside a function or class."""
    return import_statements(MODULES[module].read_text(encoding="utf-8"))


def import_statements(source: str) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Each import statement of ``source`` (under ``if TYPE_CHECKING:`` too) and whether it is
    inside a function or class."""
    tree = ast.parse(source)
    nested = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for inner in ast.walk(node)
        if inner is not node
    }
    return [
        (node, id(node) in nested)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports. Built on first use, not at import: every
    pytest-xdist worker imports this file to collect it, only the one running its tests parses
    the package."""
    return {
        module: {target for node, _ in imports_of(module) for target in _targets(node)} - {module}
        for module in MODULES
    }


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def in_package(module: str, package: str) -> bool:
    return module == f"{ROOT}.{package}" or module.startswith(f"{ROOT}.{package}.")


def edges(where, to) -> list[tuple[str, str]]:
    """Imports from a module matching ``where`` to a module matching ``to``, known ones out."""
    return sorted(
        (source, target)
        for source, targets in import_graph().items()
        if where(source)
        for target in targets
        if to(target)
    )


def top_level(module: str) -> str:
    """The top-level module or package of ours ``module`` is in ("" for the package itself)."""
    return module.removeprefix(ROOT).lstrip(".").split(".")[0]


def layer_of(module: str) -> int:
    (index,) = [i for i, names in enumerate(LAYERS) if top_level(module) in names]
    return index


def arrows_up(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports of ``graph`` that run from a layer to a layer above it."""
    return sorted(
        (source, target)
        for source, targets in graph.items()
        for target in targets
        if layer_of(target) > layer_of(source)
    )


def in_core(module: str) -> bool:
    return module not in SERVER_ENGINES and (
        top_level(module) in CORE_LAYERS or module in CORE_MODULES
    )


def test_the_graph_is_read_from_real_imports():
    # A check on the checker: edges every layout has, one per layer.
    assert f"{ROOT}.sql.lexis" in import_graph()[f"{ROOT}.sql.extract"]
    assert f"{ROOT}.scoring.item" in import_graph()[f"{ROOT}.scoring.answer"]
    assert f"{ROOT}.scoring.scorer" in import_graph()[f"{ROOT}.lmeval.hooks"]
    assert f"{ROOT}.logiccat.bundle" in import_graph()[f"{ROOT}.logiccat.benchmark"]
    # ``from sqlbench_lmeval.logiccat import gold`` names the module, not the package
    assert f"{ROOT}.logiccat.gold" in import_graph()[f"{ROOT}.logiccat.health"]


def test_the_circle_finder_finds_circles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [frozenset("abc")]


def test_no_import_circles():
    assert [sorted(c) for c in circles(import_graph())] == []


def test_type_checking_imports_are_edges():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        f"    from {ROOT}.execution.job import Limits\n"
    )
    found = {target for node, _ in import_statements(source) for target in _targets(node)}
    assert found == {f"{ROOT}.execution.job"}


def test_every_module_is_in_a_layer():
    assert [m for m in MODULES if sum(top_level(m) in names for names in LAYERS) != 1] == []


def test_the_up_arrow_finder_finds_one():
    graph = {f"{ROOT}.offline": {f"{ROOT}.submission.logged"}, f"{ROOT}.cli": {f"{ROOT}.sql.x"}}
    assert arrows_up(graph) == [(f"{ROOT}.offline", f"{ROOT}.submission.logged")]


def test_no_arrow_runs_back_up():
    assert arrows_up(import_graph()) == []


def test_the_core_imports_nothing_outside_it():
    """Not the server engines, not the submission tools (verify, leaderboard), not a benchmark's
    package, not a caller: the core reads whole without them."""
    core = [m for m in MODULES if in_core(m)]
    assert f"{ROOT}.scoring.scorer" in core and f"{ROOT}.execution.sqlite" in core
    assert f"{ROOT}.execution.mysql" not in core and f"{ROOT}.submission.verify" not in core
    assert edges(in_core, lambda m: not in_core(m)) == []


def test_layout_states_the_cores_size_within_a_tenth():
    """docs/layout.md says how many lines the core is; it stays true within 10%."""
    page = (PACKAGE.parent / "docs" / "layout.md").read_text(encoding="utf-8")
    stated = int(re.search(r"The core\s+is\s+([\d,]+)\s+lines", page).group(1).replace(",", ""))
    actual = sum(
        len(path.read_text("utf-8").splitlines()) for m, path in MODULES.items() if in_core(m)
    )
    assert abs(stated - actual) <= actual / 10, f"docs/layout.md: {stated}; the core: {actual}"


def test_verifys_checks_import_no_other_submission_module_but_the_logged_run():
    allowed = {f"{ROOT}.submission.logged"}
    assert (
        edges(
            lambda m: in_package(m, "submission.checks"),
            lambda m: (
                in_package(m, "submission")
                and not in_package(m, "submission.checks")
                and m not in allowed
            ),
        )
        == []
    )


@pytest.mark.parametrize(
    "above", ["scoring", "data", "report", "submission", "lmeval", *BENCHMARKS, "benchmarks"]
)
def test_execution_knows_no_verdict_no_report_and_no_benchmark(above):
    assert edges(lambda m: in_package(m, "execution"), lambda m: in_package(m, above)) == []


def test_sql_imports_only_sql_errors_and_the_vocabulary():
    allowed = {f"{ROOT}.errors", f"{ROOT}.vocabulary"}
    assert (
        edges(
            lambda m: in_package(m, "sql"), lambda m: not in_package(m, "sql") and m not in allowed
        )
        == []
    )


@pytest.mark.parametrize(
    "module",
    [
        "scoring.compare",
        "scoring.tie_compare",
        "scoring.tie_probe",
        "scoring.sampling",
        "scoring.efficiency",
        "sql.structure",
    ],
)
def test_comparison_and_structure_import_no_engine(module):
    name = f"{ROOT}.{module}"
    seen, todo = set(), [name]
    while todo:  # everything it loads, directly or not
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(import_graph().get(current, ()))
    assert sorted(seen & ENGINE_MODULES) == []


@pytest.mark.parametrize("above", ["data", "lmeval", "report", "submission", *BENCHMARKS])
def test_scoring_knows_no_benchmark_and_no_caller(above):
    assert edges(lambda m: in_package(m, "scoring"), lambda m: in_package(m, above)) == []
    assert (
        edges(
            lambda m: in_package(m, "scoring"),
            lambda m: m in {f"{ROOT}.benchmarks", f"{ROOT}.offline", f"{ROOT}.cli"},
        )
        == []
    )


def test_the_benchmarks_are_the_registered_ones():
    from sqlbench_lmeval.benchmarks import NAMES

    assert BENCHMARKS == tuple(sorted(NAMES))


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_no_benchmark_imports_another(benchmark):
    others = [name for name in BENCHMARKS if name != benchmark]
    assert (
        edges(
            lambda m: in_package(m, benchmark),
            lambda m: any(in_package(m, other) for other in others),
        )
        == []
    )


def test_the_data_layer_knows_no_benchmark():
    """``data/`` is under every benchmark: it imports none, nor the registry of them."""
    assert (
        edges(
            lambda m: in_package(m, "data"),
            lambda m: m == f"{ROOT}.benchmarks" or any(in_package(m, b) for b in BENCHMARKS),
        )
        == []
    )


def test_only_the_entry_points_import_the_cli():
    assert edges(lambda m: m != f"{ROOT}.__main__", lambda m: m == f"{ROOT}.cli") == []


def _comments(path: Path) -> dict[int, str]:
    with path.open(encoding="utf-8") as handle:
        return {
            token.start[0]: token.string
            for token in tokenize.generate_tokens(handle.readline)
            if token.type == tokenize.COMMENT
        }


def _explained(node: ast.AST, lines: list[str], comments: dict[int, str]) -> bool:
    """A reason comment on the import's own lines, or above it across a run of comment and
    import lines (one comment may explain a group of imports)."""
    reasons = tuple("# " + reason for reason in LAZY_REASONS)
    if any(
        comments.get(n, "").startswith(reasons) for n in range(node.lineno, node.end_lineno + 1)
    ):
        return True
    number = node.lineno - 1
    while number >= 1 and lines[number - 1].strip().startswith(("#", "from ", "import ")):
        if comments.get(number, "").startswith(reasons):
            return True
        number -= 1
    return False


def test_function_level_imports_say_why():
    """Outside the start-up paths an import inside a function is for an optional or heavy
    dependency (or a platform module), and a comment on it (or just above it) says which;
    an import that only dodged a circle belongs at the top of the module."""
    unexplained = []
    for module, path in MODULES.items():
        if module in START_UP_MODULES:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        comments = _comments(path)
        for node, nested in imports_of(module):
            if nested and not _explained(node, lines, comments):
                unexplained.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert unexplained == []


def test_only_the_cli_imports_the_gold_audits():
    # An audit of gold is advice, never an input to a score, a verdict or a rank.
    assert (
        edges(
            lambda m: not in_package(m, "audit") and m != f"{ROOT}.cli",
            lambda m: in_package(m, "audit"),
        )
        == []
    )
