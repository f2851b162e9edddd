"""Answers that match gold without reading the data (issue 31 items 4 and 5).

``data_dependence``: an answer that matched gold runs again on a perturbed copy of its
database (``execution.perturbed``); one whose result stays while gold's changes is flagged
``reads_no_table``, scores 0 on ``ex_reads_data`` and on ``r_ves``. The disguises are those of
the issue, each written with gold's true value on real items: LogicCat 737 (gold reads
``sales``) and TPC-DS q96 (DuckDB).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sqlbench_lmeval.execution import (
    Database,
    GoldCache,
    Job,
    Outcome,
    Status,
    execute,
    execute_many,
)
from sqlbench_lmeval.execution.perturbed import FOLDER, perturbed_database
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable
from sqlbench_lmeval.paths import gold_cache_dir
from sqlbench_lmeval.scoring import data_dependence
from sqlbench_lmeval.scoring.compare import compare, same_result
from sqlbench_lmeval.scoring.data_dependence import (
    CHANGED,
    NO_TABLE,
    NOT_TESTED,
    UNCHANGED,
    UNDECIDABLE,
    Case,
    judge,
    judge_all,
)
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.verdicts import aggregate


def ok(*rows) -> Outcome:
    return Outcome(Status.OK, columns=("v",), rows=tuple(rows))


# -- the rule -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer_perturbed", "gold_perturbed", "expected"),
    [
        (ok((5,)), ok((9,)), UNCHANGED),  # gold moved with the data, the answer did not
        (ok((9,)), ok((9,)), CHANGED),
        (ok((7,)), ok((9,)), CHANGED),  # changed otherwise than gold: it still reads the data
        (ok(), ok((9,)), CHANGED),  # no rows on the copy: it read the data
        (ok((5,)), ok((5,)), UNDECIDABLE),  # gold's result does not depend on what changed
        (ok((9,)), ok((5,)), UNDECIDABLE),
        (Outcome(Status.TIMEOUT, error="t"), ok((9,)), UNDECIDABLE),  # the machine decided
        (ok((5,)), Outcome(Status.TIMEOUT, error="t"), UNDECIDABLE),
        (Outcome(Status.ERROR, error="e"), ok((9,)), CHANGED),
        (ok((5.0 + 5e-15,)), ok((9,)), UNCHANGED),  # "the same" is ex's rule: float noise
    ],
)
def test_judge(answer_perturbed, gold_perturbed, expected):
    # Answer and gold both returned 5 on the original database.
    assert judge(ok((5,)), answer_perturbed, ok((5,)), gold_perturbed, False) == expected


def test_a_server_database_has_no_copy_and_is_not_tested():
    server = Database("mysql", "mysql://reader:pw@127.0.0.1:1/logiccat")
    assert perturbed_database(server) is None
    item = Item(id=1, question="q", database=server, gold_sql="SELECT 1 FROM t", dialect="mysql")
    case = Case(item, "SELECT 1 FROM t LIMIT 1", ok((1,)), ok((1,)), False)
    assert judge_all([case], limits=None) == [NOT_TESTED]


# -- the perturbed copy ---------------------------------------------------------------------


@pytest.fixture
def shop(tmp_path) -> Database:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE);
            CREATE TABLE sales (id INTEGER PRIMARY KEY, customer_id INTEGER, price REAL,
                                day TEXT, CHECK (price < 100));
            CREATE TABLE returns (id INTEGER, note TEXT);
            CREATE INDEX sales_customer ON sales (customer_id);
            CREATE VIEW big_sales AS SELECT * FROM sales WHERE price > 20;
            INSERT INTO customer VALUES (1, 'Ann'), (2, 'Bob');
            INSERT INTO sales VALUES (1, 1, 10.5, '2024-01-01'), (2, 1, 30.0, '2024-01-02'),
                                     (3, 2, 99.0, '2024-01-03');
            """
        )
    conn.close()
    return Database("sqlite", str(path))


