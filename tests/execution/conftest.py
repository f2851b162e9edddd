"""Small real databases for the execution tests, built in a temporary folder.

``tiny_sqlite``/``tiny_duckdb``: table ``t(a INTEGER, b TEXT, c REAL)`` with 100 rows, built
once per session. ``hooks_dir``: an importable module of setup hooks (a sleeping function, a
crashing function, a clock) placed on sys.path, so the worker processes can import it.
"""

from __future__ import annotations

import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest

ROWS = [(i, f"name{i}", i / 10) for i in range(100)]

HOOKS = textwrap.dedent(
    '''
    """Setup hooks for tests: trusted code that registers SQL functions."""
    import os
    import signal
    import time


    def register(conn):
        conn.create_function("slow_sleep", 1, lambda s: time.sleep(s) or 1)
        conn.create_function("die", 0, lambda: os.kill(os.getpid(), signal.SIGKILL))
        conn.create_function("frozen_now", 0, lambda: "2024-01-01 00:00:00")


    def broken(conn):
        raise RuntimeError("hook exploded")
    '''
)


def build_sqlite(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (a INTEGER, b TEXT, c REAL)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", ROWS)
    conn.commit()
    conn.close()
    return path


def build_duckdb(path: Path) -> Path:
    import duckdb

    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE t (a INTEGER, b VARCHAR, c DOUBLE)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", ROWS)
    conn.close()
    return path


@pytest.fixture(scope="session")
def db_dir(tmp_path_factory) -> Path:
    # A '#', a '?' and a space in the folder name: the URI must be quoted to stay read-only.
    folder = tmp_path_factory.mktemp("dbs") / "odd #name? dir"
    folder.mkdir()
    return folder


@pytest.fixture(scope="session")
def tiny_sqlite(db_dir) -> Path:
    return build_sqlite(db_dir / "tiny.sqlite")


@pytest.fixture(scope="session")
def tiny_duckdb(tmp_path_factory) -> Path:
    # No '?' here: DuckDB itself cannot write a database under such a folder (its WAL path
    # gets mangled), so only '#' and a space.
    folder = tmp_path_factory.mktemp("duck") / "odd #name dir"
    folder.mkdir()
    return build_duckdb(folder / "tiny.duckdb")


@pytest.fixture(scope="session")
def hooks_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hooks")
    (folder / "sqlbench_test_hooks.py").write_text(HOOKS)
    sys.path.insert(0, str(folder))  # the pool hands sys.path to its workers
    yield folder
    sys.path.remove(str(folder))
