"""Building, committing and loading the bundle (fixture data)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import sqlite_utils

from sqlbench_lmeval.data.checksums import sha256_file
from sqlbench_lmeval.data.damage import DataMissing
from sqlbench_lmeval.logiccat import bundle, gold, health, source
from sqlbench_lmeval.logiccat.benchmark import items_from_bundle
from sqlbench_lmeval.offline import gold_result_lines

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logiccat"
LAYOUT = FIXTURES / "shared_layout"


def test_records(fixture_bundle):
    first = fixture_bundle.records[0]
    assert first == bundle.Record(
        id=1,
        db_id="chargingnet",
        type=1,
        category="physical",
        question="What is the rated capacity times the efficiency of North Hub, times 14?",
        step="【step1】: Filter Stations by name. 【step2】: Multiply.",
        gold_sql_mysql="SELECT Efficiency * 14 AS Scaled FROM Stations WHERE Name = 'north hub';",
        gold_sql="SELECT Efficiency * 14 AS Scaled FROM Stations WHERE Name = 'north hub'",
        gold_status="ok",
        flags=(),
    )
    assert {r.category for r in fixture_bundle.records} == set(bundle.CATEGORIES.values())


def test_schema_is_the_stored_ddl_with_comments(fixture_bundle):
    schema = fixture_bundle.schema("chargingnet")
    assert schema.startswith('CREATE TABLE "stations" ( -- 充电站\n')
    assert '"Efficiency" REAL, -- 效率（0-1）' in schema
    assert schema.index('CREATE TABLE "charging_sessions"') < schema.index("CREATE VIEW")
    assert schema.endswith(";")
    with pytest.raises(KeyError, match="no LogicCat database 'nowhere'"):
        fixture_bundle.database_path("nowhere")


def test_manifest(fixture_bundle):
    manifest = fixture_bundle.manifest
    assert manifest["builder_version"] == bundle.BUILDER_VERSION
    assert manifest["source_commit"] == "0123456789abcdef0123456789abcdef01234567"
    assert manifest["frozen_now"] == "2025-12-10 12:00:00"
    assert set(manifest["files"]) == {"databases/chargingnet.sqlite", "records.jsonl"}
    assert manifest["databases"] == {"chargingnet": "databases/chargingnet.sqlite"}
    assert manifest["sqlglot_version"]


def copy_bundle(fixture_bundle, tmp_path) -> Path:
    cache = tmp_path / "cache"
    shutil.copytree(fixture_bundle.root, bundle.bundle_dir(cache))
    return cache


def test_load_checks_manifest_and_files(fixture_bundle, tmp_path):
    cache = copy_bundle(fixture_bundle, tmp_path)
    assert len(bundle.load_bundle(cache).records) == 12
    database = bundle.bundle_dir(cache) / "databases" / "chargingnet.sqlite"
    with open(database, "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(DataMissing, match="missing or changed"):
        bundle.load_bundle(cache)
    (bundle.bundle_dir(cache) / "manifest.json").unlink()
    with pytest.raises(DataMissing, match="sqlbench-lmeval prepare logiccat"):
        bundle.load_bundle(cache)


def test_a_second_load_reuses_the_first_until_a_file_changes(fixture_bundle, tmp_path):
    import os

    cache = copy_bundle(fixture_bundle, tmp_path)
    first = bundle.load_bundle(cache)
    assert bundle.load_bundle(cache) is first
    # Same size, new content and mtime: the checksums are verified again.
    records = bundle.bundle_dir(cache) / "records.jsonl"
    text = records.read_bytes()
    records.write_bytes(text.replace(b"north hub", b"north hux"))
    info = records.stat()
    os.utime(records, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))
    with pytest.raises(DataMissing, match="missing or changed"):
        bundle.load_bundle(cache)
    records.write_bytes(text)
    assert bundle.load_bundle(cache) is not first


def test_interrupted_build_leaves_nothing_that_loads(fixture_source, tmp_path, monkeypatch):
    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(health, "judge_health", crash)
    with pytest.raises(KeyboardInterrupt):
        bundle.build_bundle(fixture_source, tmp_path, progress=False, workers=0)
    # Temporary folder removed too; only the (released) build lock's file stays.
    assert [p.name for p in (tmp_path / "logiccat").iterdir()] == [".build.lock"]
    with pytest.raises(DataMissing):
        bundle.load_bundle(tmp_path)


def test_the_next_build_removes_what_killed_builds_left(fixture_source, tmp_path):
    # Work folders of builds killed hard (their own cleanup never ran): no live process holds
    # the build lock, so the next build removes them (tests/test_build_lock.py shows that a
    # live build's folder is left alone).
    folder = tmp_path / "logiccat"
    killed = folder / ".building-v3-killed" / "databases"
    killed.mkdir(parents=True)
    (killed / "half.sqlite").write_bytes(b"half")
    (folder / ".replaced-killed" / "bundle").mkdir(parents=True)
    built = bundle.build_bundle(fixture_source, tmp_path, progress=False, workers=0)
    assert sorted(p.name for p in folder.iterdir()) == [".build.lock", built.root.name]


def test_ensure_builds_once_then_loads(fixture_source, tmp_path, monkeypatch):
    built = bundle.ensure_bundle(fixture_source, tmp_path, progress=False)
    assert len(built.records) == 12
    monkeypatch.setattr(bundle, "build_bundle", lambda *a, **k: pytest.fail("rebuilt"))
    assert bundle.ensure_bundle(fixture_source, tmp_path).manifest == built.manifest


def test_force_rebuild_replaces_the_bundle(fixture_bundle, fixture_source, tmp_path):
    cache = copy_bundle(fixture_bundle, tmp_path)
    marker = bundle.bundle_dir(cache) / "stale.txt"
    marker.write_text("old", "utf-8")
    rebuilt = bundle.build_bundle(fixture_source, cache, force=True, progress=False, workers=0)
    assert not marker.exists()
    assert rebuilt.manifest["files"] == fixture_bundle.manifest["files"]


def test_build_prints_the_health_summary(fixture_source, tmp_path, capsys):
    bundle.build_bundle(fixture_source, tmp_path, progress=True, workers=0)
    out = capsys.readouterr().out
    assert "LogicCat bundle: 12 questions" in out
    assert "gold status: all_null 1, empty 1, error 1, non_select 1, ok 8" in out


def with_spider_database(tmp_path: Path) -> source.Source:
    """The fixture plus a Spider-derived database (the authors' .sqlite file, SQLite gold)."""
    root = tmp_path / "upstream"
    shutil.copytree(LAYOUT, root)
    (root / "Sqlite" / "database").mkdir(parents=True)
    conn = sqlite3.connect(root / "Sqlite" / "database" / "Concert.sqlite")
    conn.executescript(
        'CREATE TABLE "singer" ("Name" text, "Age" int);'
        "INSERT INTO singer VALUES ('Joe', 20), ('Ann', 80);"
    )
    conn.commit()
    conn.close()
    query = 'SELECT Name FROM singer WHERE Age + 2000 - strftime("%Y", "now") > 0'
    records = json.loads((root / "records-4036.json").read_text("utf-8"))
    records.append({"db_id": "concert", "type": 3, "idx": 13, "question": "Who?",
                    "query": query, "step": "", "format": "MySQL"})  # fmt: skip
    (root / "records-4036.json").write_text(json.dumps(records), "utf-8")
    with open(root / "MySQL" / "data.sql", "a", encoding="utf-8") as handle:
        handle.write(f"{query}\tconcert\t3\n")
    files = [*root.glob("MySQL/database/*.sql"), *root.glob("Sqlite/database/*.sqlite")]
    table = {p.relative_to(root).as_posix(): sha256_file(p) for p in files}
    table["MySQL/data.sql"] = sha256_file(root / "MySQL" / "data.sql")
    return source.locate(root, checksums=table)


def test_spider_derived_database_and_gold_are_used_as_written(tmp_path):
    built = bundle.build_bundle(with_spider_database(tmp_path), tmp_path, progress=False)
    record = built.records[-1]
    assert record.gold_sql == record.gold_sql_mysql
    assert record.gold_status == gold.OK
    assert record.flags == (gold.CLOCK_DEPENDENT,)
    assert 'CREATE TABLE "singer"' in built.schema("concert")
    lines = {
        line["id"]: line for line in gold_result_lines(items_from_bundle(built), progress=False)
    }
    assert lines[13]["rows"] == [["Ann"]]  # 80 + 2000 > 2025, the frozen year


def test_sqlite_utils_can_inspect_a_built_database(fixture_bundle):
    # The fixture dump (fixtures/logiccat/shared_layout/MySQL/database/Charging_Net.sql) has
    # 4 INSERTs into Stations and 6 into charging_sessions, one view, and one foreign key:
    # charging_sessions.Station_ID -> Stations.Station_ID (table names lower-cased).
    path = fixture_bundle.database_path("chargingnet")
    cli = Path(sys.executable).with_name("sqlite-utils")
    tables = json.loads(
        subprocess.run(
            [str(cli), "tables", str(path), "--counts"], capture_output=True, check=True
        ).stdout
    )
    assert tables == [
        {"table": "stations", "count": 4},
        {"table": "charging_sessions", "count": 6},
    ]
    views = json.loads(
        subprocess.run([str(cli), "views", str(path)], capture_output=True, check=True).stdout
    )
    assert views == [{"view": "active_stations"}]
    database = sqlite_utils.Database(path)
    assert [
        (k.column, k.other_table, k.other_column)
        for k in database["charging_sessions"].foreign_keys
    ] == [("Station_ID", "stations", "Station_ID")]
    assert database["stations"].pks == ["Station_ID"]
