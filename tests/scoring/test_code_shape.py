"""The scoring core stays readable: short functions with few parameters (issue 33's bounds),
read from the source with ``ast`` so the rule and the code cannot drift apart."""

from __future__ import annotations

import ast
from pathlib import Path

import sqlbench_lmeval.scoring as scoring
from sqlbench_lmeval.scoring.stages import STAGES

SCORING = Path(scoring.__file__).parent
MAX_LINES = 60
MAX_PARAMETERS = 6


def _functions():
    for path in sorted(SCORING.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{path.relative_to(SCORING)}:{node.lineno} {node.name}", node


def _parameters(node: ast.FunctionDef) -> int:
    args = node.args
    named = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    count = len(named) + (args.vararg is not None) + (args.kwarg is not None)
    return count - (1 if named and named[0].arg in ("self", "cls") else 0)


def test_the_checker_sees_every_function():
    names = {name.split(" ")[1] for name, _ in _functions()}
    assert {"to_json", "reason", "run", "recheck_gold", "compare"} <= names


def test_no_function_in_scoring_is_longer_than_60_lines():
    long = [f"{name}: {node.end_lineno - node.lineno + 1} lines" for name, node in _functions()
            if node.end_lineno - node.lineno + 1 > MAX_LINES]  # fmt: skip
    assert long == []


def test_no_function_in_scoring_takes_more_than_6_parameters():
    many = [f"{name}: {_parameters(node)}" for name, node in _functions()
            if _parameters(node) > MAX_PARAMETERS]  # fmt: skip
    assert many == []


def test_every_stage_is_a_module_with_run():
    for stage in STAGES:
        assert callable(stage.run), stage.__name__
        assert stage.__doc__, f"{stage.__name__} says what it does"
    assert len({stage.__name__ for stage in STAGES}) == len(STAGES)
