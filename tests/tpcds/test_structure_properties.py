"""Properties of the structure metrics over the 99 TPC-DS gold queries (no database needed).

Equivalence: a spelling of a gold query that means the same (names renamed, columns qualified or
not, comma joins or JOIN ... ON, ORDER BY by position, name or qualified name, another dialect's
writer) must score as gold: mean >= 0.97 and >= 0.9 for every query. The table of means is
printed (``pytest -s`` shows it). Every variant is a deterministic rewrite of a sqlglot tree.
Quoting is exact: gold written by the PostgreSQL, Spark and Snowflake writers with every
identifier quoted (``identify=True``) scores 1.0 on every query.

Near misses: a changed constant, a dropped predicate, a reversed comparison and a missing join
lower the feature they touch below 1.
"""

from __future__ import annotations

from collections.abc import Callable
from statistics import fmean

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from sqlbench_lmeval.sql.normalization import qualify_names
from sqlbench_lmeval.sql.structure import similarity, structure_of
from sqlbench_lmeval.tpcds.data import gold_queries, schema_mapping

DIALECT = "duckdb"


@pytest.fixture(scope="module")
def schema():
    return schema_mapping()


@pytest.fixture(scope="module")
def gold(schema):
    return {n: structure_of(sql, DIALECT, schema) for n, sql in gold_queries().items()}


def qualified_tree(sql: str, schema) -> exp.Expression:
    """Gold with every column written ``alias.column`` and every select item aliased."""
    tree = sqlglot.parse_one(sql, dialect=DIALECT)
    # sqlglot cannot expand ``ORDER BY 1`` next to ``SELECT *``: hide such positions from it.
    hidden = []
    for query in tree.find_all(exp.Query):
        order = query.args.get("order")
        if order and any(isinstance(s, exp.Star) for s in query.selects):
            for key in order.expressions:
                if isinstance(key.this, exp.Literal) and not key.this.is_string:
                    hidden.append((key, key.this))
                    key.set("this", exp.Var(this=f"position_{len(hidden)}"))
    tree = qualify_names(tree, DIALECT, schema)
    for key, position in hidden:
        key.set("this", position)
    return tree


def _source(scope: Scope, alias: str):
    while scope is not None:
        if alias in scope.sources:
            return scope.sources[alias]
        scope = scope.parent
    return None


# ---------------------------------------------------------------- the variants


def rename_everything(tree: exp.Expression, _schema) -> exp.Expression:
    """``r_`` before every table alias, CTE name, CTE / derived-table column and select alias."""
    cte_names = {cte.alias for cte in tree.find_all(exp.CTE)}
    # Columns first, while the scopes still see the old names. A correlated column is in the
    # columns of more than one scope: renamed once.
    done: set[int] = set()
    for scope in traverse_scope(tree):
        for column in scope.columns:
            if id(column) in done:
                continue
            done.add(id(column))
            # A bare column of a query over one source reads that source.
            single = len(scope.selected_sources) == 1
            alias = column.table or (next(iter(scope.selected_sources)) if single else "")
            if alias and isinstance(_source(scope, alias), Scope):
                column.set("this", exp.to_identifier(f"r_{column.name}"))
            if column.table:
                column.set("table", exp.to_identifier(f"r_{column.table}"))
        order = scope.expression.args.get("order")
        names = set(scope.expression.named_selects)
        # Bare names in ORDER BY (also inside its expressions) are select items, renamed.
        for column in list(order.find_all(exp.Column)) if order else []:
            if not column.table and column.name in names and id(column) not in done:
                column.set("this", exp.to_identifier(f"r_{column.name}"))
    for alias in tree.find_all(exp.TableAlias):
        if alias.name:
            alias.set("this", exp.to_identifier(f"r_{alias.name}"))
    for table in tree.find_all(exp.Table):
        if table.name in cte_names and not table.db:
            table.set("this", exp.to_identifier(f"r_{table.name}"))
    for projection in tree.find_all(exp.Alias):
        if isinstance(projection.parent, exp.Select):
            projection.set("alias", exp.to_identifier(f"r_{projection.alias}"))
    return tree


