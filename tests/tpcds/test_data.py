"""TPC-DS data from the installed extension: gold queries, schema DDL, the built database."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys

import duckdb
import pytest
import sqlglot

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.tpcds import data
from sqlbench_lmeval.tpcds.data import (
    DATABASE_NAME,
    MANIFEST_NAME,
    check_scale_factor,
    database_dir,
    empty_gold_queries,
    ensure_database,
    extension_path,
    gold_queries,
    read_manifest,
    schema_ddl,
    schema_mapping,
)

TEST_SCALE_FACTOR = 0.01  # the scale factor of the session database (tests/tpcds/conftest.py)


def test_the_extension_is_the_installed_package_file():
    path = extension_path()
    assert path.is_file()
    assert path.parts[-4:] == (
        "duckdb_extension_tpcds",
        "extensions",
        f"v{duckdb.__version__}",
        "tpcds.duckdb_extension",
    )


def test_99_gold_queries_that_parse_as_duckdb():
    queries = gold_queries()
    assert sorted(queries) == list(range(1, 100))
    assert len(set(queries.values())) == 99
    for number, sql in queries.items():
        assert sqlglot.parse_one(sql, dialect="duckdb") is not None, number


def test_schema_ddl_creates_the_24_tables_with_their_columns():
    ddl = schema_ddl()
    assert ddl.count("CREATE TABLE ") == 24
    assert "PRIMARY KEY (ss_item_sk, ss_ticket_number)" in ddl
    mapping = schema_mapping()
    with contextlib.closing(duckdb.connect()) as connection:
        for statement in ddl.split(";"):
            if statement.strip():
                connection.execute(statement)
        tables = connection.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE NOT internal"
        ).fetchall()
    assert {(t, c, d) for t, c, d in tables} == {
        (table, column, kind)
        for table, columns in mapping.items()
        for column, kind in columns.items()
    }
    assert len(mapping) == 24 and len(mapping["store_sales"]) == 23


@pytest.mark.parametrize("bad", [0, -1, 0.001, "many", None, float("nan"), float("inf")])
def test_bad_scale_factors_are_user_errors(bad, tmp_path):
    with pytest.raises(UserError, match="scale factor"):
        check_scale_factor(bad)
    with pytest.raises(UserError, match="scale factor"):
        ensure_database(tmp_path, bad)
    assert not (tmp_path / "tpcds").exists()


def test_the_built_database_and_its_manifest(tpcds_cache, tpcds_manifest):
    directory = database_dir(tpcds_cache, TEST_SCALE_FACTOR)
    assert directory == tpcds_cache / "tpcds" / f"v{data.BUILDER_VERSION}" / "sf0.01"
    assert tpcds_manifest["database"] == str(directory / DATABASE_NAME)
    assert tpcds_manifest["scale_factor"] == TEST_SCALE_FACTOR
    assert tpcds_manifest["duckdb_version"] == duckdb.__version__
    assert sorted(map(int, tpcds_manifest["gold_row_counts"])) == list(range(1, 100))
    on_disk = json.loads((directory / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert on_disk["gold_row_counts"] == tpcds_manifest["gold_row_counts"]
    # No temporary file of the build is left behind.
    # The build's files, and the perturbed copy the suite's fixture makes for scoring beside
    # them (``execution.perturbed``; a user's cache gets it on first scoring).
    assert sorted(p.name for p in directory.iterdir()) == [
        ".build.lock",
        ".perturbed",
        MANIFEST_NAME,
        DATABASE_NAME,
    ]
    # Read in a child process: DuckDB refuses a second connection to a file this process may
    # already hold under another configuration (an engine connection of an earlier test here).
    read = (
        "import duckdb, json, sys\n"
        "con = duckdb.connect(sys.argv[1], read_only=True)\n"
        "tables = [name for (name,) in con.execute('SELECT table_name FROM duckdb_tables()')"
        ".fetchall()]\n"
        "count = con.execute('SELECT count(*) FROM store_sales').fetchone()[0]\n"
        "print(json.dumps([tables, count]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", read, tpcds_manifest["database"]],
        capture_output=True,
        text=True,
        check=True,
    )
    tables, count = json.loads(done.stdout)
    assert set(tables) == set(schema_mapping())
    assert count > 1000


def test_known_empty_gold_queries_at_sf_001(tpcds_manifest):
    # Measured with duckdb 1.5.5: at sf 0.01, 27 gold queries return no rows.
    assert len(empty_gold_queries(tpcds_manifest)) == 27


def test_a_finished_build_is_reused(tpcds_cache, tpcds_manifest, monkeypatch):
    def no_build(*_args, **_kwargs):
        raise AssertionError("rebuilt a finished database")

    monkeypatch.setattr(data, "_build", no_build)
    again = ensure_database(tpcds_cache, TEST_SCALE_FACTOR)
    assert again == tpcds_manifest


def test_a_build_by_another_duckdb_version_is_stale(tpcds_cache, tpcds_manifest, tmp_path):
    directory = database_dir(tmp_path, TEST_SCALE_FACTOR)
    directory.mkdir(parents=True)
    (directory / DATABASE_NAME).write_bytes(b"")
    stale = {**tpcds_manifest, "duckdb_version": "0.9.0"}
    (directory / MANIFEST_NAME).write_text(json.dumps(stale), encoding="utf-8")
    assert read_manifest(directory) is None
    assert read_manifest(database_dir(tpcds_cache, TEST_SCALE_FACTOR)) is not None


def test_a_database_without_manifest_is_an_interrupted_build(tmp_path, monkeypatch):
    directory = database_dir(tmp_path, TEST_SCALE_FACTOR)
    directory.mkdir(parents=True)
    (directory / DATABASE_NAME).write_bytes(b"half a database")
    assert read_manifest(directory) is None
    calls = []

    def fake_build(where, scale_factor, _gold_cache, **_options):
        calls.append((where, scale_factor))
        return {"scale_factor": scale_factor, "gold_row_counts": {}}

    monkeypatch.setattr(data, "_build", fake_build)
    manifest = ensure_database(tmp_path, TEST_SCALE_FACTOR)
    assert calls == [(directory, TEST_SCALE_FACTOR)]
    assert manifest["database"] == str(directory / DATABASE_NAME)


def test_a_failed_build_leaves_nothing_behind(tmp_path, monkeypatch):
    def fail(_database, _outcomes):
        raise RuntimeError("gold check failed")

    monkeypatch.setattr(data, "_gold_row_counts", fail)
    with pytest.raises(RuntimeError, match="gold check failed"):
        ensure_database(tmp_path, TEST_SCALE_FACTOR)
    directory = database_dir(tmp_path, TEST_SCALE_FACTOR)
    assert [p.name for p in directory.iterdir()] == [".build.lock"]


@pytest.mark.slow
def test_default_scale_factor_returns_rows_for_all_gold_queries_but_17(tpcds_default_cache):
    """Builds sf 1 (about 30 s plus 10 s of gold queries): the claim in the task README."""
    from sqlbench_lmeval.tpcds.benchmark import DEFAULT_SCALE_FACTOR

    manifest = ensure_database(tpcds_default_cache, DEFAULT_SCALE_FACTOR)
    print(f"\nsf {DEFAULT_SCALE_FACTOR:g}: built in {manifest['build_seconds']} s")
    assert empty_gold_queries(manifest) == [17]


def test_a_build_removes_the_temporary_files_of_killed_builds(tmp_path, monkeypatch):
    # What a build killed mid-way leaves (see data._build): the DuckDB file under a temporary
    # name, its WAL, a manifest being written. Under the build lock nobody else is writing, so
    # the next build removes them; the finished database and manifest are not temporaries.
    directory = database_dir(tmp_path, TEST_SCALE_FACTOR)
    directory.mkdir(parents=True)
    leftovers = [
        f".{DATABASE_NAME}.4242.0badc0de.tmp",
        f".{DATABASE_NAME}.4242.0badc0de.tmp.wal",
        f".{MANIFEST_NAME}.4242.0badc0de.tmp",
    ]
    for name in leftovers:
        (directory / name).write_bytes(b"half")
    monkeypatch.setattr(
        data, "_build", lambda where, sf, *_, **__: {"scale_factor": sf, "gold_row_counts": {}}
    )
    ensure_database(tmp_path, TEST_SCALE_FACTOR)
    assert sorted(p.name for p in directory.iterdir()) == [".build.lock"]
