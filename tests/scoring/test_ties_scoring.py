"""Tie-aware EX in the scoring path itself: ``Scorer.score`` and ``Scorer.score_samples`` on a real
SQLite file, with a real gold cache and its tie store (``gold_ties``).

Table ``scores(name, score)``: ann 9, bob 8, cid 7, dan 7, eve 7, fay 5 (the README's worked
example), plus ``flat(name, k)``: 40 distinct names, all with k = 1.
"""

from __future__ import annotations

import json
import math
import sqlite3

import pytest
from support.ties import scores_database

from sqlbench_lmeval.execution import Database, GoldCache
from sqlbench_lmeval.execution.perturbed import COPIES
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION, gold_order_matters
from sqlbench_lmeval.scoring.gold_ties import ANSWERS, NONE, NOT_HANDLED, STORE_FILE
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.metrics import ACCEPTABLE, TIE_STATUS
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.stages import execute as execute_stage
from sqlbench_lmeval.scoring.tie_compare import TIE_EQUIVALENT
from sqlbench_lmeval.scoring.verdicts import aggregate

TOP3 = "SELECT name FROM scores ORDER BY score DESC LIMIT 3"


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> Database:
    names = ", ".join(f"('n{i:02d}', 1)" for i in range(40))
    flat = f"CREATE TABLE flat (name TEXT, k INTEGER); INSERT INTO flat VALUES {names};"
    return scores_database(tmp_path_factory.mktemp("ties") / "scores.sqlite", flat)


def item(database: Database, gold: str, item_id: int = 1) -> Item:
    return Item(item_id, "?", database, gold, "sqlite")


def score(database, gold, prediction, **options) -> dict:
    (scored,) = Scorer(workers=1, progress=False, **options).score(
        [item(database, gold)], [prediction]
    )
    return scored


def test_another_pick_from_the_tie_at_the_cut_is_right(database):
    # SQLite keeps cid (rowid order); eve is as right, fay is not tied with the 7s.
    eve = score(database, TOP3, "SELECT name FROM scores ORDER BY score DESC, name DESC LIMIT 3")
    assert (eve["ex"], eve["ex_strict"], eve["reason"]) == (1, 0, TIE_EQUIVALENT)
    assert eve[TIE_STATUS] == ANSWERS and eve[ACCEPTABLE] == "3"
    assert eve["comparison_version"] == COMPARISON_VERSION == "5"
    fay = score(database, TOP3, "SELECT name FROM scores WHERE name IN ('ann', 'bob', 'fay')")
    assert fay["ex"] == 0 and fay["reason"] != TIE_EQUIVALENT
    swapped = "SELECT 'bob' UNION ALL SELECT 'ann' UNION ALL SELECT 'cid'"
    assert score(database, TOP3, swapped)["ex"] == 0  # the 9 must come first


def test_ties_without_a_cut_in_any_order_and_gold_itself_matches(database):
    gold = "SELECT name FROM scores ORDER BY score DESC"
    other = score(database, gold, "SELECT name FROM scores ORDER BY score DESC, name DESC")
    assert other["ex"] == 1 and other["reason"] == TIE_EQUIVALENT
    assert other[ACCEPTABLE] == str(math.factorial(3))
    itself = score(database, gold, gold)
    assert (itself["ex"], itself["ex_strict"], itself["reason"]) == (1, 1, "match")


def test_limit_without_order_by_and_order_by_a_constant_take_any_rows(database):
    for gold in ("SELECT name FROM scores LIMIT 2", "SELECT name FROM scores ORDER BY 'x' LIMIT 2"):
        picked = score(database, gold, "SELECT name FROM scores WHERE score < 8")
        assert picked["ex"] == 0  # four rows, not two
        two = score(database, gold, "SELECT name FROM scores WHERE name IN ('fay', 'dan')")
        assert two["ex"] == 1 and two[ACCEPTABLE] == str(math.comb(6, 2)), gold
        outsider = score(database, gold, "SELECT 'zoe' UNION ALL SELECT 'ann'")
        assert outsider["ex"] == 0


def test_acceptable_is_a_decimal_string_beyond_a_float(database):
    gold = "SELECT name FROM flat ORDER BY k"
    reverse = score(database, gold, "SELECT name FROM flat ORDER BY name DESC")
    assert reverse["ex"] == 1 and reverse[ACCEPTABLE] == str(math.factorial(40))
    assert int(reverse[ACCEPTABLE]) > 2**64  # a JSON reader's float would round it