def unqualify_columns(tree: exp.Expression, schema) -> exp.Expression:
    """Drop the qualifier of every column whose name no other source of its scope has.

    Kept: correlated columns (they are in the columns of two scopes) and the columns of a scope
    with a source behind ``SELECT *`` (its names are unknown, so a bare name may be ambiguous).
    """
    scopes = list(traverse_scope(tree))
    seen: dict[int, int] = {}
    for scope in scopes:
        for column in scope.columns:
            seen[id(column)] = seen.get(id(column), 0) + 1
    for scope in scopes:
        names: dict[str, int] = {}
        for source in scope.sources.values():
            if isinstance(source, exp.Table):
                columns = schema.get(source.name, {})
            else:
                columns = source.expression.named_selects
            for name in set(columns):
                names[name] = names.get(name, 0) + 1
        if any(
            any(isinstance(p, exp.Star) for p in source.expression.selects)
            for source in scope.sources.values()
            if isinstance(source, Scope)
        ):
            continue
        for column in scope.columns:
            local = column.table in scope.sources and seen[id(column)] == 1
            if local and names.get(column.name) == 1:
                column.set("table", None)
    return tree


def _conjuncts(condition: exp.Expression) -> list[exp.Expression]:
    return list(condition.flatten()) if isinstance(condition, exp.And) else [condition]


def comma_to_join_on(tree: exp.Expression, _schema) -> exp.Expression:
    """``FROM a, b WHERE a.x = b.y AND ...`` -> ``FROM a JOIN b ON a.x = b.y WHERE ...``."""
    for select in tree.find_all(exp.Select):
        where = select.args.get("where")
        joins = select.args.get("joins") or []
        source = select.args.get("from_") or select.args.get("from")
        if where is None or not joins or source is None:
            continue
        seen = {source.this.alias_or_name}
        remaining = _conjuncts(where.this)
        for join in joins:
            name = join.this.alias_or_name
            if join.args.get("on") is not None or join.args.get("kind") or join.side:
                seen.add(name)
                continue
            linking = [
                c
                for c in remaining
                if isinstance(c, exp.EQ)
                and all(isinstance(s, exp.Column) for s in (c.this, c.expression))
                and {c.this.table, c.expression.table} & {name}
                and {c.this.table, c.expression.table} - {name} <= seen
                and len({c.this.table, c.expression.table}) == 2
            ]
            if linking:
                join.set("on", exp.and_(*(c.copy() for c in linking)))
                join.set("kind", "INNER")
                remaining = [c for c in remaining if not any(c is k for k in linking)]
            seen.add(name)
        if remaining:
            where.set("this", exp.and_(*remaining))
        else:
            select.set("where", None)
    return tree


def join_on_to_comma(tree: exp.Expression, _schema) -> exp.Expression:
    """Inner ``JOIN b ON c`` -> ``, b`` with ``c`` added to WHERE."""
    for select in list(tree.find_all(exp.Select)):
        moved = []
        for join in select.args.get("joins") or []:
            on = join.args.get("on")
            if on is None or join.side or (join.kind or "").upper() not in ("", "INNER"):
                continue
            moved.append(on.copy())
            join.set("on", None)
            join.set("kind", None)
        if moved:
            where = select.args.get("where")
            condition = exp.and_(*([where.this] if where else []), *moved)
            select.set("where", exp.Where(this=condition))
    return tree


def _order_targets(query: exp.Expression):
    """``(ordered, position)`` for every ORDER BY key that is a select item."""
    order = query.args.get("order")
    if order is None:
        return
    items = query.selects
    for ordered in order.expressions:
        key = ordered.this
        for position, item in enumerate(items, 1):
            named = isinstance(key, exp.Column) and not key.table and key.name == item.alias
            if named or key == item.unalias():
                yield ordered, position, item
                break


def order_by_position(tree: exp.Expression, _schema) -> exp.Expression:
    for query in tree.find_all(exp.Query):
        for ordered, position, _item in list(_order_targets(query)):
            ordered.set("this", exp.Literal.number(position))
    return tree


