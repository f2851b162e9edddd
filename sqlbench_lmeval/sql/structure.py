"""SQL structure: normalisation, feature bags and structural similarity, built on sqlglot.

Ma, Pu and Zhu (2024, arXiv:2407.19517, "Evaluating LLMs for Text-to-SQL Generation With
Complex SQL Workload") compare a generated query with the gold query through seven features
collected over the query and all its subqueries and CTEs. The authors published no code, so
this module fixes the definitions; every choice below is ours and is documented here.

Normalisation (:mod:`sqlbench_lmeval.sql.normalization`), applied to gold and prediction alike
before any feature is read; each row a rule, tested in ``tests/sql/test_structure.py``:

Rules (form -> canonical form):

- text that does not parse in the item's dialect -> parsed in postgres, spark, mysql, snowflake,
  bigquery, tsql, sqlite (first that reads it; ``Structure.dialect``, logged as ``parsed_dialect``);
  none: unparseable, 0.0
- tokens of a query read in any dialect -> rendered in DuckDB's dialect (one spelling per structure)
- ``"Store_Sales"``, ``STORE_SALES`` -> ``store_sales`` (names are case-insensitive; quotes are
  dropped before names resolve, so none reaches a token, in a window function or a
  derived-column name either)
- ``ss1.x``, ``store_sales.x``, bare ``x`` (base table) -> ``store_sales.x``
- bare ``x`` in a query over one source that sqlglot leaves bare (the source is behind ``SELECT *``)
  -> the column of that source
- ``SELECT x AS x`` -> ``SELECT x``
- column ``t.c`` of a CTE or derived table, ``c`` a plain column ``tab.col`` -> ``tab.col`` (through
  any number of CTEs, through ``SELECT *``)
- column ``t.p`` of a CTE or derived table, ``p`` defined as ``SUM(x)`` -> a column named by the
  definition: ``SUM(tab.x)`` (CTE names, CTE column lists, select aliases never reach a token)
- ``a.p > b.p``, ``a``, ``b`` two instances of one source -> ``p#1 > p#2``, instances numbered in
  the order they appear in the query
- ``b.p < a.p`` (a comparison with columns on both sides) -> operands in a fixed order, operator
  flipped: ``a.p > b.p``
- ``5 < x``, ``5 = x`` -> ``x > 5``, ``x = 5``
- ``ORDER BY 2``, ``ORDER BY alias``, ``ORDER BY t.col``, ``ORDER BY col`` of a select item -> the
  select item's expression, resolved as in the select list
- a select item's name inside an ORDER BY expression (``CASE WHEN alias = 0 ...``), when no source
  has a column of that name -> the select item's expression (a source's column comes first inside an
  expression, an output name first as a whole key, as in the engines)
- ``GROUP BY 1``, ``GROUP BY alias``, alias in HAVING -> the select item's expression (sqlglot's
  ``qualify``)
- ``JOIN t USING (c)`` -> ``ON a.c = t.c``
- ``2001+1``, ``50/100.0``, ``100.00``, ``-(5)`` -> ``2002``, ``0.5``, ``100``, ``-5``
- ``DATE '2000-08-23' + INTERVAL 14 DAY``, ``+ INTERVAL '14 days'``, ``DATE_ADD(d, INTERVAL 14
  DAY)``, ``DATEADD(day, 14, d)``, ``date_add(d, 14)``, ``CAST(d AS DATE) + 14`` (DuckDB,
  PostgreSQL, Snowflake, Oracle, Redshift) -> ``'2000-09-06'`` (months clamp to the month's last
  day); ``-`` likewise
- ``DATE('2000-08-23')``, ``TO_DATE('2000-08-23')`` (no format) -> ``CAST('2000-08-23' AS DATE)``
  (then the date rules)
- ``DATEADD(day, 14, d)`` read by a dialect without DATEADD (DuckDB) -> ``DATE_ADD(d, 14, day)``,
  T-SQL's and Snowflake's meaning
- ``CAST('2000-01-27' AS DATE)``, ``DATE '2000-01-27'`` -> ``'2000-01-27'``
- ``INTERVAL '30 days'``, ``INTERVAL 30 DAY`` (not on a date literal) -> ``INTERVAL '30' DAY``
- ``x * 1``, ``1 * x``, ``x * 1.0000``, ``x / 1``, ``x + 0``, ``0 + x``, ``x - 0`` -> ``x``
- ``(x)`` around a column, literal or call -> ``x``
- ``CAST(x AS DOUBLE)`` (any numeric type) -> ``x``
- ``x IN ('TN', 'TN', 'GA')`` -> ``x IN ('GA', 'TN')`` (deduplicated, sorted)
- ``x IN ('TN')``, ``x NOT IN (5)`` -> ``x = 'TN'``, ``x <> 5``
- ``TRY_CAST``, ``a / NULLIF(b, 0)``, ``STDDEV`` -> ``CAST``, ``a / b``, ``STDDEV_SAMP`` (writer
  spellings)
- ``a || b || c``, ``CONCAT(a, b, c)``, ``COALESCE(a, '')`` inside either -> one concatenation of
  ``a``, ``b``, ``c``
- ``CASE WHEN 1 = 0 THEN 1 ELSE 1 END`` -> ``1`` (a CASE whose conditions compare numbers)

A query is one SELECT, set operation or VALUES (not another statement, not a bare expression,
not two statements); anything else is *unparseable* (:func:`structure_of` returns None). When
sqlglot's ``qualify`` cannot resolve the names (odd predictions), they stay as written,
lower-cased, and ``Structure.qualified`` is False. A string keeps its case (SQL compares
strings case-sensitively); numbers and strings share one token space (``d_year = '2000'`` and
``d_year = 2000`` give the same constant).

Features (each a multiset, "bag", of string tokens):

- ``tables``: every reference to a base table (a self-join counts twice); references to CTEs
  are not tables.
- ``columns``: every column reference anywhere (select list, predicates, GROUP BY, ORDER BY,
  ...); ``*`` is not a column.
- ``where_predicates``: the basic predicates of every WHERE, HAVING and JOIN ... ON condition. A
  compound predicate counts as its basic predicates: AND, OR, NOT and parentheses are split
  (NOT directly on a basic predicate stays part of it: ``NOT EXISTS``, ``NOT IN``). Column =
  column equalities between two different sources are joins, not predicates. A subquery inside
  a predicate is written ``(subquery)``: its own predicates are collected where it is.
  Comparisons are written in a canonical orientation (the side that reads data first: ``5 < x``
  is ``x > 5``, ``5 < COUNT(*)`` is ``COUNT(*) > 5``; two sides alike in text order), IN lists
  are sorted, and two instances of one column in a predicate carry their instance tag
  (``p#1 > p#2``).
- ``constants``: every literal (after folding), including LIMIT values; not type parameters
  (``DECIMAL(7, 2)``), not ORDER BY/GROUP BY positions, not NULL or booleans.
- ``functions``: names of the non-aggregate function calls, window functions included (``RANK``,
  ``SUBSTRING``, ``COALESCE``, ``GROUPING``, ...). CAST and CASE are syntax, not functions.
- ``aggregation``: every aggregate call with its normalised argument
  (``SUM(store_sales.ss_net_profit)``, ``COUNT(*)``, window aggregates too) and every grouping
  key (``GROUP BY item.i_brand``; ``ROLLUP item.i_brand`` for a key inside ROLLUP, likewise
  CUBE and GROUPING SETS).
- ``joins``: one token per equi-join condition, written in ON or in WHERE alike (comma joins and
  ``JOIN ... ON`` give the same token), operands sorted, prefixed with the side of an outer join
  (``LEFT``, ``RIGHT``, ``FULL``). ``qualify`` rewrites ``JOIN ... USING (c)`` into its equality;
  if names do not resolve, a USING join is one ``USING c`` token per column. A cross join has
  no condition and no token.

Similarity of a prediction to the gold query (:func:`similarity`):

- ``sim_<feature>``: multiset Jaccard similarity, sum of the minimum counts over sum of the
  maximum counts; 1.0 when both bags are empty.
- ``structural_similarity``: the mean of the seven ``sim_<feature>`` (the paper's Table 2 average).
- ``structural_count_similarity``: per feature min(|pred|, |gold|) / max(|pred|, |gold|) of the
  bag sizes (1.0 when both are 0), averaged over the seven features.
- An unparseable prediction scores 0.0 on all of them (and ``parsed`` 0.0). In a mean over all
  items it counts as 0; the mean over parseable predictions is ``mean(x) / mean(parsed)``.

The complexity counts of the paper's Table 1 (:attr:`Structure.complexity`) are computed from
the same normalised tree by :mod:`sqlbench_lmeval.sql.complexity`, which says where they differ from
the sizes of the feature bags above.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from statistics import fmean

from sqlglot import exp

from sqlbench_lmeval.sql.complexity import NOT_FUNCTION_CALLS, basic_predicates, complexity_counts
from sqlbench_lmeval.sql.normalization import (
    SOURCE,
    canonical_number,
    is_position,
    normalize,
    number_value,
    parse_one,
    parse_with_fallback,
    placeholder_subqueries,
    render,
)

#: The seven features of the paper, in its order.
FEATURES = (
    "tables",
    "columns",
    "where_predicates",
    "constants",
    "functions",
    "aggregation",
    "joins",
)

#: Window-only functions sqlglot models as aggregates; they are functions here, like ``RANK``.
_WINDOW_FUNCTIONS = tuple(
    getattr(exp, name)
    for name in (
        "Rank",
        "DenseRank",
        "RowNumber",
        "Ntile",
        "PercentRank",
        "CumeDist",
        "Lag",
        "Lead",
        "FirstValue",
        "LastValue",
        "NthValue",
    )
    if hasattr(exp, name)
)

#: Comparison flipped when the constant is on the left: ``5 < x`` is ``x > 5``.
_FLIPPED = {exp.GT: exp.LT, exp.LT: exp.GT, exp.GTE: exp.LTE, exp.LTE: exp.GTE}


@dataclass(frozen=True)
class Structure:
    """The features and complexity counts of one parsed query (treat the contents as read-only)."""

    features: Mapping[str, Counter] = field(repr=False)
    complexity: Mapping[str, int]
    qualified: bool  # False when alias resolution failed and names are as written
    dialect: str  # the dialect sqlglot read the query in (the item's, or a fallback)


# ---------------------------------------------------------------- features


def structure_of(sql: str | None, dialect: str, schema: Mapping | None = None) -> Structure | None:
    """Features and complexity of ``sql``, or None when it is not one parseable query.

    ``sql`` is read in ``dialect``; when that fails, in each of
    :data:`~sqlbench_lmeval.sql.normalization.FALLBACK_DIALECTS` in turn (postgres, spark, mysql,
    snowflake, bigquery, tsql, sqlite). ``Structure.dialect`` is the dialect that read it, so a
    caller can log it per sample (``parsed_dialect``); it differs from ``dialect`` exactly when
    the fallback was needed. Tokens are the same whichever dialect read the query.
    """
    parsed = parse_with_fallback(sql, dialect)
    if parsed is None:
        return None
    tree, parsed_dialect = parsed
    try:
        # The tree is this call's own parse: normalised in place, read again on a failure.
        normalized, qualified = normalize(
            tree, parsed_dialect, schema, read_again=lambda: parse_one(sql, parsed_dialect)
        )
        features = _features(normalized)
        counts = complexity_counts(normalized)
    except Exception:
        # sqlglot accepted the text but cannot work with the tree (it happens with odd input):
        # the prediction counts as unparseable rather than crashing the scoring of a whole run.
        return None
    return Structure(
        features=features, complexity=counts, qualified=qualified, dialect=parsed_dialect
    )


def _column_token(column: exp.Column) -> str:
    return f"{column.table}.{column.name}" if column.table else column.name


def _features(tree: exp.Expression) -> dict[str, Counter]:
    cte_names = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    predicates, joins = _predicates_and_joins(tree)
    return {
        "tables": Counter(
            table.name
            for table in tree.find_all(exp.Table)
            if table.name and not (table.name in cte_names and not table.db)
        ),
        "columns": Counter(
            _column_token(column)
            for column in tree.find_all(exp.Column)
            if not isinstance(column.this, exp.Star)
        ),
        "where_predicates": predicates,
        "constants": Counter(_constants(tree)),
        "functions": Counter(_function_name(f) for f in _function_calls(tree)),
        "aggregation": Counter(
            [render(call) for call in _aggregate_calls(tree)] + _grouping_keys(tree)
        ),
        "joins": joins,
    }


def _function_calls(tree: exp.Expression) -> Iterator[exp.Func]:
    for node in tree.find_all(exp.Func):
        if isinstance(node, NOT_FUNCTION_CALLS):
            continue
        if _is_aggregate(node):
            continue
        yield node


def _is_aggregate(node: exp.Expression) -> bool:
    """An aggregate call: not GROUPING() and not a window-only function such as RANK()."""
    return isinstance(node, exp.AggFunc) and not isinstance(
        node, (exp.Grouping, *_WINDOW_FUNCTIONS)
    )


def _function_name(node: exp.Func) -> str:
    return node.name.upper() if isinstance(node, exp.Anonymous) else node.sql_name()


def _aggregate_calls(tree: exp.Expression) -> Iterator[exp.AggFunc]:
    for node in tree.find_all(exp.AggFunc):
        if _is_aggregate(node):
            yield node


def _grouping_keys(tree: exp.Expression) -> list[str]:
    """``GROUP BY key`` per plain key; ``ROLLUP key`` / ``CUBE key`` / ``GROUPING SETS set``."""
    keys = []
    for group in tree.find_all(exp.Group):
        # MySQL's ``GROUP BY a WITH ROLLUP`` is ROLLUP(a).
        plain = "ROLLUP" if group.args.get("rollup") else "GROUP BY"
        if group.args.get("all"):
            keys.append("GROUP BY ALL")
        for key in group.expressions:
            if isinstance(key, (exp.Rollup, exp.Cube, exp.GroupingSets)):
                kind = {"rollup": "ROLLUP", "cube": "CUBE"}.get(key.key, "GROUPING SETS")
                keys.extend(f"{kind} {render(k)}" for k in key.expressions)
            elif not is_position(key):
                keys.append(f"{plain} {render(key)}")
    return keys


def _constants(tree: exp.Expression) -> Iterator[str]:
    for node in tree.find_all(exp.Literal, exp.Interval):
        if isinstance(node, exp.Interval):
            yield _interval_token(node)
            continue
        if node.find_ancestor(exp.DataType, exp.Interval) is not None:
            continue  # type parameters; interval amounts are part of the interval token
        parent = node.parent
        if isinstance(parent, exp.Ordered) and isinstance(parent.parent, exp.Order):
            if not node.is_string:
                continue  # ORDER BY 1
        if isinstance(parent, exp.Group) and not node.is_string:
            continue  # GROUP BY 1
        if node.is_string:
            yield node.this
        else:
            value = number_value(parent if isinstance(parent, exp.Neg) else node)
            yield canonical_number(value) if value is not None else node.this


def _interval_token(node: exp.Interval) -> str:
    amount = node.this.name if isinstance(node.this, exp.Literal) else render(node.this)
    unit = node.args.get("unit")
    return f"INTERVAL {amount} {unit.name if unit is not None else ''}".strip()


# ---------------------------------------------------------------- predicates and joins


def _is_join_condition(predicate: exp.Expression) -> bool:
    """``a.x = b.y`` between two columns of different (or unknown) sources."""
    if not isinstance(predicate, exp.EQ):
        return False
    left, right = predicate.this, predicate.expression
    if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
        return False
    left_source, right_source = _source_of(left), _source_of(right)
    return left_source is None or left_source != right_source


def _source_of(column: exp.Column) -> object:
    """The FROM-clause instance a column reads (its alias when names did not resolve)."""
    return column.meta.get(SOURCE, column.table or None)


def _instance_order(source: object) -> tuple:
    """Instances in query order (numbers); alias names (unresolved queries) after, by name."""
    return (0, source, "") if isinstance(source, int) else (1, 0, str(source))


def _predicate_token(predicate: exp.Expression) -> str:
    # Subqueries are placeholders: their own predicates are collected where they are.
    return render(_orient(_tag_instances(placeholder_subqueries(predicate))), throwaway=True)


def _tag_instances(predicate: exp.Expression) -> exp.Expression:
    """Tell apart two instances of one column in a predicate (``a.p > b.p`` in a self-join):
    each such column gets ``#1``, ``#2`` in the order its instance appears in the query, so the
    token keeps the comparison's direction while the alias names stay out of it."""
    columns: dict[str, list[exp.Column]] = {}
    for column in predicate.find_all(exp.Column):
        columns.setdefault(_column_token(column), []).append(column)
    for token, same in columns.items():
        instances = sorted({_source_of(c) for c in same}, key=_instance_order)
        if len(instances) < 2:
            continue
        for column in same:
            tag = instances.index(_source_of(column)) + 1
            column.replace(exp.Column(this=exp.Identifier(this=f"{token}#{tag}")))
    return predicate


