"""A TPC-DS DuckDB file damaged after `prepare` (deleted or truncated) stops `score` naming the
file and the command that rebuilds it (exit 2), instead of rebuilding unasked or scoring
against a broken file; `prepare` rebuilds it."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import TPCDS_SCALE_FACTOR

from sqlbench_lmeval import cli
from sqlbench_lmeval.tpcds.data import (
    DATABASE_NAME,
    MANIFEST_NAME,
    database_dir,
    gold_queries,
)

SF = str(TPCDS_SCALE_FACTOR)


@pytest.fixture
def cache(tpcds_cache, tmp_path):
    root = tmp_path / "cache"
    built = database_dir(tpcds_cache, TPCDS_SCALE_FACTOR)
    shutil.copytree(built, database_dir(root, TPCDS_SCALE_FACTOR))
    return root


@pytest.fixture
def predictions(tmp_path):
    path = tmp_path / "predictions.jsonl"
    lines = [json.dumps({"id": n, "prediction": sql}) for n, sql in gold_queries().items()]
    path.write_text("\n".join(lines[:5]) + "\n", encoding="utf-8")
    return path


def score(cache, predictions, output):
    argv = ["score", "tpcds", str(predictions), "-o", str(output), "--no-progress"]
    return cli.main([*argv, "--scale-factor", SF, "--cache-dir", str(cache)])


def truncate(path):
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def delete(path):
    path.unlink()


def forget_size(manifest_path):
    """A manifest as builds wrote it before they recorded the database's size."""
    manifest = json.loads(manifest_path.read_text("utf-8"))
    manifest.pop("database_bytes", None)
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")


@pytest.mark.parametrize("recorded_size", [True, False], ids=["size", "no-size"])
@pytest.mark.parametrize("damage", [truncate, delete], ids=["truncated", "deleted"])
def test_score_names_the_damaged_file_and_the_rebuild(
    damage, recorded_size, cache, predictions, tmp_path, capsys
):
    directory = database_dir(cache, TPCDS_SCALE_FACTOR)
    if not recorded_size:
        forget_size(directory / MANIFEST_NAME)
    output = tmp_path / "scores.json"
    assert score(cache, predictions, output) == 0
    capsys.readouterr()
    damage(directory / DATABASE_NAME)
    output.unlink()
    assert score(cache, predictions, output) == 2
    err = capsys.readouterr().err
    assert str(directory / DATABASE_NAME) in err
    assert f"`sqlbench-lmeval prepare tpcds --scale-factor {SF}`" in err
    assert not output.exists()
    assert ("is missing" if damage is delete else "damaged after it was prepared") in err
    argv = ["prepare", "tpcds", "--scale-factor", SF, "--cache-dir", str(cache)]
    assert cli.main(argv) == 0
    assert score(cache, predictions, output) == 0
    with open(output, encoding="utf-8") as handle:
        assert json.load(handle)["metrics"]["verdict_counts"] == {"correct": 5, "missing": 94}