def order_by_name(tree: exp.Expression, _schema) -> exp.Expression:
    for query in tree.find_all(exp.Query):
        for ordered, _position, item in list(_order_targets(query)):
            ordered.set("this", exp.column(item.alias_or_name))
    return tree


def order_by_qualified_name(tree: exp.Expression, _schema) -> exp.Expression:
    """ORDER BY the select item's expression (``customer.c_customer_id``) in every SELECT."""
    for query in tree.find_all(exp.Select):
        for ordered, _position, item in list(_order_targets(query)):
            ordered.set("this", item.unalias().copy())
    return tree


Transform = Callable[[exp.Expression, dict], exp.Expression]

#: name -> (transformation of the qualified gold tree, dialect it is written and read in).
VARIANTS: dict[str, tuple[Transform | None, str]] = {
    "qualified": (lambda tree, _schema: tree, DIALECT),
    "renamed": (rename_everything, DIALECT),
    "unqualified": (unqualify_columns, DIALECT),
    "comma -> JOIN ON": (comma_to_join_on, DIALECT),
    "JOIN ON -> comma": (join_on_to_comma, DIALECT),
    "ORDER BY position": (order_by_position, DIALECT),
    "ORDER BY name": (order_by_name, DIALECT),
    "ORDER BY qualified": (order_by_qualified_name, DIALECT),
    "postgres writer": (None, "postgres"),
    "spark writer": (None, "spark"),
    "snowflake writer": (None, "snowflake"),
    "postgres, quoted": (None, "postgres"),
    "spark, quoted": (None, "spark"),
    "snowflake, quoted": (None, "snowflake"),
}
#: Writer variants with every identifier quoted: they must score exactly 1.0.
QUOTED = ("postgres, quoted", "spark, quoted", "snowflake, quoted")


def variant_sql(name: str, sql: str, qualified: exp.Expression, schema) -> tuple[str, str]:
    """The variant ``name`` of gold ``sql`` (``qualified``: its :func:`qualified_tree`, left
    unchanged) and the dialect it is written in."""
    transform, dialect = VARIANTS[name]
    if transform is None:  # round trip through another dialect's writer
        quoted = name in QUOTED
        return sqlglot.transpile(sql, read=DIALECT, write=dialect, identify=quoted)[0], dialect
    return transform(qualified.copy(), schema).sql(dialect=DIALECT), dialect


@pytest.fixture(scope="module")
def variant_runs(gold, schema):
    """Per variant: the structural similarity of each query's variant to gold, and how many
    variants differ in text from the query they were made from."""
    scores: dict[str, dict[int, float]] = {}
    changed: dict[str, int] = {}
    # Each query qualified once (the transformations change a copy), not once or twice per
    # variant: the same tree every time (about a fifth of this fixture's time).
    qualified = {number: qualified_tree(sql, schema) for number, sql in gold_queries().items()}
    qualified_sql = {number: tree.sql(DIALECT) for number, tree in qualified.items()}
    for name in VARIANTS:
        scores[name], changed[name] = {}, 0
        for number, sql in gold_queries().items():
            text, dialect = variant_sql(name, sql, qualified[number], schema)
            base = sql if name == "qualified" else qualified_sql[number]
            changed[name] += text != base
            found = similarity(structure_of(text, dialect, schema), gold[number])
            scores[name][number] = found["structural_similarity"]
    print("\nvariant                 mean    min  (query)  queries changed")
    for name, per_query in scores.items():
        worst = min(per_query, key=per_query.get)
        print(
            f"{name:22s} {fmean(per_query.values()):.4f} {per_query[worst]:.4f}  ({worst:2d})"
            f"   {changed[name]:2d}"
        )
    return scores, changed


@pytest.mark.parametrize("name", list(VARIANTS))
def test_equivalent_spellings_of_gold_score_as_gold(name, variant_runs):
    per_query = variant_runs[0][name]
    assert len(per_query) == 99
    low = {n: round(v, 3) for n, v in per_query.items() if v < 0.9}
    assert not low, f"{name}: queries below 0.9: {low}"
    assert fmean(per_query.values()) >= 0.97


