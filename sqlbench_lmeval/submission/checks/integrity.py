"""Integrity: answers that do not read the data (``reads_no_table``), and answers that are the gold
SQL (``gold_verbatim``, compared as sqlglot reads them: comments, spacing, case and the names of
aliases and CTEs aside)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.sampling import normalized_sql
from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.sql.normalization import normalize, parse_one, render
from sqlbench_lmeval.submission.checks.base import (
    FINDING,
    CheckedTask,
)

#: Whether the check reads the task's scores (it runs after the scoring).
NEEDS_SCORES = True


def check(task: CheckedTask) -> None:
    _integrity(task.scored, {item.id: item for item in task.items}, task.add)


def _integrity(scored: Sequence[ScoredItem], by_id: Mapping[int, Item], add) -> None:
    constant = [score.id for score in scored if score.reads_no_table]
    if constant:
        correct = sum(1 for score in scored if score.reads_no_table and score.ex >= 0.5)
        add(
            "integrity",
            "reads_no_table",
            FINDING,
            f"{len(constant)} answer(s) do not read the data: they name no table (constants "
            "such as SELECT 646.8), or matched gold with a result that is not gold's on a "
            f"perturbed copy of the database where gold's changes; {correct} of them match "
            "gold. EX counts them, ex_reads_data and r_ves do not",
            constant,
        )
    verbatim = [
        score.id
        for score in scored
        if (answers := score.answers) and is_gold(by_id[score.id], answers)
    ]
    if verbatim:
        sampled = any(score.samples is not None for score in scored)
        add(
            "integrity",
            "gold_verbatim",
            FINDING,
            f"{len(verbatim)} answer(s) ({len(verbatim) / len(scored):.1%} of the items) are "
            "the gold SQL (compared as parsed: comments, spacing, the case of names and the "
            "names of aliases aside"
            + ("; in this sampled run, any of an item's samples)" if sampled else ")"),
            verbatim,
        )


def is_gold(item: Item, answers: Sequence[str]) -> bool:
    """Whether one of ``answers`` is the item's gold SQL, as parsed (:func:`_sql_key`).

    Parsing and normalising costs milliseconds a query, too much for every answer of a
    LogicCat run: the tokens are compared first (sqlglot's, without comments, case folded),
    and only an answer of gold's shape whose names differ (another alias) is parsed."""
    gold_tokens = _tokens(item.gold_sql, item.dialect)
    if gold_tokens is None:
        return any(_text_key(sql) == _text_key(item.gold_sql) for sql in answers)
    alike = []
    for sql in answers:
        tokens = _tokens(sql, item.prompted_dialect)
        if tokens == gold_tokens:
            return True
        if tokens is not None and _shape(tokens) == _shape(gold_tokens):
            alike.append(sql)
    if not alike:
        return False
    gold = _sql_key(item.gold_sql, item.dialect)
    return any(_sql_key(sql, item.prompted_dialect) == gold for sql in alike)


def _text_key(sql: str) -> str:
    return normalized_sql(sql).rstrip(";").strip().casefold()


def _tokens(sql: str, dialect: str) -> tuple | None:
    """The kinds and texts (case folded) of ``sql``'s tokens, without its comments and final
    ``;`` (None: it does not tokenize)."""
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except Exception:  # sqlglot's TokenError and whatever odd input makes it raise
        return None
    kept = [(token.token_type, token.text.casefold()) for token in tokens]
    while kept and kept[-1][0] == TokenType.SEMICOLON:
        kept.pop()
    return tuple(kept)


def _shape(tokens: tuple) -> tuple:
    """``tokens`` without the names (tables, columns, aliases): the author's choice."""
    return tuple(token for token in tokens if token[0] not in _NAME_TOKENS)


#: ``;`` and the comments after it, at the end of a query.
_TRAILING_COMMENTS = re.compile(r";(?:\s|--[^\n]*(?:\n|$)|/\*.*?\*/)*\Z", re.S)


#: Tokens that name something (a table, column, alias or CTE): the author's choice.
_NAME_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER, TokenType.ALIAS})


def _sql_key(sql: str, dialect: str) -> str:
    """``sql`` as a canonical text: sqlglot's normalised tree (``sql.normalization``: aliases
    and CTE names canonical, unquoted names in one case) written without comments; the text
    with its whitespace and case folded when it does not parse as one query."""
    # A comment after the final ``;`` reads as a statement of its own (sqlglot's Semicolon).
    tree = parse_one(_TRAILING_COMMENTS.sub("", sql), dialect)
    if tree is not None:
        try:
            normalised, _ = normalize(tree, dialect)
            return "tree:" + render(_canonical_names(normalised)).casefold()
        except Exception:  # sqlglot fails on odd input: fall back to the text, never stop
            pass
    return "text:" + _text_key(sql)


def _canonical_names(tree: exp.Expression) -> exp.Expression:
    """``tree`` (normalised: column references name their tables) with the names its author
    chose made canonical: CTEs numbered in order, table aliases dropped."""
    ctes: dict[str, str] = {}
    for number, cte in enumerate(tree.find_all(exp.CTE)):
        ctes[cte.alias_or_name.casefold()] = f"cte_{number}"
        cte.set("alias", exp.TableAlias(this=exp.to_identifier(f"cte_{number}")))
    for table in tree.find_all(exp.Table):
        table.set("alias", None)
        if not table.db and table.name.casefold() in ctes:
            table.set("this", exp.to_identifier(ctes[table.name.casefold()]))
    for column in tree.find_all(exp.Column):
        if column.table and column.table.casefold() in ctes:
            column.set("table", exp.to_identifier(ctes[column.table.casefold()]))
    return tree