def rows(database: Database, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{database.path}?mode=ro", uri=True) as conn:
        return conn.execute(sql).fetchall()


def test_the_copy_doubles_every_row_with_other_values_and_keeps_no_table_empty(shop):
    copy = perturbed_database(shop)
    assert copy.path.endswith(f"{FOLDER}/shop.sqlite") and copy.engine == "sqlite"
    # Every row twice: numbers + 1 and + K (K = 1000: the largest span of an integer column,
    # 2 of id, is below it), text with ~ and ~~ appended.
    assert rows(copy, "SELECT * FROM customer ORDER BY rowid") == [
        (2, "Ann~"),
        (3, "Bob~"),
        (1001, "Ann~~"),
        (1002, "Bob~~"),
    ]
    assert rows(copy, "SELECT id, customer_id, price, day FROM sales ORDER BY rowid")[:2] == [
        (2, 2, 11.5, "2024-01-01~"),
        (3, 2, 31.0, "2024-01-02~"),
    ]
    assert rows(copy, "SELECT COUNT(*), COUNT(DISTINCT id) FROM sales") == [(6, 6)]
    # Keys pair the rows of one copy only: each sale finds its own customer.
    assert rows(copy, "SELECT COUNT(*) FROM sales JOIN customer ON customer.id = customer_id")[0][
        0
    ] == (6)
    # The empty table got one row of 1s; the primary key is gone, so rowid 1 exists.
    assert rows(copy, "SELECT * FROM returns") == [(1, "1")]
    assert rows(copy, "SELECT COUNT(*) FROM sales WHERE rowid = 1") == [(1,)]
    # The collation and the view are kept; the CHECK constraint did not stop price + 1000.
    assert rows(copy, "SELECT COUNT(*) FROM customer WHERE name = 'ann~'") == [(1,)]
    assert rows(copy, "SELECT COUNT(*) FROM big_sales") == [(5,)]
    # Built once: a second call finds it current; a changed original builds it again.
    assert perturbed_database(shop) == copy
    with sqlite3.connect(shop.path) as conn:
        conn.execute("INSERT INTO returns VALUES (7, 'late')")
    conn.close()
    assert rows(perturbed_database(shop), "SELECT * FROM returns") == [
        (8, "late~"),
        (1007, "late~~"),
    ]


# -- scoring on a small database --------------------------------------------------------------

TOTAL = "SELECT SUM(price) FROM sales"  # 139.5 on shop


def item_on(database: Database, gold: str, number: int = 1) -> Item:
    return Item(id=number, question="q", database=database, gold_sql=gold, dialect="sqlite")


def test_disguised_constants_are_flagged_and_queries_are_not(shop):
    answers = [
        "SELECT 139.5",  # no table: flagged without a run
        "SELECT 139.5 FROM sales LIMIT 1",
        "SELECT 139.5 + 0 * (SELECT COUNT(*) FROM sales)",
        "SELECT 139.5 FROM sqlite_master LIMIT 1",  # a catalog is not data
        TOTAL,
        "SELECT total FROM (SELECT SUM(price) AS total FROM sales)",  # another honest query
        "SELECT SUM(price) FROM big_sales",  # wrong (129.0): not asked
    ]
    scores = Scorer(progress=False).score([item_on(shop, TOTAL)] * len(answers), answers)
    assert [s["ex"] for s in scores] == [1, 1, 1, 1, 1, 1, 0]
    assert [s["data_dependence"] for s in scores] == [
        NO_TABLE,
        UNCHANGED,
        UNCHANGED,
        NO_TABLE,
        CHANGED,
        CHANGED,
        None,
    ]
    assert [s["reads_no_table"] for s in scores] == [True] * 4 + [False] * 3
    assert [s["ex_reads_data"] for s in scores] == [0, 0, 0, 0, 1, 1, 0]
    # Item 4: a flagged answer earns no efficiency, however little work it did; gold as the
    # answer earns 1.
    assert [s["r_ves"] for s in scores[:5]] == [0, 0, 0, 0, 1.0]
    assert scores[5]["r_ves"] > 0 and scores[6]["r_ves"] == 0
    assert aggregate(scores)["n_reads_no_table"] == 4


def test_the_runs_on_the_copy_count_no_work(shop, monkeypatch):
    # Only their results are compared: SQLite runs each once, without its exact step count.
    seen = []
    real = data_dependence.execute_many

    def recording(jobs, limits, **kwargs):
        seen.append(limits)
        return real(jobs, limits, **kwargs)

    monkeypatch.setattr(data_dependence, "execute_many", recording)
    (score,) = Scorer(progress=False).score([item_on(shop, TOTAL)], [TOTAL])
    assert score["data_dependence"] == CHANGED and score["work"] > 0  # the first run counted
    assert len(seen) == 2 and not any(limits.count_work for limits in seen)  # gold, answer


def test_gold_that_does_not_move_with_the_data_cannot_tell(shop):
    # Whether a sale above 1,000,000 exists: none on the original nor on the copy.
    gold = "SELECT COUNT(*) FROM sales WHERE price > 1000000"
    scores = Scorer(progress=False).score(
        [item_on(shop, gold)] * 2, ["SELECT 0 FROM sales LIMIT 1", gold]
    )
    assert [s["data_dependence"] for s in scores] == [UNDECIDABLE, UNDECIDABLE]
    assert [(s["ex"], s["reads_no_table"], s["ex_reads_data"]) for s in scores] == [
        (1, False, 1)
    ] * 2


# -- real items -------------------------------------------------------------------------------


def disguises(v: str, table: str, column: str) -> list[str]:
    """The issue's disguises of the constant ``v`` over ``table`` (SQLite)."""
    return [
        f"SELECT {v} FROM {table} LIMIT 1",
        f"SELECT {v} WHERE EXISTS (SELECT 1 FROM {table})",
        f"SELECT {v} + 0 * (SELECT COUNT(*) FROM {table})",
        f"SELECT c.v FROM (SELECT {v} AS v) AS c JOIN {table} ON {table}.rowid = 1",
        f"SELECT MAX({v}, {column} * 0) FROM {table} LIMIT 1",
        f"SELECT {v} FROM sqlite_master LIMIT 1",
        f"SELECT {v}",
    ]


@pytest.mark.slow
def test_logiccat_737_constants_in_disguise_are_flagged(logiccat_cache):
    from sqlbench_lmeval.logiccat.benchmark import load_items

    (item,) = [item for item in load_items(cache_dir=logiccat_cache) if item.id == 737]
    assert "FROM sales" in item.gold_sql and "Sale_Price" in item.gold_sql
    gold = execute(Job(item.database, item.gold_sql))
    ((value,),) = gold.rows  # 2770253904630.0: one row, one number
    answers = [*disguises(repr(value), "sales", "Sale_Price"), item.gold_sql]
    scores = Scorer(gold_cache=GoldCache(gold_cache_dir(logiccat_cache)), progress=False).score(
        [item] * len(answers), answers
    )
    assert [s["ex"] for s in scores] == [1] * 8  # every disguise returns gold's value
    assert [s["data_dependence"] for s in scores] == [UNCHANGED] * 5 + [NO_TABLE] * 2 + [CHANGED]
    assert [s["reads_no_table"] for s in scores] == [True] * 7 + [False]
    assert [s["ex_reads_data"] for s in scores] == [0] * 7 + [1]
    # Item 4: `SELECT 2770253904630.0` scored r_ves 1.118, above gold; now 0.
    assert [s["r_ves"] for s in scores] == [0] * 7 + [1.0]


def duckdb_constants(item) -> list[dict]:
    """The scores of ``SELECT v``, ``SELECT v FROM store LIMIT 1`` and gold as answers to the
    TPC-DS ``item``, whose gold counts (or sums) to one number ``v``."""
    gold = execute(Job(item.database, item.gold_sql))
    ((value,),) = gold.rows
    answers = [f"SELECT {value}", f"SELECT {value} FROM store LIMIT 1", item.gold_sql]
    return Scorer(progress=False).score([item] * 3, answers)


def test_tpcds_constants_are_flagged_on_duckdb(tpcds_items):
    # At scale factor 0.01 q96 counts 0 sales, on the original and on the copy alike, so
    # nothing could tell there; q48 sums 98 items sold.
    (item,) = [item for item in tpcds_items if item.id == 48]
    scores = duckdb_constants(item)
    assert [s["ex"] for s in scores] == [1, 1, 1]
    assert [s["data_dependence"] for s in scores] == [NO_TABLE, UNCHANGED, CHANGED]
    assert [(s["ex_reads_data"], s["r_ves"]) for s in scores] == [(0, 0), (0, 0), (1, 1.0)]


@pytest.mark.slow
def test_tpcds_q96_constants_are_flagged_at_the_default_scale_factor(tpcds_default_cache):
    from sqlbench_lmeval.tpcds.benchmark import load_items

    (item,) = [item for item in load_items(cache_dir=tpcds_default_cache) if item.id == 96]
    scores = duckdb_constants(item)  # SELECT 874: r_ves 1.118 before issue 31
    assert [s["ex"] for s in scores] == [1, 1, 1]
    assert [s["data_dependence"] for s in scores] == [NO_TABLE, UNCHANGED, CHANGED]
    assert [(s["ex_reads_data"], s["r_ves"]) for s in scores] == [(0, 0), (0, 0), (1, 1.0)]


def test_tpcds_gold_as_the_answer_reads_the_data(tpcds_items, tpcds_cache):
    scores = Scorer(gold_cache=GoldCache(gold_cache_dir(tpcds_cache)), progress=False).score(
        tpcds_items, [item.gold_sql for item in tpcds_items]
    )
    healthy = [s for s in scores if s["gold_status"] == "ok"]
    assert healthy  # at scale factor 0.01 many gold queries return no rows
    assert [
        s["id"] for s in healthy if (s["ex"], s["ex_reads_data"], s["r_ves"]) != (1, 1, 1.0)
    ] == []
    assert [s["id"] for s in scores if s["reads_no_table"]] == []
    # An honest query is never flagged: at worst (gold does not move) the test cannot tell.
    assert {s["data_dependence"] for s in scores} <= {CHANGED, UNDECIDABLE}


# Results of the copy and of the original, and near-equal ones: float noise of another
# summation order, a constant, rows in other orders.
SHOP_QUERIES = [
    "SELECT * FROM customer",
    "SELECT name FROM customer ORDER BY id DESC",
    TOTAL,
    "SELECT SUM(price) FROM (SELECT price FROM sales ORDER BY price DESC)",
    "SELECT SUM(price + 0.1) - 0.30000000000000004 FROM sales",
    "SELECT 139.5",
    "SELECT COUNT(*) FROM sales",
    "SELECT day, price FROM sales ORDER BY day",
    "SELECT day, price FROM sales ORDER BY day DESC",
    "SELECT customer_id, AVG(price) FROM sales GROUP BY customer_id",
    "SELECT DISTINCT customer_id FROM sales",
    "SELECT * FROM returns",
    "SELECT name, NULL FROM customer",
]


def test_same_result_is_ex_on_real_results(shop):
    # data_dependence's "the same" takes fast paths (compare.same_result); on every pair of
    # these real outcomes, of the original and of the perturbed copy, it is compare's ex.
    copy = perturbed_database(shop)
    outcomes = [execute(Job(db, sql)) for db in (shop, copy) for sql in SHOP_QUERIES]
    assert all(outcome.status is Status.OK for outcome in outcomes)
    verdicts = set()
    for a in outcomes:
        for b in outcomes:
            for ordered in (False, True):
                verdict = same_result(a, b, ordered=ordered)
                assert verdict is compare(a, b, ordered=ordered).ex, (a, b, ordered)
                verdicts.add((verdict, a.rows == b.rows))
    # Equal, equal only under the tolerance (the float noise) and different pairs all occur.
    assert verdicts == {(True, True), (True, False), (False, False)}


def test_same_result_is_ex_on_tpcds_gold_and_its_copy(tpcds_items):
    # DuckDB's values (Decimals, dates, NULLs), gold on the original against gold on the copy.
    items = tpcds_items[:40]
    copy = perturbed_database(items[0].database)
    jobs = [Job(db, item.gold_sql) for db in (items[0].database, copy) for item in items]
    outcomes = execute_many(jobs, workers=2)
    pairs = list(zip(outcomes[: len(items)], outcomes[len(items) :], strict=True))
    # Some gold moves with the data, some (no rows at this scale) does not.
    assert {same_result(b, a, ordered=False) for a, b in pairs} == {True, False}
    for item, (original, perturbed) in zip(items, pairs, strict=True):
        for ordered in (False, True):
            for a, b in ((perturbed, original), (original, original), (original, perturbed)):
                assert same_result(a, b, ordered=ordered) is compare(a, b, ordered=ordered).ex, (
                    item.id
                )


def test_a_copy_that_cannot_be_built_stops_scoring(shop):
    # A file stands where the copy's folder goes: the evaluation cannot run, no answer scores.
    (Path(shop.path).parent / FOLDER).write_text("not a folder")
    with pytest.raises(EvaluationUnavailable, match="perturbed copy of .*shop.sqlite"):
        Scorer(progress=False).score([item_on(shop, TOTAL)], ["SELECT 139.5 FROM sales LIMIT 1"])
    # An answer that needs no second run is scored as before.
    (score,) = Scorer(progress=False).score([item_on(shop, TOTAL)], ["SELECT 139.5"])
    assert score["data_dependence"] == NO_TABLE