def _reads_data(node: exp.Expression) -> bool:
    """An operand that reads the data (a column or a call), not a constant."""
    return node.find(exp.Column, exp.Func) is not None


def _swapped(left: exp.Expression, right: exp.Expression) -> bool:
    """Whether a comparison's operands are to be swapped: the side that reads data goes first
    (``x > 5``, ``COUNT(*) > 5``); two sides alike are put in text order (``a.p < b.p``)."""
    if _reads_data(left) != _reads_data(right):
        return not _reads_data(left)
    return render(left) > render(right)


def _orient(node: exp.Expression) -> exp.Expression:
    """A comparison in its canonical orientation (``5 < x`` is ``x > 5``); an IN list sorted."""
    target = node.this if isinstance(node, exp.Not) else node
    if isinstance(target, (exp.EQ, exp.NEQ)):
        left, right = target.this, target.expression
        if _swapped(left, right):
            target.set("this", right)
            target.set("expression", left)
    elif type(target) in _FLIPPED:
        left, right = target.this, target.expression
        if _swapped(left, right):
            flipped = _FLIPPED[type(target)](this=right, expression=left)
            if target is node:
                return flipped
            node.set("this", flipped)
    elif isinstance(target, exp.In) and target.expressions:
        target.set("expressions", sorted(target.expressions, key=render))
    return node