def test_tie_status_of_gold_without_order_and_of_gold_not_handled(database):
    plain = score(database, "SELECT name FROM scores", "SELECT name FROM scores")
    assert plain[TIE_STATUS] == NONE and plain[ACCEPTABLE] is None
    limit_expression = "SELECT name FROM scores ORDER BY score LIMIT 1 + 1"
    odd = score(database, limit_expression, "SELECT name FROM scores ORDER BY score LIMIT 2")
    assert odd[TIE_STATUS].startswith(NOT_HANDLED + ":")


def test_aggregate_numbers_never_include_the_logged_fields(database):
    scored = Scorer(workers=1, progress=False).score(
        [item(database, TOP3), item(database, "SELECT name FROM scores", 2)],
        ["SELECT name FROM scores ORDER BY score DESC, name DESC LIMIT 3", "SELECT 1"],
    )
    totals = aggregate(scored)
    assert totals["ex"] == 0.5 and totals["ex_strict"] == 0.0
    assert ACCEPTABLE not in totals and TIE_STATUS not in totals
    assert totals["reason_counts"][TIE_EQUIVALENT] == 1


def test_tie_records_are_stored_beside_the_gold_cache_and_read_warm(database, tmp_path):
    cache = GoldCache(tmp_path / "cache")
    prediction = "SELECT name FROM scores ORDER BY score DESC, name DESC LIMIT 3"
    cold = score(database, TOP3, prediction, gold_cache=cache)
    store = tmp_path / "cache" / STORE_FILE
    assert store.is_file()
    with sqlite3.connect(store) as conn:
        payloads = conn.execute("SELECT payload FROM entries").fetchall()
    conn.close()
    # Gold's record (three 7s for one place: 3 right answers), and one per perturbed copy (the
    # answer matched, so gold ran there with its probe; the subset may have dropped a 7).
    assert len(payloads) == 1 + len(COPIES)
    records = [tuple(json.loads(payload)[:2]) for (payload,) in payloads]
    assert (ANSWERS, "3") in records and {status for status, _ in records} == {ANSWERS}
    warm = score(database, TOP3, prediction, gold_cache=cache)
    assert warm == cold and warm["reason"] == TIE_EQUIVALENT


def test_a_warm_run_of_gold_as_the_answer_reads_gold_without_tokenizing_it(
    database, tmp_path, monkeypatch
):
    # Whether gold reads a table is in its tie record (also for gold with no order to plan:
    # reading a record is cheaper than tokenizing), and an answer that is gold's very text
    # names a table where gold does: a warm run tokenizes neither. Only the original's record
    # is made: on the copies, gold's text takes gold's outcome, which needs no tie record.
    from sqlbench_lmeval.sql import table_reads

    cache = GoldCache(tmp_path / "cache")
    plain = "SELECT name FROM scores WHERE score > 6"
    cold = [score(database, gold, gold, gold_cache=cache) for gold in (TOP3, plain)]
    with sqlite3.connect(tmp_path / "cache" / STORE_FILE) as conn:
        payloads = [json.loads(p) for (p,) in conn.execute("SELECT payload FROM entries")]
    conn.close()
    assert sorted(payload[3:] for payload in payloads) == [[False, False], [True, False]]
    tokenized = []
    monkeypatch.setattr(table_reads, "_surely_reads_no_table", lambda *a: tokenized.append(a))
    warm = [score(database, gold, gold, gold_cache=cache) for gold in (TOP3, plain)]
    assert warm == cold and tokenized == []
    assert [s["data_dependence"] for s in warm] == ["changed", "changed"]


def test_a_damaged_tie_store_is_set_aside_and_made_again(database, tmp_path):
    cache = GoldCache(tmp_path / "cache")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / STORE_FILE).write_bytes(b"not a database at all" * 100)
    prediction = "SELECT name FROM scores ORDER BY score DESC, name DESC LIMIT 3"
    scored = score(database, TOP3, prediction, gold_cache=cache)
    assert scored["ex"] == 1 and scored["reason"] == TIE_EQUIVALENT
    assert any(p.name.startswith(STORE_FILE + ".corrupt-") for p in (tmp_path / "cache").iterdir())
    assert score(database, TOP3, prediction, gold_cache=cache) == scored


