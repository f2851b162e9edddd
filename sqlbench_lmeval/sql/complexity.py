"""The six complexity counts of a SQL query: the paper's Table 1 and the benchmark
description's sentences.

Ma, Pu and Zhu (2024, arXiv:2407.19517) describe how complex a workload is by the means of six
counts per query; the description of the TPC-DS benchmark this package implements gives each
count one sentence. The authors published no code, so the counts below follow those sentences
word by word, and every choice the sentences leave open is ours and written here. The counts
are read from the normalised tree of :mod:`sqlbench_lmeval.sql.normalization` (names resolved,
constants folded), so spelling (aliases, ``GROUP BY 1``, qualified or bare names) does not
change them, and a form normalisation rewrites counts as its canonical form
(``a / NULLIF(b, 0)`` holds no call, ``a || b`` is one concatenation call like
``CONCAT(a, b)``).

- ``distinct_column_count`` ("number of distinct columns referenced in SELECT, JOIN, or WHERE
  clauses"): distinct columns in the select lists, JOIN ... ON conditions and WHERE clauses of
  every query block, as normalisation writes them: a base table's column is ``table.column``
  whatever alias it is read through (a self-join's two instances give one column); a column of
  a CTE or derived table is the column it passes through, or its defining expression when it
  is computed (``SUM(store_sales.ss_net_profit)``), so it is not a second column. ``*`` is not
  a column; a column only in GROUP BY, HAVING or ORDER BY is not counted.
- ``join_count`` ("number of JOIN operations"): one per relation joined into a FROM clause, in
  every query block: ``FROM a, b`` and ``FROM a JOIN b ON ...`` are one join each, whatever the
  kind (INNER, LEFT, CROSS, ...) and however many equalities the ON holds. A correlated equality
  inside a subquery is a predicate of that subquery, not a join.
- ``where_predicate_count`` ("number of basic predicates in the WHERE clause; compound predicates
  are counted as multiple basic predicates"): basic predicates of every WHERE clause (every query
  block, subqueries and CTE bodies included), after splitting AND, OR, NOT and parentheses
  (``NOT`` directly on a basic predicate stays part of it: ``NOT IN``, ``NOT EXISTS``). A join
  equality written in WHERE (``a.x = b.y``) is a basic predicate of WHERE, so it counts; HAVING
  and ON conditions are not WHERE clauses and do not. ``x BETWEEN 1 AND 2`` is one predicate.
- ``cte_count`` ("number of Common Table Expressions"): CTE definitions, nested WITH included.
- ``function_call_count`` ("number of expressions containing scalar or aggregation function
  calls"): per query block, its select items, the basic predicates of its WHERE, ON, HAVING
  and QUALIFY conditions, its GROUP BY keys and its ORDER BY keys that contain at least one
  function call (scalar, aggregate or window; CAST and CASE are syntax, not calls).
  ``SUM(COALESCE(x, 0))`` is one expression, so it counts 1; so does ``SUM(a) / SUM(b)``. An
  expression counts in the block it is written in: a call inside a subquery counts for the
  subquery, not for the predicate that holds the subquery. A GROUP BY or ORDER BY key that
  repeats a select item (by position, by alias or spelled out) or another key is that
  expression, not a new one.
- ``subquery_count`` ("number of nested subqueries"): query blocks nested in another query's
  clauses: derived tables, scalar, IN, EXISTS and ANY subqueries. CTE bodies are counted by
  ``cte_count``, the members of a UNION/INTERSECT/EXCEPT are one block, and the top query is not
  nested.

The similarity feature bags of :mod:`sqlbench_lmeval.sql.structure` keep their own definitions,
made to compare two queries token by token rather than to measure one, so no count is the size
of the bag of a similar name:

- the ``columns`` bag holds every column reference anywhere, repeats included (GROUP BY, HAVING
  and ORDER BY too): how often a column is used is part of a query's shape;
- the ``joins`` bag holds one token per equi-join condition (a two-column ON gives 2 tokens, a
  CROSS JOIN none, a correlated equality in a subquery 1): it compares *which* columns are
  joined, which a count of joined relations cannot;
- the ``where_predicates`` bag holds the basic predicates of WHERE, HAVING and ON but not the
  column = column joins (those are in ``joins``, so a join is not compared twice, and a join
  written in ON or in WHERE gives the same tokens);
- the ``functions`` bag holds every non-aggregate call by name and ``aggregation`` every
  aggregate call, so a nested call is a token of its own (which function is used matters).

The paper's own counts came from code that was not published, so means computed here are
comparable with each other (a model's mean over gold's, as in the paper's Table 1), not with
the paper's absolute figures; the gold means and what the paper states are in
docs/structure.md ("Gold complexity").
"""

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
    """The six counts of a (normalised) query tree, see the module docstring."""
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