def _join_token(predicate: exp.EQ, side: str) -> str:
    sides = sorted((_column_token(predicate.this), _column_token(predicate.expression)))
    prefix = f"{side} " if side else ""
    return f"{prefix}{sides[0]} = {sides[1]}"


def _predicates_and_joins(tree: exp.Expression) -> tuple[Counter, Counter]:
    predicates: Counter = Counter()
    joins: Counter = Counter()

    def take(condition: exp.Expression, side: str) -> None:
        for predicate in basic_predicates(condition):
            if _is_join_condition(predicate):
                joins[_join_token(predicate, side)] += 1
            else:
                predicates[_predicate_token(predicate)] += 1

    for clause in tree.find_all(exp.Where, exp.Having):
        take(clause.this, "")
    for join in tree.find_all(exp.Join):
        side = (join.side or "").upper()
        if join.args.get("on") is not None:
            take(join.args["on"], side)
        for column in join.args.get("using") or []:
            prefix = f"{side} " if side else ""
            joins[f"{prefix}USING {column.name}"] += 1
    return predicates, joins


# ---------------------------------------------------------------- similarity


def jaccard(a: Counter, b: Counter) -> float:
    """Multiset Jaccard: sum of minimum counts over sum of maximum counts; 1.0 if both empty."""
    keys = set(a) | set(b)
    if not keys:
        return 1.0
    return sum(min(a[k], b[k]) for k in keys) / sum(max(a[k], b[k]) for k in keys)


def count_similarity(a: Counter, b: Counter) -> float:
    """min/max of the bag sizes; 1.0 when both are empty."""
    size_a, size_b = sum(a.values()), sum(b.values())
    if size_a == size_b == 0:
        return 1.0
    return min(size_a, size_b) / max(size_a, size_b)


SIMILARITY_METRICS = (
    "structural_similarity",
    "structural_count_similarity",
    *(f"sim_{feature}" for feature in FEATURES),
)


def similarity(prediction: Structure | None, gold: Structure) -> dict[str, float]:
    """Structural similarity of a prediction to gold; all 0.0 when the prediction is None."""
    if prediction is None:
        return dict.fromkeys(SIMILARITY_METRICS, 0.0)
    per_feature = {f: jaccard(prediction.features[f], gold.features[f]) for f in FEATURES}
    counts = [count_similarity(prediction.features[f], gold.features[f]) for f in FEATURES]
    return {
        "structural_similarity": fmean(per_feature.values()),
        "structural_count_similarity": fmean(counts),
        **{f"sim_{feature}": value for feature, value in per_feature.items()},
    }
