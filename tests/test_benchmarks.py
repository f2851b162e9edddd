"""The benchmark protocol (``sqlbench_lmeval.benchmarks``): every benchmark module defines what
the CLI and the lm-eval hooks call, and refuses options that do not apply to it."""

from __future__ import annotations

import pytest

from sqlbench_lmeval.benchmarks import NAMES, REQUIRED, benchmark_module, task_module
from sqlbench_lmeval.errors import UserError


@pytest.mark.parametrize("name", NAMES)
def test_every_benchmark_module_defines_the_required_functions(name):
    module = benchmark_module(name)
    missing = [attr for attr in REQUIRED if not callable(getattr(module, attr, None))]
    assert missing == []
    assert callable(task_module(name).documents)


def test_an_unknown_benchmark_is_a_user_error():
    with pytest.raises(UserError, match="unknown benchmark 'spider'; choose one of logiccat"):
        benchmark_module("spider")


@pytest.mark.parametrize(
    ("name", "server"),
    [("logiccat", "logiccat --engine mysql"), ("tpcds", "tpcds --engine postgres")],
)
@pytest.mark.parametrize("option", ["reload", "rotate_reader"])
def test_server_options_on_the_embedded_engine_are_refused_before_any_build(
    name, server, option, tmp_path
):
    with pytest.raises(UserError, match=f"are for a server: {server}"):
        benchmark_module(name).prepare(tmp_path, **{option: True})
    assert list(tmp_path.iterdir()) == []  # nothing built


@pytest.mark.parametrize(("name", "engine"), [("logiccat", "duckdb"), ("tpcds", "sqlite")])
def test_prepare_on_an_engine_the_benchmark_does_not_run_on_is_a_user_error(name, engine, tmp_path):
    with pytest.raises(UserError, match=engine):
        benchmark_module(name).prepare(tmp_path, engine=engine)
    assert list(tmp_path.iterdir()) == []
