"""The benchmark contract (``sqlbench_lmeval.benchmarks.Benchmark``): every benchmark fills in
what the CLI and the lm-eval hooks call, and refuses options that do not apply to it."""

from __future__ import annotations

import pytest

from sqlbench_lmeval import benchmarks
from sqlbench_lmeval.benchmarks import NAMES, Benchmark, task_module
from sqlbench_lmeval.errors import UserError


@pytest.mark.parametrize("name", NAMES)
def test_every_benchmark_is_a_benchmark_record_under_its_own_name(name):
    benchmark = benchmarks.get(name)
    assert isinstance(benchmark, Benchmark)
    assert benchmark.name == name
    required = (
        benchmark.load_items,
        benchmark.dataset_version,
        benchmark.prepare,
        benchmark.check_engine,
    )
    assert all(callable(function) for function in required)
    assert benchmark.check_engine(None) == benchmark.engines[0]  # the embedded engine first
    assert callable(task_module(name).documents)


def test_the_optional_hooks_are_offered_where_the_benchmark_has_them():
    # TPC-DS measures structure and summarises it per run; LogicCat measures execution alone.
    assert benchmarks.get("tpcds").item_metrics is not None
    assert benchmarks.get("tpcds").aggregate_metrics is not None
    assert benchmarks.get("logiccat").item_metrics is None
    assert benchmarks.get("logiccat").scoring_hooks().item_metrics is None


def test_an_unknown_benchmark_is_a_user_error():
    with pytest.raises(UserError, match="unknown benchmark 'spider'; choose one of logiccat"):
        benchmarks.get("spider")


@pytest.mark.parametrize(
    ("name", "server"),
    [("logiccat", "logiccat --engine mysql"), ("tpcds", "tpcds --engine postgres")],
)
@pytest.mark.parametrize("option", ["reload", "rotate_reader"])
def test_server_options_on_the_embedded_engine_are_refused_before_any_build(
    name, server, option, tmp_path
):
    with pytest.raises(UserError, match=f"are for a server: {server}"):
        benchmarks.get(name).prepare(tmp_path, **{option: True})
    assert list(tmp_path.iterdir()) == []  # nothing built


@pytest.mark.parametrize(("name", "engine"), [("logiccat", "duckdb"), ("tpcds", "sqlite")])
def test_prepare_on_an_engine_the_benchmark_does_not_run_on_is_a_user_error(name, engine, tmp_path):
    with pytest.raises(UserError, match=engine):
        benchmarks.get(name).prepare(tmp_path, engine=engine)
    assert list(tmp_path.iterdir()) == []
