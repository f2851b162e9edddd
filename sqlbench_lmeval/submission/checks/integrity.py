"""Integrity: answers that do not read the data (``reads_no_table``), and answers that are the gold
SQL (``gold_verbatim``: our gold or the gold the benchmark's authors published, whole or as a
query inside the answer, compared as sqlglot reads them: comments, spacing, case and the names
of aliases and CTEs aside; the finding says which form matched)."""

from __future__ import annotations

import json
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
    of_answered,
    sha256,
)

#: Whether the check reads the task's scores (it runs after the scoring).
NEEDS_SCORES = True


def check(task: CheckedTask) -> None:
    published = {
        doc["id"]: (doc["published_gold_sql"], doc.get("published_dialect") or "mysql")
        for doc in task.docs
        if doc.get("published_gold_sql")
    }
    _integrity(
        task.scored, {item.id: item for item in task.items}, task.add, published, len(task.answers)
    )


#: How an answer can be gold (:func:`gold_copy`), in the words of the finding.
GOLD_FORMS = {
    "gold": "our gold SQL",
    "gold_inside": "our gold SQL inside a query of their own (SELECT * FROM (<gold>) AS sub)",
    "published": "the gold SQL as the benchmark's authors published it",
    "published_inside": "the published gold SQL inside a query of their own",
}


def _integrity(
    scored: Sequence[ScoredItem],
    by_id: Mapping[int, Item],
    add,
    published: Mapping[int, tuple[str, str]] | None = None,
    answered: int | None = None,
) -> None:
    """The findings on ``scored``; ``answered``: how many items the run logged (default: those
    with an answer), of which shares are given."""
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
    forms: dict[str, list[int]] = {}
    for score in scored:
        if answers := score.answers:
            form = gold_copy(by_id[score.id], answers, (published or {}).get(score.id))
            if form is not None:
                forms.setdefault(form, []).append(score.id)
    if forms:
        copied = sorted(item_id for ids in forms.values() for item_id in ids)
        if answered is None:
            answered = sum(1 for score in scored if score.answers)
        sampled = any(score.samples is not None for score in scored)
        which = "; ".join(
            f"{len(forms[form])} {GOLD_FORMS[form]}" for form in GOLD_FORMS if form in forms
        )
        add(
            "integrity",
            "gold_verbatim",
            FINDING,
            f"the answers to {of_answered(len(copied), answered, len(scored))} are gold: "
            f"{which} (compared as parsed: comments, spacing, the case of names and the names "
            "of aliases aside"
            + ("; in this sampled run, any of an item's samples)" if sampled else ")"),
            copied,
        )


def gold_copy(
    item: Item, answers: Sequence[str], published: tuple[str, str] | None = None
) -> str | None:
    """How one of ``answers`` is gold (a key of :data:`GOLD_FORMS`), None when none is: the
    item's gold SQL, or ``published`` (the text the benchmark's authors published and its
    dialect), each as the whole answer or as a query inside it (``SELECT * FROM (<gold>) AS
    sub``), compared as parsed (:func:`_sql_key`).

    Parsing and normalising costs milliseconds a query, too much for every answer of a
    LogicCat run: the tokens are compared first (sqlglot's, without comments, case folded),
    and only an answer holding gold's tokens, or its shape (another alias), is parsed.

    >>> gold = Item(id=1, question="?", database=None, gold_sql="SELECT a FROM t", dialect="sqlite")
    >>> gold_copy(gold, ["select A from T -- mine"]), gold_copy(gold, ["SELECT a FROM t WHERE b"])
    ('gold', None)
    >>> gold_copy(gold, ["SELECT * FROM (SELECT a FROM t) AS sub"])
    'gold_inside'
    >>> gold_copy(gold, ["SELECT a * 1.2 FROM t"], ("SELECT a * 1.2 FROM t", "mysql"))
    'published'
    """
    forms = [(item.gold_sql, item.dialect, item.prompted_dialect, "gold")]
    if published is not None and published[0].strip():
        forms.append((published[0], published[1], published[1], "published"))
    for gold_sql, gold_dialect, answer_dialect, name in forms:
        found = _copy_of(gold_sql, gold_dialect, answers, answer_dialect)
        if found is not None:
            return name if found == "whole" else f"{name}_inside"
    return None