def test_sampled_tie_resolutions_vote_as_one_group(database):
    # Two different right picks (cid, eve) and two equal wrong answers: the right ones win.
    samples = [
        "SELECT name FROM scores ORDER BY score DESC, name DESC LIMIT 3",
        "SELECT name FROM scores ORDER BY score DESC, name ASC LIMIT 3",
        "SELECT name FROM scores WHERE score <> 7",
        "SELECT name FROM scores WHERE score != 7",
        "SELECT name FROM scores ORDER BY score DESC, name = 'dan' DESC LIMIT 3",
    ]
    (scored,) = Scorer(workers=1, progress=False).score_samples([item(database, TOP3)], [samples])
    assert scored["ex_maj"] == 1
    groups = [sample["group"] for sample in scored["samples"]]
    assert groups[0] == groups[1] == groups[4] != groups[2] == groups[3]
    assert scored[TIE_STATUS] == ANSWERS and scored[ACCEPTABLE] == "3"


def test_gold_is_parsed_once_on_a_cold_run(database, tmp_path, monkeypatch):
    """A cold run takes gold's order from the tie plan's parse; a warm one, whose tie records
    come from the store (gold not planned), from the records, which keep it: no parse."""
    parsed = []

    def order_matters(sql, dialect):
        parsed.append(sql)
        return gold_order_matters(sql, dialect)

    monkeypatch.setattr(execute_stage, "gold_order_matters", order_matters)
    golds = [TOP3, "SELECT name FROM scores WHERE score = 7", "SELECT name FROM flat ORDER BY NULL"]
    items = [item(database, gold, n) for n, gold in enumerate(golds, 1)]
    answers = [TOP3, golds[1], "SELECT name FROM flat"]
    cache = GoldCache(tmp_path / "cache")
    cold = Scorer(workers=1, progress=False, gold_cache=cache).score(items, answers)
    assert parsed == []
    # ORDER BY NULL orders nothing, yet it is an ORDER BY: EX compares in order, as before.
    assert [s["ordered"] for s in cold] == [True, False, True]
    warm = Scorer(workers=1, progress=False, gold_cache=cache).score(items, answers)
    # Gold without ORDER, LIMIT, OFFSET or FETCH in its text is neither stored nor parsed; the
    # others' stored records say whether they have an outermost ORDER BY.
    assert parsed == [] and warm == cold


@pytest.fixture(scope="module")
def prices(tmp_path_factory) -> Database:
    path = tmp_path_factory.mktemp("shadow") / "prices.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE items (name TEXT, price REAL, cost REAL)")
        conn.executemany(
            "INSERT INTO items VALUES (?, ?, ?)",
            [("bob", 9.2, 1), ("ann", 9.4, 1), ("cid", 8.7, 1), ("dan", 3.0, -1)],
        )
    conn.close()
    return Database("sqlite", str(path))


def test_an_alias_named_like_a_table_column_cannot_widen_the_tie(prices):
    # ``price`` is both the alias of ROUND(price) and a table column; in ORDER BY's expression
    # SQLite reads the table's 9.4, 9.2, 8.7, 3.0, so only ann is right. Over the output all
    # three rounded 9.0s would tie.
    gold = "SELECT name, ROUND(price) AS price FROM items ORDER BY price + 0 DESC LIMIT 1"
    assert score(prices, gold, "SELECT 'ann', 9.0")["ex"] == 1
    for wrong in ("bob", "cid"):
        scored = score(prices, gold, f"SELECT '{wrong}', 9.0")
        assert (scored["ex"], scored["reason"]) == (0, "values"), wrong
        assert scored[TIE_STATUS] == ANSWERS and scored[ACCEPTABLE] == "1"


def test_an_alias_without_a_table_column_keeps_its_ties(prices):
    # ``c`` is an alias only: ORDER BY ABS(c) reads it, and |c| = 3 on every row.
    gold = "SELECT name, cost * 3 AS c FROM items ORDER BY ABS(c) DESC LIMIT 2"
    scored = score(prices, gold, "SELECT 'cid', 3.0 UNION ALL SELECT 'dan', -3.0")
    assert (scored["ex"], scored["reason"]) == (1, TIE_EQUIVALENT)
    assert scored[ACCEPTABLE] == "12"  # 2 of 4 rows, in either order
