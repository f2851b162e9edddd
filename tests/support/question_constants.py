"""The rule that ties a TPC-DS question to gold: every constant of the gold query appears in
its question (:func:`missing_constants`; the rule in words: docs/tpcds.md#questions). Only the
tests apply it, to our questions file.

>>> gold = (
...     "SELECT i_brand FROM item"
...     " WHERE i_color = 'M' AND d_year = 2001 + 1 AND i_price > 100.00 LIMIT 100"
... )
>>> missing_constants(1, gold, "Brands of items in color M sold in 2002 above 100; show 100.")
[]
>>> missing_constants(1, gold, "Brands of Men's items sold in 2001 priced above 100.")
["'M'", '1']"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import sqlglot
from sqlglot import exp

#: Row labels that exist only inside a query (channel tags of a UNION ALL), never in its result.
INTERNAL_LABELS: Mapping[int, frozenset[str]] = {
    4: frozenset({"s", "c", "w"}),
    11: frozenset({"s", "w"}),
    74: frozenset({"s", "w"}),
}

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?!\w)")


@dataclass(frozen=True)
class Constant:
    """One constant of a gold query and the forms in which a question may carry it."""

    written: str  # as the query writes it, for messages
    strings: tuple[str, ...] = ()  # any of these verbatim, or
    numbers: tuple[Decimal, ...] = ()  # a number of any of these values


def required_constants(query_nr: int, gold_sql: str) -> list[Constant]:
    """The constants of a gold query that its question must carry (docs/tpcds.md#questions)."""
    tree = sqlglot.parse_one(gold_sql, dialect="duckdb")
    labels = INTERNAL_LABELS.get(query_nr, frozenset())
    constants: list[Constant] = []
    for literal in tree.find_all(exp.Literal):
        if _exempt(literal):
            continue
        if literal.is_string:
            if literal.this in labels:
                continue
            forms = [literal.this]
            if isinstance(literal.parent, (exp.Like, exp.ILike)):
                forms.append(literal.this.strip("%_"))
            constants.append(Constant(f"'{literal.this}'", strings=tuple(forms)))
        else:
            value = Decimal(literal.this)
            if isinstance(literal.parent, exp.Neg):
                value = -value
            values = [value]
            folded = _folded_value(literal)
            if folded is not None:
                values.append(folded)
            constants.append(Constant(literal.this, numbers=tuple(values)))
    return constants


def _exempt(literal) -> bool:
    parent = literal.parent
    if literal.find_ancestor(exp.DataType) is not None:
        return True  # DECIMAL(7, 2)
    if not literal.is_string and isinstance(parent, exp.Ordered):
        return True  # ORDER BY 1
    if not literal.is_string and isinstance(parent, exp.Group):
        return True  # GROUP BY 1
    if isinstance(parent, exp.Substring) and parent.args.get("start") is literal:
        return literal.this == "1"
    if isinstance(parent, exp.Mul) and not literal.is_string and Decimal(literal.this) == 1:
        other = parent.expression if parent.this is literal else parent.this
        return other.find(exp.Column) is not None
    return False


def _folded_value(literal) -> Decimal | None:
    """The value of the largest arithmetic expression of literals around ``literal``."""
    arithmetic = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Neg, exp.Paren)
    top = None
    node = literal.parent
    while isinstance(node, arithmetic) and _evaluate(node) is not None:
        top = node
        node = node.parent
    return None if top is None else _evaluate(top)


def _evaluate(node) -> Decimal | None:
    if isinstance(node, exp.Literal):
        if node.is_string:
            return None
        return Decimal(node.this)
    if isinstance(node, exp.Paren):
        return _evaluate(node.this)
    if isinstance(node, exp.Neg):
        inner = _evaluate(node.this)
        return None if inner is None else -inner
    operations = {
        exp.Add: lambda a, b: a + b,
        exp.Sub: lambda a, b: a - b,
        exp.Mul: lambda a, b: a * b,
        exp.Div: lambda a, b: a / b,
    }
    operation = operations.get(type(node))
    if operation is None:
        return None
    left, right = _evaluate(node.this), _evaluate(node.expression)
    if left is None or right is None:
        return None
    try:
        return operation(left, right)
    except (ArithmeticError, InvalidOperation):
        return None


def numbers_in(text: str) -> set[Decimal]:
    """Every number written in ``text``; one with a leading minus counts with and without it."""
    values = set()
    for match in _NUMBER.finditer(text):
        value = Decimal(match.group())
        values.update({value, abs(value)})
    return values


def _string_appears(value: str, text: str) -> bool:
    if value == "":
        return "''" in text
    before = r"(?<![0-9A-Za-z])" if value[0].isalnum() else ""
    after = r"(?![0-9A-Za-z])" if value[-1].isalnum() else ""
    return re.search(before + re.escape(value) + after, text) is not None


def _appears(constant: Constant, text: str, numbers: set[Decimal]) -> bool:
    if constant.strings:
        return any(_string_appears(form, text) for form in constant.strings)
    return any(value in numbers for value in constant.numbers)


def missing_constants(query_nr: int, gold_sql: str, question: str) -> list[str]:
    """The gold query's constants that ``question`` does not carry, as the query writes them."""
    numbers = numbers_in(question)
    missing = []
    for constant in required_constants(query_nr, gold_sql):
        if not _appears(constant, question, numbers) and constant.written not in missing:
            missing.append(constant.written)
    return missing
