"""Gold health, judged by running every gold query on the built databases.

Per item a status and flags (the vocabulary of ``scoring.item.Item``):

- status ``ok`` (rows with a non-NULL value), ``empty``, ``all_null``, ``error`` (also timeouts
  and oversized results), ``non_select`` (not a query; never run);
- ``clock_dependent`` / ``random``: from the query text (see ``gold.static_flags``);
- ``nondeterministic_order``: an ORDER BY ... LIMIT (at any level) cuts through ties. Detected
  by running the gold twice more with every such ORDER BY extended by its output columns,
  ascending and then descending: if the rows differ, which rows the gold returns depends on
  the engine's row order. Gold using RAND() is never probed (its results differ by chance);
  it gets this flag whenever it has an ORDER BY ... LIMIT;
- ``mysql_specific``: the gold relies on MySQL-only semantics - an implicit coercion that the
  transpiler made explicit and without which SQLite answers differently (checked by running
  the transpile without it), a table of another database, an uncorrelated scalar subquery
  returning several rows
  (MySQL raises an error, SQLite silently takes the first row), or a GROUP BY query selecting
  a column that is neither grouped nor functionally determined (MySQL 8 refuses it; MariaDB
  and SQLite return any row's value): detected by running it with that column replaced by
  MIN(column) and by MAX(column) and seeing the rows differ.

Everything runs through the execution engine (``execute_many``) with the same connection setup
that scoring uses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from sqlbench_lmeval.execution import Database, Job, Limits, execute_many
from sqlbench_lmeval.logiccat import gold
from sqlbench_lmeval.logiccat.transpile import has_aggregate

# The connection setup scoring uses, so health is judged on exactly the engine that scores.
SETUP = gold.CONNECTION_SETUP
_QUERIES = (exp.Select, exp.Union, exp.Except, exp.Intersect)


@dataclass(frozen=True)
class Health:
    """A gold query's judged status and flags, plus its result when it ran."""

    status: str
    flags: tuple[str, ...]
    columns: tuple[str, ...] = ()
    rows: tuple[tuple, ...] = ()
    error: str | None = None


def result_status(ok: bool, rows: Sequence[Sequence[object]]) -> str:
    """ok / empty / all_null / error from an execution result."""
    if not ok:
        return gold.ERROR
    if not rows:
        return gold.EMPTY
    if all(value is None for row in rows for value in row):
        return gold.ALL_NULL
    return gold.OK


# ---------------------------------------------------------------------------------------------
# Probe queries
# ---------------------------------------------------------------------------------------------


def _outer_query(tree: exp.Expression) -> exp.Expression:
    while isinstance(tree, exp.Subquery):
        tree = tree.this
    return tree


def _limited_queries(tree: exp.Expression) -> list[exp.Expression]:
    """Every query level with both ORDER BY and LIMIT, in tree order."""
    return [
        node
        for node in tree.find_all(*_QUERIES)
        if node.args.get("order") is not None and node.args.get("limit") is not None
    ]


def _output_width(query: exp.Expression) -> int | None:
    if isinstance(query, (exp.Union, exp.Except, exp.Intersect)):
        return _output_width(query.left)
    if not isinstance(query, exp.Select):
        return None
    if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star)
           for e in query.expressions):  # fmt: skip
        return None
    return len(query.expressions)


def _sqlite(tree: exp.Expression) -> str:
    return tree.sql(dialect="sqlite", copy=False)


def tie_break_variants(tree: exp.Expression, outer_width: int) -> tuple[str, str] | None:
    """The query with every ORDER BY ... LIMIT extended by its output columns (by position),
    ascending and descending; None without such a clause."""
    targets = _limited_queries(tree)
    if not targets:
        return None
    outer = _outer_query(tree)
    widths = [outer_width if t is outer else _output_width(t) for t in targets]
    variants = []
    for descending in (False, True):
        copy = tree.copy()
        for target, width in zip(_limited_queries(copy), widths, strict=False):
            if not width:
                continue
            order = target.args["order"]
            extra = [
                exp.Ordered(
                    this=exp.Literal.number(i + 1), desc=descending, nulls_first=not descending
                )
                for i in range(width)
            ]
            order.set("expressions", [*order.expressions, *extra])
        variants.append(_sqlite(copy))
    return variants[0], variants[1]


def scalar_subqueries(tree: exp.Expression) -> list[exp.Expression]:
    """Subqueries used as one value (not a FROM/JOIN source, IN list, EXISTS or ALL/ANY)."""
    found = []
    for node in tree.find_all(exp.Subquery):
        parent = node.parent
        if node.alias or node.arg_key in ("query", "from_", "joins"):
            continue
        if isinstance(parent, (exp.From, exp.Join, exp.Exists, exp.All, exp.Any, exp.In)):
            continue
        if isinstance(parent, (exp.Union, exp.Except, exp.Intersect, exp.Lateral)):
            continue
        if isinstance(node.this, exp.Select):
            found.append(node.this)
    return found


def _key(node: exp.Expression) -> str:
    return node.sql(dialect="sqlite").lower()


def _ungrouped_projections(select: exp.Select) -> list[int]:
    """Positions of projections of a GROUP BY select that are neither aggregated nor grouped."""
    group = select.args.get("group")
    if not group or not group.expressions:
        return []
    grouped = {_key(e) for e in group.expressions}
    grouped_names = {e.name.lower() for e in group.expressions if isinstance(e, exp.Column)}
    positions = []
    for position, projection in enumerate(select.expressions):
        value = projection.this if isinstance(projection, exp.Alias) else projection
        if isinstance(value, (exp.Literal, exp.Star)) or has_aggregate(value):
            continue
        if any(True for _ in value.find_all(exp.Window)):
            continue
        columns = [c for c in value.find_all(exp.Column) if not c.is_star]
        if not columns or _key(value) in grouped:
            continue
        if projection.alias and projection.alias.lower() in grouped_names:
            continue
        if all(_key(c) in grouped or c.name.lower() in grouped_names
               for c in columns):  # fmt: skip
            continue
        positions.append(position)
    return positions


