"""A TPC-DS DuckDB file damaged after `prepare` (deleted or truncated) stops `score` naming the
file and the command that rebuilds it (exit 2), instead of rebuilding unasked or scoring
against a broken file; `prepare` rebuilds it.

The database is the session's (``tpcds_cache``, built once and scored by the whole suite),
copied per case with its gold results; only the rebuild test builds it again, once: the rebuild
is the same whatever the damage, while its detection differs (a recorded size, or the file
opened). No case scores the copy before damaging it: that would build its perturbed copies
again (they are kept per file path), for nothing the suite does not check already."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import TPCDS_SCALE_FACTOR

from sqlbench_lmeval import cli
from sqlbench_lmeval.paths import gold_cache_dir
from sqlbench_lmeval.tpcds.data import (
    DATABASE_NAME,
    MANIFEST_NAME,
    database_dir,
    gold_queries,
)

SF = str(TPCDS_SCALE_FACTOR)


@pytest.fixture
def cache(tpcds_cache, tmp_path):
    """A cache root of this case's own: the session's built database and its gold results,
    copied (damaging them must not touch the session's)."""
    root = tmp_path / "cache"
    built = database_dir(tpcds_cache, TPCDS_SCALE_FACTOR)
    shutil.copytree(built, database_dir(root, TPCDS_SCALE_FACTOR))
    if gold_cache_dir(tpcds_cache).is_dir():
        shutil.copytree(gold_cache_dir(tpcds_cache), gold_cache_dir(root))
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


def score_refuses_the_damaged_file(cache, predictions, output, capsys, damage) -> None:
    """After ``damage``, ``score`` exits 2 naming the file and the command that rebuilds it,
    and writes nothing."""
    directory = database_dir(cache, TPCDS_SCALE_FACTOR)
    damage(directory / DATABASE_NAME)
    assert score(cache, predictions, output) == 2
    err = capsys.readouterr().err
    assert str(directory / DATABASE_NAME) in err
    assert f"`sqlbench-lmeval prepare tpcds --scale-factor {SF}`" in err
    assert not output.exists()
    assert ("is missing" if damage is delete else "damaged after it was prepared") in err


@pytest.mark.parametrize("recorded_size", [True, False], ids=["size", "no-size"])
@pytest.mark.parametrize("damage", [truncate, delete], ids=["truncated", "deleted"])
def test_score_names_the_damaged_file_and_the_rebuild(
    damage, recorded_size, cache, predictions, tmp_path, capsys
):
    if not recorded_size:
        forget_size(database_dir(cache, TPCDS_SCALE_FACTOR) / MANIFEST_NAME)
    score_refuses_the_damaged_file(cache, predictions, tmp_path / "scores.json", capsys, damage)


def test_prepare_rebuilds_the_damaged_file(cache, predictions, tmp_path, capsys):
    output = tmp_path / "scores.json"
    score_refuses_the_damaged_file(cache, predictions, output, capsys, truncate)
    argv = ["prepare", "tpcds", "--scale-factor", SF, "--cache-dir", str(cache)]
    assert cli.main(argv) == 0
    assert score(cache, predictions, output) == 0
    with open(output, encoding="utf-8") as handle:
        assert json.load(handle)["metrics"]["verdict_counts"] == {"correct": 5, "missing": 94}
