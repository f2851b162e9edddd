"""Scoring when the database is not the one the benchmark was built on.

A query on a table that does not exist fails the same way whether the model invented the table
or the table is gone. Gold tells them apart: gold whose build-time health is ``ok`` ran on the
benchmark's database, so when it errors now the database changed, and scoring stops
(``EvaluationUnavailable``) instead of scoring every answer 0; so does gold cut off by a row
limit lower than the build's. Gold recorded as failing is reported, and no answer is compared
with it (verdict ``broken_gold``). Real SQLite files, real worker processes.
"""

from __future__ import annotations

import sqlite3
import sys
import textwrap

import pytest

from sqlbench_lmeval.execution import Database, Limits
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable
from sqlbench_lmeval.lmeval.hooks import ExecuteAndScore
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.scorer import Scorer

GOLD = "SELECT name FROM pump ORDER BY name"


def pumps(path):
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE pump (name TEXT); INSERT INTO pump VALUES ('A'), ('B');")
    conn.close()
    return path


def item(database, item_id=1, gold_sql=GOLD, gold_status="ok") -> Item:
    return Item(
        item_id, f"question {item_id}", database, gold_sql, "sqlite", "physical", gold_status
    )


def test_an_invented_table_is_the_models_error(tmp_path):
    database = Database("sqlite", str(pumps(tmp_path / "pumps.sqlite")))
    (score,) = Scorer(progress=False).score([item(database)], ["SELECT x FROM invented"])
    assert (score["status"], score["ves"], score["gold_status"]) == ("error", 0, "ok")


def test_gold_that_ran_at_build_time_and_fails_now_stops_scoring(tmp_path):
    path = pumps(tmp_path / "pumps.sqlite")
    database = Database("sqlite", str(path))
    path.write_bytes(b"")  # every table gone: SQLite reads an empty file as an empty database
    items = [item(database, 1), item(database, 2), item(database, 3, "SELECT 42")]
    with pytest.raises(EvaluationUnavailable) as raised:
        Scorer(progress=False, workers=1).score(items, [GOLD, GOLD, "SELECT 42"])
    message = str(raised.value)
    assert "item 1: no such table: pump; item 2: no such table: pump" in message
    assert "item 3" not in message and "prepare the data again" in message


@pytest.mark.parametrize("built", ["empty", "all_null"])
def test_gold_that_ran_empty_at_build_time_and_fails_now_stops_scoring_too(tmp_path, built):
    # Gold that returned no rows (or only NULLs) when the data was built ran there too.
    path = pumps(tmp_path / "pumps.sqlite")
    database = Database("sqlite", str(path))
    path.write_bytes(b"")
    gold = "SELECT name FROM pump WHERE name = 'Z'"
    with pytest.raises(EvaluationUnavailable, match="item 5: no such table: pump"):
        Scorer(progress=False, workers=1).score([item(database, 5, gold, built)], [gold])


def test_gold_beyond_the_row_limit_stops_scoring(tmp_path):
    # Gold returns 2 rows (A, B): under --max-rows 1 no answer can be compared with it.
    database = Database("sqlite", str(pumps(tmp_path / "pumps.sqlite")))
    items = [item(database, 1), item(database, 2, "SELECT 42")]
    with pytest.raises(EvaluationUnavailable) as raised:
        Scorer(limits=Limits(max_rows=1), progress=False).score(items, [GOLD, "SELECT 42"])
    message = str(raised.value)
    assert "gold of 1 item(s) returns more rows than the limit of 1 (items 1)" in message
    assert "--max-rows" in message


def test_under_lm_eval_the_row_cap_comes_from_its_variable(tmp_path, monkeypatch):
    # lm_eval takes no option of ours: $SQLBENCH_LMEVAL_MAX_ROWS sets the cap its filter uses.
    # Gold returns 2 rows: under a cap of 1 the run stops naming the variable; under 2 it scores.
    monkeypatch.setenv("SQLBENCH_LMEVAL_CACHE", str(tmp_path / "cache"))
    database = Database("sqlite", str(pumps(tmp_path / "pumps.sqlite")))
    docs = [item(database, 1).to_doc()]
    monkeypatch.setenv("SQLBENCH_LMEVAL_MAX_ROWS", "1")
    with pytest.raises(EvaluationUnavailable, match=r"under lm_eval \$SQLBENCH_LMEVAL_MAX_ROWS"):
        ExecuteAndScore("logiccat").apply([[GOLD]], docs)
    monkeypatch.setenv("SQLBENCH_LMEVAL_MAX_ROWS", "2")
    (score,) = ExecuteAndScore("logiccat").apply([[GOLD]], docs)
    assert (score["status"], score["ex"]) == ("ok", 1)


def test_gold_recorded_as_failing_is_only_reported(tmp_path):
    database = Database("sqlite", str(pumps(tmp_path / "pumps.sqlite")))
    broken = item(database, gold_sql="SELECT nope FROM pump", gold_status="error")
    (score,) = Scorer(progress=False).score([broken], [GOLD])
    assert (score["gold_status"], score["ves"], score["ex"]) == ("error", 1, 0)
    assert score["reason"] == "broken_gold"


def test_gold_that_fails_once_is_run_again_and_its_result_used(tmp_path, monkeypatch):
    """A function of the setup hook fails while a marker file exists (and removes it): the
    first gold run errors, the one fresh re-run succeeds, and the item scores as usual."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "flaky_once_hooks.py").write_text(
        textwrap.dedent(
            """
            import os

            MARKER = os.environ["FLAKY_ONCE_MARKER"]


            def flaky(value):
                if os.path.exists(MARKER):
                    os.remove(MARKER)
                    raise RuntimeError("failed once")
                return value


            def register(conn):
                conn.create_function("flaky", 1, flaky)
            """
        )
    )
    marker = tmp_path / "fail-next"
    marker.write_text("")
    monkeypatch.setenv("FLAKY_ONCE_MARKER", str(marker))
    monkeypatch.setattr(sys, "path", [str(hooks), *sys.path])  # the workers get sys.path
    path = pumps(tmp_path / "pumps.sqlite")
    database = Database("sqlite", str(path), setup="flaky_once_hooks:register")
    gold = "SELECT flaky(name) FROM pump ORDER BY name"
    (score,) = Scorer(progress=False, workers=1).score([item(database, gold_sql=gold)], [GOLD])
    assert not marker.exists()  # the first run did fail
    assert (score["gold_status"], score["ves"], score["ex"]) == ("ok", 1, 1)


def test_the_lm_eval_filter_raises_instead_of_scoring_zeros(tmp_path, monkeypatch):
    monkeypatch.setenv("SQLBENCH_LMEVAL_CACHE", str(tmp_path / "cache"))
    path = pumps(tmp_path / "pumps.sqlite")
    docs = [item(Database("sqlite", str(path)), i).to_doc() for i in (1, 2)]
    path.unlink()
    with pytest.raises(EvaluationUnavailable, match="pumps.sqlite: no such file"):
        ExecuteAndScore("logiccat").apply([[GOLD], [GOLD]], docs)
