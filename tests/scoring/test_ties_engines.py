"""Tie-aware EX on real engines (SQLite, DuckDB; MariaDB in ``execution/test_ties_mysql.py``):
hand-built gold queries, their probes run where gold runs, and predictions (SQL, run there
too) that must or must not count as right.

Table ``s(name, grade, score)``: scores 90, 80, then ten 70s, then 60, and two NULLs; grades
split the ten 70s five and five.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pytest
from support.ties import verdict

from sqlbench_lmeval.execution import Database
from sqlbench_lmeval.scoring.metrics import ACCEPTABLE
from sqlbench_lmeval.scoring.tie_compare import TIE_EQUIVALENT

ROWS = (
    [("ann", 1, 90.0), ("bob", 1, 80.0)]
    + [(f"t{i}", 1 + i % 2, 70.0) for i in range(10)]
    + [("zed", 2, 60.0), ("nul1", 1, None), ("nul2", 2, None)]
)
DDL = "CREATE TABLE s (name VARCHAR(10), grade INTEGER, score DOUBLE)"


@pytest.fixture(scope="module")
def databases(tmp_path_factory) -> dict[str, Database]:
    folder: Path = tmp_path_factory.mktemp("ties")
    lite = sqlite3.connect(folder / "s.sqlite")
    lite.execute(DDL)
    lite.executemany("INSERT INTO s VALUES (?, ?, ?)", ROWS)
    lite.commit()
    lite.close()
    duck = duckdb.connect(str(folder / "s.duckdb"))
    duck.execute(DDL)
    duck.executemany("INSERT INTO s VALUES (?, ?, ?)", ROWS)
    duck.close()
    return {
        "sqlite": Database("sqlite", str(folder / "s.sqlite")),
        "duckdb": Database("duckdb", str(folder / "s.duckdb")),
    }


ENGINES = ["sqlite", "duckdb"]


@pytest.mark.parametrize("engine", ENGINES)
def test_ten_way_tie_at_the_cut(databases, engine):
    gold = "SELECT name, score FROM s WHERE score IS NOT NULL ORDER BY score DESC LIMIT 5"
    other = (
        "SELECT name, score FROM s WHERE score = 90 OR score = 80 OR name IN "
        "('t9', 't8', 't7') ORDER BY score DESC, name DESC"
    )
    tied = verdict(databases[engine], gold, other)
    assert tied["ex"] and tied["reason"] in ("match", TIE_EQUIVALENT)
    assert tied[ACCEPTABLE] == str(10 * 9 * 8)  # 3 of the ten 70s, in any order
    wrong = "SELECT name, score FROM s WHERE score >= 70 AND name <> 'bob' ORDER BY score DESC"
    assert not verdict(databases[engine], gold, wrong + " LIMIT 5")["ex"]


@pytest.mark.parametrize("engine", ENGINES)
def test_ties_in_the_middle_of_an_ordered_result(databases, engine):
    gold = "SELECT name FROM s WHERE score IS NOT NULL ORDER BY score DESC"
    reordered = "SELECT name FROM s WHERE score IS NOT NULL ORDER BY score DESC, name DESC"
    tied = verdict(databases[engine], gold, reordered)
    assert tied["ex"]
    swapped_groups = "SELECT name FROM s WHERE score IS NOT NULL ORDER BY score = 80, score DESC"
    assert not verdict(databases[engine], gold, swapped_groups)["ex"]


@pytest.mark.parametrize("engine", ENGINES)
def test_order_by_a_constant_any_rows(databases, engine):
    constant = "1 = 1" if engine == "duckdb" else "'x'"  # DuckDB refuses a string literal
    gold = f"SELECT name FROM s ORDER BY {constant} LIMIT 4"
    assert verdict(databases[engine], gold, "SELECT name FROM s WHERE grade = 2 LIMIT 4")["ex"]
    assert not verdict(databases[engine], gold, "SELECT 'nobody' FROM s LIMIT 4")["ex"]


@pytest.mark.parametrize("engine", ENGINES)
def test_multi_key_order(databases, engine):
    gold = "SELECT name, grade FROM s WHERE score = 70 ORDER BY grade DESC, score LIMIT 2"
    grade_two = "SELECT name, grade FROM s WHERE score = 70 AND grade = 2 ORDER BY name LIMIT 2"
    assert verdict(databases[engine], gold, grade_two)["ex"]
    grade_one = "SELECT name, grade FROM s WHERE score = 70 AND grade = 1 LIMIT 2"
    assert not verdict(databases[engine], gold, grade_one)["ex"]


def test_nulls_sort_first_ascending_on_sqlite_and_last_on_duckdb(databases):
    # The probe keeps gold's ORDER BY, so each engine places NULLs its own way.
    gold = "SELECT name FROM s ORDER BY score LIMIT 1"
    nulls = "SELECT name FROM s WHERE score IS NULL LIMIT 1"
    lowest = "SELECT name FROM s WHERE score = 60"
    assert verdict(databases["sqlite"], gold, nulls)["ex"]  # either NULL row
    assert not verdict(databases["sqlite"], gold, lowest)["ex"]
    assert verdict(databases["duckdb"], gold, lowest)["ex"]
    assert not verdict(databases["duckdb"], gold, nulls)["ex"]


@pytest.mark.parametrize("engine", ENGINES)
def test_desc_with_nulls(databases, engine):
    # DESC: SQLite puts NULLs last, DuckDB too (its default is NULLS LAST either way), so the
    # 14th row is one of the two NULL rows, which tie.
    gold = "SELECT name FROM s ORDER BY score DESC LIMIT 1 OFFSET 13"
    other = "SELECT name FROM s WHERE name = 'nul2'"
    assert verdict(databases[engine], gold, other)["ex"]
    assert not verdict(databases[engine], gold, "SELECT name FROM s WHERE name = 'zed'")["ex"]


@pytest.mark.parametrize("engine", ENGINES)
def test_key_not_selected_is_probed_as_an_extra_column(databases, engine):
    gold = "SELECT name FROM s WHERE score IS NOT NULL ORDER BY score * 2 DESC LIMIT 3"
    other = "SELECT name FROM s WHERE name IN ('ann', 'bob', 't4') ORDER BY score DESC"
    assert verdict(databases[engine], gold, other)["ex"]


@pytest.mark.parametrize("engine", ENGINES)
def test_key_over_an_output_alias(databases, engine):
    # |d| = 5 for bob (80) and the ten 70s: eleven rows tie for the one place.
    gold = "SELECT name, score - 75 AS d FROM s WHERE score IS NOT NULL ORDER BY ABS(d) LIMIT 1"
    assert verdict(databases[engine], gold, "SELECT 't3', -5.0")["ex"]
    assert verdict(databases[engine], gold, "SELECT 'bob', 5.0")["ex"]
    assert not verdict(databases[engine], gold, "SELECT 'zed', -15.0")["ex"]
