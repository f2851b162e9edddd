"""LogicCat gold: what we execute for each question (the upstream MySQL query transpiled to SQLite,
its coercions made explicit against the built database's column types; the six Spider-derived
databases' gold as written), and the flags its text reveals
(docs/logiccat.md#how-the-copy-is-made, "Gold")."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from sqlbench_lmeval.data.gold import ALL_NULL, EMPTY, ERROR, NON_SELECT, OK
from sqlbench_lmeval.logiccat import transpile
from sqlbench_lmeval.logiccat.transpile import ColumnTypes
from sqlbench_lmeval.vocabulary import GoldFlag

#: The ``Database.setup`` hook of every LogicCat database, run on each connection for gold and
#: predictions alike: MySQL-compatible functions and the frozen clock (``mysql_functions``).
CONNECTION_SETUP = "sqlbench_lmeval.logiccat.mysql_functions:install"

#: The gold statuses a record carries: the data layer's (``data.gold``), named here for readers
#: of LogicCat's gold.
STATUSES = (OK, EMPTY, ALL_NULL, ERROR, NON_SELECT)
# Gold flags (the vocabulary of scoring.item.Item).
CLOCK_DEPENDENT = GoldFlag.CLOCK_DEPENDENT
RANDOM = GoldFlag.RANDOM
NONDETERMINISTIC_ORDER = GoldFlag.NONDETERMINISTIC_ORDER
MYSQL_SPECIFIC = GoldFlag.MYSQL_SPECIFIC

SPIDER_DERIVED = frozenset(
    {"Population", "concert", "contract", "exerciseclub", "hospital", "school"}
)


# ---------------------------------------------------------------------------------------------
# Static flags
# ---------------------------------------------------------------------------------------------

_CLOCK_CALLS = {
    "NOW", "CURDATE", "CURTIME", "SYSDATE", "UTC_DATE", "UTC_TIME", "UTC_TIMESTAMP",
    "LOCALTIME", "LOCALTIMESTAMP", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP",
}  # fmt: skip
_CLOCK_NODES = (exp.CurrentDate, exp.CurrentTime, exp.CurrentTimestamp, exp.CurrentDatetime)
_RANDOM_CALLS = {"RAND", "RANDOM", "UUID", "UUID_SHORT", "RANDOMBLOB"}


def _call_names(tree: exp.Expression) -> set[str]:
    names = set()
    for call in tree.find_all(exp.Func):
        if isinstance(call, exp.Anonymous):
            names.add(call.name.upper())
        else:
            names.add(call.sql_name().upper())
    return names


def static_flags(tree: exp.Expression) -> set[str]:
    """Flags visible in the query text: clock_dependent, random."""
    flags = set()
    names = _call_names(tree)
    if names & _CLOCK_CALLS or any(True for _ in tree.find_all(*_CLOCK_NODES)):
        flags.add(CLOCK_DEPENDENT)
    # 'now' as a time value; SQLite also reads a double-quoted "now" that names no column so.
    if any(
        (isinstance(node, exp.Literal) and node.is_string or
         isinstance(node, exp.Identifier) and node.quoted)
        and str(node.this).strip().lower() == "now"
        for node in tree.find_all(exp.Literal, exp.Identifier)
    ):  # fmt: skip
        flags.add(CLOCK_DEPENDENT)
    # UNIX_TIMESTAMP() without an argument reads the clock too.
    for call in tree.find_all(exp.Anonymous):
        if call.name.upper() == "UNIX_TIMESTAMP" and not call.expressions:
            flags.add(CLOCK_DEPENDENT)
    if names & _RANDOM_CALLS or any(True for _ in tree.find_all(exp.Rand)):
        flags.add(RANDOM)
    return flags


def text_flags(sql: str, dialect: str) -> set[str]:
    """static_flags of a text that may not parse (then a keyword scan of its tokens)."""
    try:
        trees = [t for t in sqlglot.parse(sql, read=dialect) if t is not None]
    except sqlglot.errors.SqlglotError:
        trees = []
    if trees:
        return set().union(*(static_flags(tree) for tree in trees))
    words = {w.upper() for w in re.findall(r"[A-Za-z_]+", sql)}
    flags = set()
    if words & _CLOCK_CALLS:
        flags.add(CLOCK_DEPENDENT)
    if words & _RANDOM_CALLS:
        flags.add(RANDOM)
    return flags


# ---------------------------------------------------------------------------------------------
# Preparing one gold query
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PreparedGold:
    """A gold query ready to run: the SQLite text, or why there is none."""

    sql: str  # what we execute (SQLite); the MySQL text itself when it cannot be transpiled
    runnable: bool  # False: status is decided without running (non_select / error)
    status: str | None  # decided status when not runnable
    flags: frozenset[str]
    note: str = ""  # why not runnable, or the MySQL-only semantics made explicit
    # The transpile without the coercion rewrites (only when there were some): health runs it
    # and flags the item mysql_specific only if naive SQLite semantics change the answer.
    plain_sql: str | None = None


_SELECT_TYPES = (exp.Select, exp.Union, exp.Except, exp.Intersect, exp.Subquery)


def prepare_gold(db_id: str, gold_mysql: str, types: ColumnTypes | None = None) -> PreparedGold:
    """Transpile one upstream gold query (or take the Spider-derived SQLite gold as written).

    ``types`` are the database's column types (``column_types``); with them MySQL's implicit
    coercions are made explicit (``plain_sql`` keeps the version without, for health to see
    whether they matter). Reading another database flags the item ``mysql_specific``.
    """
    if db_id in SPIDER_DERIVED:
        sql = gold_mysql.strip().rstrip(";").strip()
        return PreparedGold(sql, bool(sql), None if sql else NON_SELECT,
                            frozenset(text_flags(sql, "sqlite")))  # fmt: skip
    text = gold_mysql.strip()
    if not text:
        return PreparedGold("", False, NON_SELECT, frozenset(), "empty gold")
    try:
        trees = transpile.parse_mysql(text)
    except sqlglot.errors.SqlglotError as error:
        flags = frozenset(text_flags(text, "mysql"))
        return PreparedGold(text, False, ERROR, flags, f"not valid MySQL: {str(error)[:200]}")
    flags = frozenset().union(*(static_flags(tree) for tree in trees))
    if not trees:
        return PreparedGold("", False, NON_SELECT, flags, "no statement")
    if not all(isinstance(tree, _SELECT_TYPES) for tree in trees):
        kinds = sorted({type(tree).__name__.upper() for tree in trees})
        return PreparedGold(text, False, NON_SELECT, flags, f"not a query: {', '.join(kinds)}")
    if len(trees) > 1:
        return PreparedGold(text, False, ERROR, flags, f"{len(trees)} statements")
    try:
        # Keep the parsed tree intact when a plain (uncoerced) version may be needed.
        tree, notes = transpile.rewrite_tree(trees[0], types, database=db_id, copy=bool(types))
        sql = transpile.generate(tree)
        plain_sql = None
        if any(not note.startswith(transpile.OTHER_DATABASE) for note in notes):
            plain, _ = transpile.rewrite_tree(trees[0], None, database=db_id, copy=False)
            plain_sql = transpile.generate(plain)
    except sqlglot.errors.SqlglotError as error:
        return PreparedGold(text, False, ERROR, flags, f"cannot transpile: {str(error)[:200]}")
    if any(note.startswith(transpile.OTHER_DATABASE) for note in notes):
        flags = flags | {MYSQL_SPECIFIC}  # MySQL could read another database; we cannot
    return PreparedGold(sql, True, None, flags, "; ".join(notes), plain_sql)


def column_types(db_path: str) -> dict[str, frozenset[str]]:
    """Lower-case column name -> declared SQLite types (first word) of that name across the
    tables of a database."""

    found: dict[str, set[str]] = {}
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for name, declared in conn.execute(
                "SELECT name, type FROM pragma_table_info(?)", (table,)
            ):
                words = (declared or "").split()
                found.setdefault(name.lower(), set()).add(words[0].upper() if words else "")
    return {name: frozenset(kinds) for name, kinds in found.items()}
