"""A LogicCat bundle damaged after `prepare` (a database file deleted or truncated) stops
`score` and `gold` naming the file and the command that rebuilds it (exit 2), instead of
trying to download the upstream archive; `prepare` rebuilds it."""

from __future__ import annotations

import json
import shutil

import pytest

from sqlbench_lmeval import cli
from sqlbench_lmeval.logiccat import benchmark, bundle
from sqlbench_lmeval.logiccat.source import SOURCE_ENV

DATABASE = "databases/chargingnet.sqlite"


@pytest.fixture
def cache(fixture_bundle, tmp_path, monkeypatch):
    # No source configured: before, the damaged bundle sent `score` to the download.
    monkeypatch.delenv(SOURCE_ENV, raising=False)
    root = tmp_path / "cache"
    shutil.copytree(fixture_bundle.root, bundle.bundle_dir(root))
    return root


@pytest.fixture
def predictions(fixture_bundle, tmp_path):
    path = tmp_path / "predictions.jsonl"
    lines = [json.dumps({"id": r.id, "prediction": r.gold_sql}) for r in fixture_bundle.records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def score(cache, predictions, output):
    argv = ["score", "logiccat", str(predictions), "-o", str(output), "--no-progress"]
    return cli.main([*argv, "--cache-dir", str(cache)])


def truncate(path):
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def delete(path):
    path.unlink()


@pytest.mark.parametrize("damage", [truncate, delete], ids=["truncated", "deleted"])
def test_score_names_the_damaged_file_and_the_rebuild(
    damage, cache, predictions, tmp_path, capsys, fixture_source
):
    output = tmp_path / "scores.json"
    assert score(cache, predictions, output) == 0
    capsys.readouterr()
    damaged = bundle.bundle_dir(cache) / DATABASE
    damage(damaged)
    output.unlink()
    assert score(cache, predictions, output) == 2
    err = capsys.readouterr().err
    assert str(damaged) in err
    assert "`sqlbench-lmeval prepare logiccat`" in err
    assert ("is missing" if damage is delete else "checksum differs") in err
    assert "cannot download" not in err
    assert not output.exists()
    gold = tmp_path / "gold.jsonl"
    argv = ["gold", "logiccat", "-o", str(gold), "--cache-dir", str(cache), "--no-progress"]
    assert cli.main(argv) == 2
    assert str(damaged) in capsys.readouterr().err
    # What the named command runs (the fixture is not the pinned upstream commit, so it is
    # passed as a verified source): the bundle is rebuilt and the same answers score again.
    benchmark.prepare(cache, source=fixture_source)
    assert score(cache, predictions, output) == 0


def test_a_corrupt_manifest_is_damage_too(cache, predictions, tmp_path, capsys):
    manifest = bundle.bundle_dir(cache) / "manifest.json"
    manifest.write_text("{", encoding="utf-8")
    assert score(cache, predictions, tmp_path / "scores.json") == 2
    err = capsys.readouterr().err
    assert str(manifest) in err and "is corrupt" in err
    assert "`sqlbench-lmeval prepare logiccat`" in err


def test_a_cache_never_prepared_is_still_built_on_first_use(fixture_source, tmp_path):
    built = bundle.ensure_bundle(fixture_source, tmp_path / "fresh", progress=False)
    assert len(built.records) == 12
