"""The toy benchmark: five questions over a shop database built from the rows below into the
cache on first use, on the data layer (``data``: built once under the lock, every file
checksummed, damage named with the command that rebuilds it, gold run and judged at build)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from sqlbench_lmeval.benchmarks import Benchmark
from sqlbench_lmeval.data.built import MANIFEST, ensure_folder, load_folder
from sqlbench_lmeval.data.checksums import checksum_table
from sqlbench_lmeval.data.damage import DataDamaged, damaged
from sqlbench_lmeval.data.gold import gold_status, health_counts, run_gold
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.execution import Database, Job, Limits, engines
from sqlbench_lmeval.paths import cache_dir as cache_root
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.sql.dialects import check_dialect

BUILDER_VERSION = "1"
DATABASE = "shop.sqlite"
DIALECT = "sqlite"
ENGINES = ("sqlite",)
SCHEMA = """CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customer(id),
  amount REAL NOT NULL, year INTEGER NOT NULL);"""
CUSTOMERS = ((1, "Ada", "Oslo"), (2, "Bo", "Rome"), (3, "Cy", "Oslo"), (4, "Di", "Lima"))
ORDERS = ((1, 1, 10.0, 2023), (2, 1, 25.5, 2024), (3, 2, 7.25, 2024), (4, 3, 40.0, 2023))
#: (id, question, gold SQL)
QUESTIONS = (
    (1, "How many customers are there?", "SELECT COUNT(*) FROM customer"),
    (2, "Which customers live in Oslo?", "SELECT name FROM customer WHERE city = 'Oslo'"),
    (3, "What is the total amount of all orders?", "SELECT SUM(amount) FROM orders"),
    (
        4,
        "How much did each customer order in total? Give the name and the total.",
        "SELECT c.name, SUM(o.amount) FROM customer AS c JOIN orders AS o "
        "ON o.customer_id = c.id GROUP BY c.name",
    ),
    (5, "Which orders were placed in 2025?", "SELECT id FROM orders WHERE year = 2025"),
)
REBUILD = "`sqlbench-lmeval prepare toy`"


def folder(cache_dir=None) -> Path:
    """Where the built database of this builder version lives."""
    return cache_root(cache_dir) / "toy" / f"v{BUILDER_VERSION}"


def _fill(work: Path) -> dict:
    """The database, its gold judged by running it, and the manifest, written into ``work``."""
    connection = sqlite3.connect(work / DATABASE)
    try:
        with connection:
            connection.executescript(SCHEMA)
            connection.executemany("INSERT INTO customer VALUES (?, ?, ?)", CUSTOMERS)
            connection.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", ORDERS)
    finally:
        connection.close()
    database = Database(engine="sqlite", path=str(work / DATABASE))
    outcomes = run_gold([Job(database, sql) for _, _, sql in QUESTIONS], Limits())
    statuses = {
        str(number): gold_status(o.ok, o.rows)
        for (number, _, _), o in zip(QUESTIONS, outcomes, strict=True)
    }
    manifest = {
        "builder_version": BUILDER_VERSION,
        "gold_status": statuses,
        "health": health_counts(statuses.values(), ()),
        "files": checksum_table(work),
    }
    (work / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def _damaged(path: Path, reason: str) -> DataDamaged:
    return damaged("the toy file", path, reason, REBUILD)


def load(cache_dir=None) -> dict:
    """The manifest of the built database, its files checked (``data.built.load_folder``)."""
    return load_folder(
        folder(cache_dir),
        lambda manifest: manifest,
        version=("builder_version", BUILDER_VERSION),
        what="toy database",
        hint=f"build it with {REBUILD}",
        damaged=_damaged,
    )


def ensure(cache_dir=None, *, force: bool = False, rebuild_damaged: bool = False) -> dict:
    """The manifest of the built database, built first if it never was (``data.built``); a
    damaged build raises DataDamaged unless ``rebuild_damaged`` (``prepare``)."""
    return ensure_folder(
        folder(cache_dir),
        lambda: load(cache_dir),
        _fill,
        force=force,
        rebuild_damaged=rebuild_damaged,
    )


def check_engine(engine: str | None) -> str:
    """``engine`` when the toy runs on it (SQLite only), else a UserError."""
    try:
        return engines.choose(engine, ENGINES)
    except ValueError as error:
        raise UserError(f"the toy benchmark runs on sqlite, not on {engine!r}") from error


def load_items(cache_dir=None, dialect: str | None = None, engine=None, **_options) -> list[Item]:
    """The five items, building the database on first use; ``dialect``: the prompted one."""
    check_engine(engine)
    prompted = check_dialect(dialect, DIALECT)
    manifest = ensure(cache_dir)
    database = Database(engine="sqlite", path=str(folder(cache_dir) / DATABASE))
    return [
        Item(
            id=number,
            question=question,
            database=database,
            gold_sql=sql,
            dialect=DIALECT,
            gold_status=manifest["gold_status"][str(number)],
            prediction_dialect=None if prompted == DIALECT else prompted,
        )
        for number, question, sql in QUESTIONS
    ]


def dataset_version(cache_dir=None, **_options) -> str:
    """Names the data scored: the builder version (the rows and questions are in the code)."""
    return f"toy-builder{BUILDER_VERSION}"


def prepare(cache_dir=None, *, force: bool = False, **options) -> str:
    """Build the database into the cache (``sqlbench-lmeval prepare toy``); the summary."""
    if options.get("reload") or options.get("rotate_reader"):
        raise UserError("--reload and --rotate-reader are for a server; the toy has none")
    manifest = ensure(cache_dir, force=force, rebuild_damaged=True)
    statuses = ", ".join(f"{name} {n}" for name, n in manifest["health"]["status"].items())
    return f"toy: {len(QUESTIONS)} questions at {folder(cache_dir)}; gold status: {statuses}"


BENCHMARK = Benchmark(
    name="toy",
    load_items=load_items,
    dataset_version=dataset_version,
    prepare=prepare,
    check_engine=check_engine,
    engines=ENGINES,
)
