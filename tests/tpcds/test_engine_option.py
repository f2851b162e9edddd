"""TPC-DS runs on DuckDB or PostgreSQL: an engine meant for LogicCat is an error, never
ignored."""

from __future__ import annotations

import json

import pytest

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.tpcds import benchmark, task


@pytest.mark.parametrize("command", ["prepare", "score", "gold"])
@pytest.mark.parametrize("engine", ["mysql", "sqlite"])
def test_engine_other_than_duckdb_on_tpcds_commands_is_a_user_error(
    command, engine, tmp_path, capsys
):
    arguments = {
        "prepare": ["prepare", "tpcds"],
        "score": [
            "score",
            "tpcds",
            str(tmp_path / "predictions.jsonl"),
            "-o",
            str(tmp_path / "s.json"),
        ],
        "gold": ["gold", "tpcds", "--output", str(tmp_path / "gold.jsonl")],
    }[command]
    (tmp_path / "predictions.jsonl").write_text(json.dumps({"id": 1, "prediction": "x"}) + "\n")
    code = main([*arguments, "--engine", engine, "--cache-dir", str(tmp_path / "cache")])
    assert code == 2
    err = capsys.readouterr().err
    assert "TPC-DS runs on duckdb or postgres" in err and repr(engine) in err
    # Refused before anything was built.
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.duckdb"))


def test_engine_metadata_on_the_tpcds_task_is_a_user_error(tmp_path, capsys):
    # Under lm_eval the dataset hook ends in the one-line form, exit 2, as the commands do.
    with pytest.raises(SystemExit) as stopped:
        task.load_dataset(cache_dir=tmp_path, engine="mysql")
    assert stopped.value.code == 2
    assert "TPC-DS runs on duckdb or postgres" in capsys.readouterr().err


def test_duckdb_postgres_or_no_engine_is_accepted():
    assert benchmark.check_engine(None) == benchmark.check_engine(" DuckDB ") == "duckdb"
    assert benchmark.check_engine(" Postgres") == "postgres"


@pytest.mark.parametrize("option", ["--reload", "--rotate-reader"])
def test_server_options_on_the_embedded_engine_are_a_user_error(option, tmp_path, capsys):
    """``--reload``/``--rotate-reader`` act on a server; on DuckDB they would do nothing."""
    code = main(["prepare", "tpcds", option, "--cache-dir", str(tmp_path / "cache")])
    assert code == 2
    assert "--reload and --rotate-reader are for a server" in capsys.readouterr().err
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.duckdb"))