def _copy_of(gold_sql: str, gold_dialect: str, answers, answer_dialect: str) -> str | None:
    """``whole`` when an answer is ``gold_sql``, ``inside`` when one holds it as a query of its
    own, else None."""
    gold_tokens = sql_tokens(gold_sql, gold_dialect)
    if gold_tokens is None:
        text = _text_key(gold_sql)
        return "whole" if any(_text_key(sql) == text for sql in answers) else None
    gold_shape = _shape(gold_tokens)
    alike, holders = [], []
    for sql in answers:
        tokens = sql_tokens(sql, answer_dialect)
        if tokens is None:
            continue
        if tokens == gold_tokens:
            return "whole"
        if _enclosed(tokens, gold_tokens):
            return "inside"
        shape = _shape(tokens)
        if shape == gold_shape:
            alike.append(sql)
        elif _enclosed(shape, gold_shape):
            holders.append(sql)
    if not alike and not holders:
        return None
    gold = _sql_key(gold_sql, gold_dialect)
    if any(_sql_key(sql, answer_dialect) == gold for sql in alike):
        return "whole"
    for sql in holders:
        tree = parse_one(_TRAILING_COMMENTS.sub("", sql), answer_dialect)
        if tree is None:
            continue
        for query in tree.find_all(exp.Query):
            if query is not tree and _tree_key(query.copy(), answer_dialect) == gold:
                return "inside"
    return None


def _enclosed(tokens: tuple, part: tuple) -> bool:
    """Whether ``part`` occurs in ``tokens`` between a ``(`` and a ``)``: a whole query in
    parentheses is a query of its own (a subquery, a derived table, an operand of UNION)."""
    size = len(part)
    if not size or size + 2 > len(tokens):
        return False
    return any(
        tokens[start] == part[0]
        and tokens[start - 1][0] == TokenType.L_PAREN
        and tokens[start + size][0] == TokenType.R_PAREN
        and tokens[start : start + size] == part
        for start in range(1, len(tokens) - size)
    )


def _text_key(sql: str) -> str:
    return normalized_sql(sql).rstrip(";").strip().casefold()


def sql_tokens(sql: str, dialect: str) -> tuple | None:
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
    key = None if tree is None else _tree_key(tree, dialect)
    return key or "text:" + _text_key(sql)


def _tree_key(tree: exp.Expression, dialect: str) -> str | None:
    """``tree`` as the canonical text of :func:`_sql_key`; None when sqlglot fails on it."""
    try:
        normalised, _ = normalize(tree, dialect)
        return "tree:" + render(_canonical_names(normalised)).casefold()
    except Exception:  # sqlglot fails on odd input: fall back to the text, never stop
        return None


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


def output_key(outputs: Sequence[str], answers: Sequence[str], dialect: str) -> str:
    """What two runs share when they share an answer: the SQL found in ``outputs``
    (``answers``) as sqlglot's tokens (comments, spacing, case and a final ``;`` aside), else
    the raw outputs with their whitespace made single spaces; as a sha256.

    >>> copied = output_key(["Here: SELECT  a FROM t; -- done "], ["SELECT  a FROM t;"], "sqlite")
    >>> output_key(["```sql SELECT a FROM t```"], ["SELECT a FROM t"], "sqlite") == copied
    True
    """
    tokens = [sql_tokens(sql, dialect) for sql in answers]
    if answers and all(found is not None for found in tokens):
        content = [[[str(kind), text] for kind, text in found] for found in tokens]
    else:
        content = [" ".join(output.split()) for output in outputs]
    return sha256(json.dumps(content, ensure_ascii=True))