def any_value_variants(tree: exp.Expression) -> tuple[str, str] | None:
    """The query with each ungrouped projection of a GROUP BY replaced by MIN(...) and by
    MAX(...); None if there is none."""
    selects = [s for s in tree.find_all(exp.Select) if _ungrouped_projections(s)]
    if not selects:
        return None
    variants = []
    for aggregate in (exp.Min, exp.Max):
        copy = tree.copy()
        for select in [s for s in copy.find_all(exp.Select) if _ungrouped_projections(s)]:
            for position in _ungrouped_projections(select):
                projection = select.expressions[position]
                value = projection.this if isinstance(projection, exp.Alias) else projection
                name = projection.alias_or_name
                wrapped = exp.alias_(aggregate(this=value.copy()), name, quoted=True)
                projection.replace(wrapped)
        variants.append(_sqlite(copy))
    return variants[0], variants[1]


# ---------------------------------------------------------------------------------------------
# Judging
# ---------------------------------------------------------------------------------------------


def _value_key(value: object) -> object:
    if isinstance(value, float):
        return float(f"{value:.9g}")
    return value


def _multiset(rows: Sequence[Sequence[object]]) -> list:
    return sorted((tuple(_value_key(v) for v in row) for row in rows), key=repr)


def judge_health(
    prepared: Sequence[gold.PreparedGold],
    db_paths: Sequence[str],
    *,
    workers: int | None = None,
    progress: bool = True,
    timeout_s: float = 10.0,
    max_rows: int = 10_000,
) -> list[Health]:
    """Run every gold (and its probes) through the execution engine and judge it."""

    limits = Limits(timeout_s=timeout_s, max_rows=max_rows)
    databases = [Database("sqlite", path, SETUP) for path in db_paths]
    runnable = [i for i, p in enumerate(prepared) if p.runnable]
    results = execute_many(
        [Job(databases[i], prepared[i].sql) for i in runnable],
        limits,
        workers=workers,
        progress="LogicCat gold" if progress else None,
    )
    outcomes = dict(zip(runnable, results, strict=False))

    extra: dict[int, set[str]] = {}
    # All probes of all items in one batch: (item, kind, sql).
    probes: list[tuple[int, str, str]] = []
    for i in runnable:
        outcome = outcomes[i]
        if not outcome.ok:
            continue
        try:
            tree = sqlglot.parse_one(prepared[i].sql, read="sqlite")
        except sqlglot.errors.SqlglotError:
            continue
        if gold.RANDOM in prepared[i].flags:
            # Probes compare results across runs, which RAND() makes differ by chance: judging
            # by them would flag at random. With RAND(), an ORDER BY ... LIMIT picks its rows
            # nondeterministically by definition.
            if _limited_queries(tree):
                extra.setdefault(i, set()).add(gold.NONDETERMINISTIC_ORDER)
            continue
        for kind, variants in (
            ("tie", tie_break_variants(tree, len(outcome.columns))),
            ("any", any_value_variants(tree)),
        ):
            for variant in variants or ():
                probes.append((i, kind, variant))
        for subquery in scalar_subqueries(tree):
            probes.append((i, "scalar", f"SELECT COUNT(*) FROM ({_sqlite(subquery)})"))
        if prepared[i].plain_sql:
            probes.append((i, "plain", prepared[i].plain_sql))
    probe_results = execute_many(
        [Job(databases[i], sql) for i, _, sql in probes],
        limits,
        workers=workers,
        progress="LogicCat gold checks" if progress else None,
    )

    variant_rows: dict[tuple[int, str], list] = {}
    for (i, kind, _), result in zip(probes, probe_results, strict=False):
        if kind == "plain":
            # The coercions we made explicit change the answer: naive SQLite differs from MySQL.
            if not result.ok or _multiset(result.rows) != _multiset(outcomes[i].rows):
                extra.setdefault(i, set()).add(gold.MYSQL_SPECIFIC)
            continue
        if not result.ok:
            continue
        if kind == "scalar":
            count = result.rows[0][0] if result.rows else 0
            if isinstance(count, int) and count > 1:
                extra.setdefault(i, set()).add(gold.MYSQL_SPECIFIC)
        else:
            variant_rows.setdefault((i, kind), []).append(_multiset(result.rows))
    for (i, kind), rows in variant_rows.items():
        if len(rows) != 2:
            continue
        if kind == "tie" and (rows[0] != rows[1] or rows[0] != _multiset(outcomes[i].rows)):
            extra.setdefault(i, set()).add(gold.NONDETERMINISTIC_ORDER)
        if kind == "any" and rows[0] != rows[1]:
            extra.setdefault(i, set()).add(gold.MYSQL_SPECIFIC)

    health = []
    for i, prep in enumerate(prepared):
        flags = tuple(sorted(set(prep.flags) | extra.get(i, set())))
        if not prep.runnable:
            health.append(Health(prep.status or gold.ERROR, flags, error=prep.note or None))
            continue
        outcome = outcomes[i]
        status = result_status(outcome.ok, outcome.rows)
        health.append(Health(status, flags, outcome.columns, outcome.rows, outcome.error))
    return health


def health_summary(health: Sequence[Health]) -> dict[str, dict[str, int]]:
    """Counts per status and per flag."""
    statuses = Counter(h.status for h in health)
    flags = Counter(flag for h in health for flag in h.flags)
    return {"status": dict(sorted(statuses.items())), "flags": dict(sorted(flags.items()))}
