"""SQL structure, built on sqlglot: the seven feature bags of a normalised query and the structural
similarity of a prediction to gold (Ma, Pu and Zhu 2024, arXiv:2407.19517; the definitions, ours
where the paper published no code: docs/structure.md#features-and-similarity).

>>> gold = structure_of("SELECT i_brand FROM item WHERE i_manager_id = 28", "duckdb")
>>> renamed = structure_of("select t.I_BRAND from ITEM as t where 28 = t.i_manager_id", "duckdb")
>>> similarity(renamed, gold)["structural_similarity"]
1.0
>>> other = structure_of("SELECT s_city FROM store WHERE s_floor_space > 5000", "duckdb")
>>> scores = similarity(other, gold)
>>> round(scores["structural_similarity"], 3), scores["structural_count_similarity"]
(0.429, 1.0)"""

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
