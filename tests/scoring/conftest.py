"""Fixtures of the scoring tests."""

from __future__ import annotations

import sqlite3

import pytest

from sqlbench_lmeval.execution import Database


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    path = tmp_path_factory.mktemp("db") / "pumps.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE pump (name TEXT, flow REAL, head REAL);
            INSERT INTO pump VALUES ('A', 10.0, 2.5), ('B', 20.0, 1.0), ('C', 5.0, 4.0);
            """
        )
    conn.close()
    return Database(engine="sqlite", path=str(path))


@pytest.fixture
def pumps(tmp_path):
    """A fresh SQLite file of two pumps, A and B (one per test: the tests that stop workers on
    it must not share it)."""
    path = tmp_path / "pumps.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE pump (name TEXT); INSERT INTO pump VALUES ('A'), ('B');")
    conn.close()
    return Database("sqlite", str(path))