@pytest.mark.parametrize("name", QUOTED)
def test_quoting_never_changes_a_token(name, variant_runs):
    """``"store_sales"."ss_item_sk"`` is ``store_sales.ss_item_sk``: inside window functions,
    derived-column names and Snowflake's upper-case folding too (window functions kept the
    quotes before: query 51 scored 0.833)."""
    per_query = variant_runs[0][name]
    assert len(per_query) == 99
    assert {n: v for n, v in per_query.items() if v != 1.0} == {}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_variant_really_changes_the_text(name, variant_runs):
    """A variant that leaves every query as it was would prove nothing."""
    assert variant_runs[1][name] > 0


# ---------------------------------------------------------------- near misses


def _where_conjuncts(tree: exp.Expression):
    """``(where, conjunct)`` for the top-level AND conjuncts of every WHERE, in tree order."""
    for where in tree.find_all(exp.Where):
        for conjunct in _conjuncts(where.this):
            yield where, conjunct


def _is_join(node: exp.Expression) -> bool:
    # TPC-DS names a column by its table's prefix (ss_, i_, d_): different prefixes, a join.
    sides = (node.this, node.expression) if isinstance(node, exp.EQ) else ()
    return (
        len(sides) == 2
        and all(isinstance(s, exp.Column) for s in sides)
        and sides[0].name.split("_")[0] != sides[1].name.split("_")[0]
    )


def _drop(where: exp.Where, conjunct: exp.Expression) -> None:
    rest = [c for c in _conjuncts(where.this) if c is not conjunct]
    where.set("this", exp.and_(*rest))


def changed_constant(tree):
    for _where, conjunct in _where_conjuncts(tree):
        for literal in conjunct.find_all(exp.Literal):
            if not literal.is_string and not conjunct.find(exp.Subquery):
                literal.replace(exp.Literal.number(int(float(literal.this)) + 1001))
                return tree, "constants"
    return None


def dropped_predicate(tree):
    for where, conjunct in _where_conjuncts(tree):
        if len(_conjuncts(where.this)) > 1 and not _is_join(conjunct):
            if not conjunct.find(exp.Subquery) and not isinstance(conjunct, exp.EQ | exp.Paren):
                _drop(where, conjunct)
                return tree, "where_predicates"
    return None


REVERSED = {exp.GT: exp.LT, exp.LT: exp.GT, exp.GTE: exp.LTE, exp.LTE: exp.GTE}


def reversed_comparison(tree):
    for where in tree.find_all(exp.Where):
        for comparison in where.this.find_all(*REVERSED):
            if not comparison.find(exp.Subquery):
                reverse = REVERSED[type(comparison)]
                comparison.replace(reverse(this=comparison.this, expression=comparison.expression))
                return tree, "where_predicates"
    return None


def missing_join(tree):
    for where, conjunct in _where_conjuncts(tree):
        if _is_join(conjunct) and len(_conjuncts(where.this)) > 1:
            _drop(where, conjunct)
            return tree, "joins"
    return None


NEAR_MISSES = {
    "changed constant": changed_constant,
    "dropped predicate": dropped_predicate,
    "reversed comparison": reversed_comparison,
    "missing join": missing_join,
}


@pytest.mark.parametrize("name", list(NEAR_MISSES))
def test_a_near_miss_lowers_the_feature_it_touches(name, gold, schema):
    touched = 0
    for number, sql in gold_queries().items():
        changed = NEAR_MISSES[name](sqlglot.parse_one(sql, dialect=DIALECT))
        if changed is None:
            continue  # the query has no such spot (e.g. no comparison in a WHERE)
        tree, feature = changed
        touched += 1
        found = similarity(structure_of(tree.sql(DIALECT), DIALECT, schema), gold[number])
        assert found[f"sim_{feature}"] < 1, (number, tree.sql(DIALECT)[:300])
    print(f"\n{name}: {touched} gold queries changed")
    assert (
        touched >= 25
    )  # a quarter of the queries at least: a rewrite that finds none tests nothing
