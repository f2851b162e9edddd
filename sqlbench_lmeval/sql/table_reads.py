"""Does a query name a table at all? An answer that names none is a constant (``SELECT 646.8
UNION ALL SELECT 1292.2``) and is flagged ``reads_no_table`` without a run; this is
data dependence's cheap first test, a pure function of the SQL text and its dialect that
scoring asks of every answer and of gold through :func:`surely_reads_no_table` (what counts as
a table read, and how the test stays cheap: docs/scoring.md#data-dependence).

>>> surely_reads_no_table("SELECT 646.8 UNION ALL SELECT 1292.2", "sqlite")
True
>>> surely_reads_no_table("SELECT COUNT(*) FROM pump", "sqlite")
False
>>> surely_reads_no_table("WITH r AS (SELECT 1) SELECT * FROM r", "sqlite")  # its own CTE
True
>>> surely_reads_no_table("SELECT name FROM sqlite_master", "sqlite")  # a system catalog
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

# Without one of these words (outside nothing: a string holding "from" just means we parse),
# no table can be named.
_MAY_READ = re.compile(r"\b(from|table)\b", re.IGNORECASE)

#: Names that look like tables but hold no data: MySQL's (and Oracle's) one-row dummy.
_DUMMY_TABLES = frozenset({"dual"})
#: System catalogs describe the database, they are not its data: tables named with SQLite's
#: reserved prefix (``sqlite_master``, also in DuckDB) or PostgreSQL's (``pg_class``), and
#: any table of these schemas.
_CATALOG_PREFIXES = ("sqlite_", "pg_")
_CATALOG_SCHEMAS = frozenset({"information_schema", "pg_catalog", "performance_schema", "mysql"})


def _is_catalog(name: str, schema: str) -> bool:
    """Whether table ``name`` of ``schema`` ("" when unqualified; both lower case) is a system
    catalog.

    >>> _is_catalog("sqlite_master", ""), _is_catalog("tables", "information_schema")
    (True, True)
    >>> _is_catalog("store", ""), _is_catalog("store", "main")
    (False, False)
    """
    return schema in _CATALOG_SCHEMAS or name.startswith(_CATALOG_PREFIXES)


@dataclass(frozen=True)
class TableReads:
    """What a parse of ``sql`` in ``dialect`` (``sqlglot.parse(sql, read=dialect)``, made for
    another purpose) says :func:`reads_no_table` is: for :func:`surely_reads_no_table`, so
    that the text is not tokenized and parsed again. Made by :func:`table_reads_of`."""

    sql: str
    dialect: str
    reads_no_table: bool | None


def table_reads_of(
    sql: str, dialect: str, trees: Sequence[exp.Expression | None] | None
) -> TableReads:
    """The :class:`TableReads` of ``sql`` from ``trees``, what ``sqlglot.parse(sql,
    read=dialect)`` returned (None: it raised)."""
    return TableReads(sql, dialect, _no_table_in(trees))


@lru_cache(maxsize=4096)
def reads_no_table(sql: str, dialect: str) -> bool | None:
    """True when ``sql`` (in sqlglot ``dialect``) reads no table of the database, False when it
    reads one, None when sqlglot cannot parse it (then nothing is claimed)."""
    if not _MAY_READ.search(sql):
        return True
    try:
        trees = sqlglot.parse(sql, read=dialect)
    except Exception:  # sqlglot's errors, and anything a hostile text provokes in it
        return None
    return _no_table_in(trees)


def _no_table_in(trees: Sequence[exp.Expression | None] | None) -> bool | None:
    """:func:`reads_no_table` of a text that parsed into ``trees`` (None: the parse raised)."""
    if trees is None:
        return None
    trees = [tree for tree in trees if tree is not None]
    if not trees:
        return None
    return not any(_reads_table(tree) for tree in trees)


def surely_reads_no_table(sql: str, dialect: str, parsed: TableReads | None = None) -> bool:
    """``reads_no_table(sql, dialect) is True``: from ``parsed`` when that is of this text in
    this dialect, else without a parse when the tokens already show a table read
    (:func:`_names_a_table`), else parsed from those tokens."""
    if parsed is not None and parsed.sql == sql and parsed.dialect == dialect:
        # _names_a_table never claims a read where the parse finds none: the tokens could only
        # have said False sooner.
        return not _MAY_READ.search(sql) or parsed.reads_no_table is True
    return _surely_reads_no_table(sql, dialect)


@lru_cache(maxsize=4096)
def _surely_reads_no_table(sql: str, dialect: str) -> bool:
    if not _MAY_READ.search(sql):
        return True
    reader = _reader(dialect)
    try:
        tokens = reader.tokenize(sql)
    except Exception:  # anything a hostile text provokes in the tokenizer: the parse fails too
        return False
    if _names_a_table(tokens):
        return False
    try:  # sqlglot.parse(sql, read=dialect), on the tokens at hand
        trees = reader.parser().parse(tokens, sql)
    except Exception:  # sqlglot's errors, and anything a hostile text provokes in it
        return False
    return _no_table_in(trees) is True


@lru_cache(maxsize=64)
def _reader(dialect: str) -> Dialect:
    """The sqlglot dialect ``dialect``, made once (``get_or_raise`` makes one per call)."""
    return Dialect.get_or_raise(dialect)


# Tokens that open and close a nesting: a FROM inside them is not the outer query's.
_OPENING = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE})
_CLOSING = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE})
_NAMES = frozenset({TokenType.VAR, TokenType.IDENTIFIER})
# What may follow such a name for it to be a plain table (an alias, a join, the next clause);
# anything else (``name(``, ``name.``, ``name{``, ...) is left to the parse.
_AFTER_TABLE = _NAMES | {
    getattr(TokenType, name)
    for name in (
        "COMMA SEMICOLON ALIAS WHERE GROUP_BY HAVING ORDER_BY LIMIT OFFSET UNION EXCEPT INTERSECT "
        "JOIN INNER LEFT RIGHT FULL CROSS OUTER NATURAL WINDOW"
    ).split()
}


def _names_a_table(tokens: list[Token]) -> bool:
    """True only when :func:`reads_no_table` cannot answer True for the text of ``tokens``: it
    is one statement that starts with SELECT or WITH and has ``FROM name`` with a plain name
    (followed by the end, an alias, a join, the next clause or the query's closing
    parenthesis: no call ``name(``, no qualified part ``name.``), not ``DUAL``, no catalog and
    no CTE's name (:func:`_cte_names`), outside every bracket or right inside a parenthesis
    that opens with SELECT or WITH (a subquery; a FROM inside a call, ``EXTRACT(YEAR FROM d)``,
    is deeper). sqlglot parses that FROM into a read of table ``name``; a text it cannot parse
    is None there, not True either. False claims nothing."""
    if not tokens or tokens[0].token_type not in _QUERY_STARTS:
        return False
    kinds = [token.token_type for token in tokens]
    ctes = _cte_names(tokens, kinds) if TokenType.WITH in kinds else set()
    if ctes is None:
        return False
    # Per open bracket: whether a query opens right inside it.
    queries: list[bool] = []
    last = len(kinds) - 1
    for index, kind in enumerate(kinds):
        if kind in _OPENING:
            queries.append(
                kind is TokenType.L_PAREN and index < last and kinds[index + 1] in _QUERY_STARTS
            )
        elif kind in _CLOSING:
            if not queries:
                return False  # unbalanced: the parse judges
            queries.pop()
        elif kind is TokenType.SEMICOLON:
            return False  # another statement may follow: parsed on its own
        elif (
            kind is TokenType.FROM
            and (not queries or queries[-1])
            and kinds[index - 1] is not TokenType.DISTINCT  # IS DISTINCT FROM x
            and index < last
            and kinds[index + 1] in _NAMES
            and _plain_table(tokens[index + 1].text.lower(), ctes)
            and (
                index + 1 == last
                or kinds[index + 2] in _AFTER_TABLE
                or (queries and kinds[index + 2] is TokenType.R_PAREN)
            )
        ):
            break
    else:
        return False
    # Only empty statements may follow a ';': another statement is parsed on its own.
    rest = kinds[index:]
    if TokenType.SEMICOLON in rest:
        return all(kind is TokenType.SEMICOLON for kind in rest[rest.index(TokenType.SEMICOLON) :])
    return True


def _plain_table(name: str, ctes: set[str]) -> bool:
    return name not in _DUMMY_TABLES and name not in ctes and not _is_catalog(name, "")


_QUERY_STARTS = frozenset({TokenType.SELECT, TokenType.WITH})


def _cte_names(tokens: list[Token], kinds: list[TokenType]) -> set[str] | None:
    """The names (lower case) of every CTE of the query: after each WITH [RECURSIVE], ``name
    [(columns)] AS (...)``, separated by commas. None when a WITH is followed by anything else
    (``WITH ROLLUP``, ``AS MATERIALIZED``, ...): then no name is taken for a table."""
    names: set[str] = set()
    for index, kind in enumerate(kinds):
        if kind is not TokenType.WITH:
            continue
        at = index + 1
        if at < len(tokens) and tokens[at].token_type is TokenType.RECURSIVE:
            at += 1
        while True:
            if at >= len(tokens) or tokens[at].token_type not in _NAMES:
                return None
            names.add(tokens[at].text.lower())
            at += 1
            if at < len(tokens) and tokens[at].token_type is TokenType.L_PAREN:
                at = _after_brackets(tokens, at)  # the column list
            if at + 1 >= len(tokens) or tokens[at].token_type is not TokenType.ALIAS:
                return None
            if tokens[at + 1].token_type is not TokenType.L_PAREN:
                return None
            at = _after_brackets(tokens, at + 1)  # the CTE's query
            if at < len(tokens) and tokens[at].token_type is TokenType.COMMA:
                at += 1
                continue
            break
    return names


def _after_brackets(tokens: list[Token], at: int) -> int:
    """The index after the bracket that closes the one opened at ``at`` (the end if none)."""
    depth = 0
    for index in range(at, len(tokens)):
        kind = tokens[index].token_type
        if kind in _OPENING:
            depth += 1
        elif kind in _CLOSING:
            depth -= 1
            if depth == 0:
                return index + 1
    return len(tokens)


def _reads_table(tree: exp.Expression) -> bool:
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):  # a table function, e.g. range(3)
            continue
        name = table.name.lower()
        if not table.db and (name in ctes or name in _DUMMY_TABLES):
            continue
        if _is_catalog(name, table.db.lower()):
            continue
        return True
    return False


__all__ = ["TableReads", "reads_no_table", "surely_reads_no_table", "table_reads_of"]
