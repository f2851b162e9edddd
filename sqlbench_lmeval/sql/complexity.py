"""The six complexity counts of a SQL query (the paper's Table 1, each count as the benchmark
description's sentence defines it), read from the normalised tree of
:mod:`sqlbench_lmeval.sql.normalization` (the definitions, the choices they leave open and how
they differ from the feature bags: docs/structure.md#complexity-counts).

>>> from sqlbench_lmeval.sql.normalization import normalize, parse_one
>>> sql = (
...     "SELECT a.x, SUM(b.y) FROM a JOIN b ON a.k = b.k"
...     " WHERE a.x > 1 AND (b.y < 5 OR b.z = 2) GROUP BY a.x"
... )
>>> for name, count in complexity_counts(normalize(parse_one(sql, "duckdb"), "duckdb")[0]).items():
...     print(name, count)
distinct_column_count 5
join_count 1
where_predicate_count 3
cte_count 0
function_call_count 1
subquery_count 0"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sqlglot import exp

#: The complexity counts of the paper's Table 1, in its order.
COMPLEXITY = (
    "distinct_column_count",
    "join_count",
    "where_predicate_count",
    "cte_count",
    "function_call_count",
    "subquery_count",
)

#: Nodes sqlglot models as functions that are syntax rather than function calls (the
#: ``functions`` feature bag of structure.py uses the same list).
NOT_FUNCTION_CALLS = (
    exp.Cast,
    exp.TryCast,
    exp.Case,
    exp.If,  # CASE branches
    exp.Exists,  # a predicate
    exp.Connector,  # AND, OR, XOR
    exp.Collate,
)

#: A compound condition is split through these into its basic predicates.
_CONNECTIVES = (exp.And, exp.Or, exp.Xor, exp.Paren)


def complexity_counts(tree: exp.Expression) -> dict[str, int]:
    """The six counts of a (normalised) query tree (docs/structure.md#complexity-counts)."""
    nodes = list(tree.walk())  # one walk of the tree, filtered per count

    def of_type(*types: type) -> list:
        return [node for node in nodes if isinstance(node, types)]

    queries = of_type(exp.Select, exp.SetOperation)
    return {
        "distinct_column_count": len(
            _referenced_columns(q for q in queries if isinstance(q, exp.Select))
        ),
        "join_count": len(of_type(exp.Join)),
        "where_predicate_count": sum(
            1 for where in of_type(exp.Where) for _ in basic_predicates(where.this)
        ),
        "cte_count": len(of_type(exp.CTE)),
        "function_call_count": sum(_expressions_with_calls(query) for query in queries),
        "subquery_count": _subquery_count(tree, queries),
    }


def basic_predicates(condition: exp.Expression) -> Iterator[exp.Expression]:
    """Split AND, OR, NOT and parentheses down to basic predicates (``NOT`` directly on a basic
    predicate stays part of it)."""
    if isinstance(condition, _CONNECTIVES):
        for child in (condition.this, condition.args.get("expression")):
            if child is not None:
                yield from basic_predicates(child)
    elif isinstance(condition, exp.Not):
        inner = condition.this
        if isinstance(inner, (*_CONNECTIVES, exp.Not)):
            yield from basic_predicates(inner)
        else:
            yield condition
    else:
        yield condition


def _local_nodes(node: exp.Expression) -> Iterator[exp.Expression]:
    """``node`` and its descendants, not entering nested query blocks."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in current.iter_expressions():
            if isinstance(child, (exp.Query, exp.Subquery)):
                continue
            stack.append(child)


def _column_token(column: exp.Column) -> str:
    return f"{column.table}.{column.name}" if column.table else column.name


def _referenced_columns(blocks: Iterable[exp.Select]) -> set[str]:
    """Column tokens of the select lists, JOIN ... ON conditions and WHERE clauses."""
    columns: set[str] = set()
    for select in blocks:
        parts = list(select.expressions)
        if select.args.get("where") is not None:
            parts.append(select.args["where"])
        parts.extend(j.args["on"] for j in select.args.get("joins") or [] if j.args.get("on"))
        for part in parts:
            columns.update(
                _column_token(n)
                for n in _local_nodes(part)
                if isinstance(n, exp.Column) and not isinstance(n.this, exp.Star)
            )
    return columns


def _items_and_predicates(query: exp.Expression) -> list[exp.Expression]:
    """Select items (without their alias) and the basic predicates of the block's WHERE, ON,
    HAVING and QUALIFY conditions; none for a set operation (its members are blocks)."""
    if not isinstance(query, exp.Select):
        return []
    expressions = [item.unalias() for item in query.expressions]
    clauses = [query.args.get(name) for name in ("where", "having", "qualify")]
    conditions = [clause.this for clause in clauses if clause is not None]
    conditions += [j.args["on"] for j in query.args.get("joins") or [] if j.args.get("on")]
    for condition in conditions:
        expressions.extend(basic_predicates(condition))
    return expressions


def _keys(query: exp.Expression) -> list[exp.Expression]:
    """GROUP BY keys (inside ROLLUP, CUBE and GROUPING SETS too) and ORDER BY keys of the block
    (not the ORDER BY of a window, which is part of its select item)."""
    keys: list[exp.Expression] = []
    group = query.args.get("group")
    for key in group.iter_expressions() if group is not None else []:
        if isinstance(key, (exp.Rollup, exp.Cube, exp.GroupingSets)):
            keys.extend(key.expressions)
        else:
            keys.append(key)
    order = query.args.get("order")
    if order is not None:
        keys.extend(ordered.this for ordered in order.expressions)
    return keys


def _contains_call(expression: exp.Expression) -> bool:
    return any(
        isinstance(node, exp.Func) and not isinstance(node, NOT_FUNCTION_CALLS)
        for node in _local_nodes(expression)
    )


def _expressions_with_calls(query: exp.Expression) -> int:
    """How many expressions of the block contain a function call. A GROUP BY or ORDER BY key
    that repeats a select item or another key is not a new expression."""
    items = _items_and_predicates(query)
    counted = sum(1 for item in items if _contains_call(item))
    # sqlglot trees compare and hash by structure: cheaper than rendering them to text.
    seen = set(items)
    for key in _keys(query):
        if key not in seen and _contains_call(key):
            counted += 1
        seen.add(key)
    return counted


def _subquery_count(tree: exp.Expression, queries: Iterable[exp.Expression]) -> int:
    """How many of ``queries`` (the SELECTs and set operations of ``tree``) are nested."""
    count = 0
    for query in queries:
        if query is tree:
            continue
        parent = query.parent
        while isinstance(parent, (exp.Subquery, exp.Paren)):
            parent = parent.parent
        if isinstance(parent, (exp.SetOperation, exp.CTE)) or parent is None:
            continue
        if isinstance(parent, exp.With):  # the outer query of a WITH is not nested
            continue
        count += 1
    return count
