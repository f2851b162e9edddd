"""Gold health, judged by running every gold query on the built databases through the execution
engine, with the connection setup scoring uses: per item a status and flags, in the vocabulary
of ``scoring.item.Item`` (their definitions and how each flag is detected:
docs/logiccat.md#gold-health)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

from sqlbench_lmeval.data.gold import gold_status, health_counts, run_gold
from sqlbench_lmeval.execution import Database, Job, Limits, execute_many
from sqlbench_lmeval.logiccat import gold
from sqlbench_lmeval.logiccat.transpile import has_aggregate
from sqlbench_lmeval.scoring.tie_probe import outer_depth, outermost_query, paren_depths

# The connection setup scoring uses, so health is judged on exactly the engine that scores.
SETUP = gold.CONNECTION_SETUP
_QUERIES = (exp.Select, exp.Union, exp.Except, exp.Intersect)
_DIALECT = "sqlite"  # the bundle's gold, as health runs it


@dataclass(frozen=True)
class Health:
    """A gold query's judged status and flags, plus its result when it ran."""

    status: str
    flags: tuple[str, ...]
    columns: tuple[str, ...] = ()
    rows: tuple[tuple, ...] = ()
    error: str | None = None


# ---------------------------------------------------------------------------------------------
# Probe queries
# ---------------------------------------------------------------------------------------------


def _limited_queries(tree: exp.Expression) -> list[exp.Expression]:
    """Every query level with both ORDER BY and LIMIT, in tree order."""
    return [
        node
        for node in tree.find_all(*_QUERIES)
        if node.args.get("order") is not None and node.args.get("limit") is not None
    ]


def inner_cuts(tree: exp.Expression) -> list[exp.Expression]:
    """The query levels below the outermost query with both ORDER BY and LIMIT."""
    outer = outermost_query(tree)
    return [node for node in _limited_queries(tree) if node is not outer]


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


def _positions(width: int, direction: str) -> str:
    return ", ".join(f"{i + 1} {direction}" for i in range(width))


def _region(depths: list[int], at: int) -> tuple[int, int]:
    """First and last token of the parenthesised region holding token ``at``."""
    first = last = at
    while first > 0 and depths[first - 1] >= depths[at]:
        first -= 1
    while last + 1 < len(depths) and depths[last + 1] >= depths[at]:
        last += 1
    return first, last


def _order_by_before(tokens: list[Token], depths: list[int], first: int, at: int) -> bool:
    """Whether the query whose LIMIT is token ``at`` has an ORDER BY (at its own depth, after
    its last SELECT)."""
    for i in range(at - 1, first - 1, -1):
        if depths[i] != depths[at]:
            continue
        if tokens[i].token_type == TokenType.ORDER_BY:
            return True
        if tokens[i].token_type == TokenType.SELECT:
            return False
    return False


def _inner_width(sql: str) -> int | None:
    try:
        return _output_width(outermost_query(sqlglot.parse_one(sql, read=_DIALECT)))
    except sqlglot.errors.SqlglotError:
        return None


def tie_break_variants(
    sql: str, tree: exp.Expression, outer_width: int
) -> tuple[tuple[str, str], bool] | None:
    """Gold ``sql`` with every ORDER BY ... LIMIT below the outermost query extended by its
    output columns (by position), ascending and descending; and the outermost query's cut, if
    there is one, ordered by its ``outer_width`` output columns ascending in both, so that its
    own ties fall alike. Returns (the two variants, whether the outermost query has a cut);
    None without an inner ORDER BY ... LIMIT whose width is known.

    The text is edited, never re-written through sqlglot: its SQLite writer changes the meaning
    of some gold (``DATE_ADD(d, '100', 'YEAR')`` becomes ``DATE(d, '100 YEAR')``, ``VAR_SAMP``
    becomes ``VARIANCE``), which made variants differ from gold without any tie. The tree only
    says whether there is an inner cut; each inner query's width is read from its own text.
    """
    if not inner_cuts(tree):
        return None
    try:
        tokens = Dialect.get_or_raise(_DIALECT).tokenize(sql)
    except sqlglot.errors.SqlglotError:
        return None
    depths = paren_depths(tokens)
    top = outer_depth(tree)
    inner: list[tuple[int, int]] = []  # (character offset to insert at, width)
    outer_cut: int | None = None  # token index of the outermost query's LIMIT
    for at, token in enumerate(tokens):
        if token.token_type != TokenType.LIMIT or at == 0:
            continue
        first, last = _region(depths, at)
        if depths[at] <= top:
            outer_cut = at
        elif _order_by_before(tokens, depths, first, at):
            width = _inner_width(sql[tokens[first].start : tokens[last].end + 1])
            if width:
                inner.append((tokens[at - 1].end + 1, width))
    if not inner:
        return None
    variants = []
    for direction in ("ASC", "DESC"):
        edits = [(offset, f", {_positions(width, direction)}") for offset, width in inner]
        if outer_cut is not None and outer_width:
            first, _ = _region(depths, outer_cut)
            ordered = _order_by_before(tokens, depths, first, outer_cut)
            prefix = ", " if ordered else " ORDER BY "
            edits.append((tokens[outer_cut - 1].end + 1, prefix + _positions(outer_width, "ASC")))
        text = sql
        for offset, insert in sorted(edits, reverse=True):
            text = text[:offset] + insert + text[offset:]
        variants.append(text)
    return (variants[0], variants[1]), outer_cut is not None


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
    # Gold that did not finish on this (perhaps loaded) machine runs again under gold's own,
    # longer limit, so the recorded health does not depend on the load (``data.gold``).
    results = run_gold(
        [Job(databases[i], prepared[i].sql) for i in runnable],
        limits,
        workers=workers,
        progress="LogicCat gold" if progress else None,
    )
    outcomes = dict(zip(runnable, results, strict=False))

    extra: dict[int, set[str]] = {}
    outer_cut: set[int] = set()  # items whose outermost query has a cut (see the variants)
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
            # A probe changes the query, and with it which rows draw which seeded RAND()
            # numbers: judging by probes would flag at random. With RAND(), an inner
            # ORDER BY ... LIMIT picks its rows by chance by definition.
            if inner_cuts(tree):
                extra.setdefault(i, set()).add(gold.NONDETERMINISTIC_ORDER)
            continue
        ties = tie_break_variants(prepared[i].sql, tree, len(outcome.columns))
        if ties is not None and ties[1]:
            outer_cut.add(i)
        for kind, variants in (
            ("tie", ties[0] if ties else None),
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
        if kind == "tie" and (
            rows[0] != rows[1]
            # The outer cut's ties fall by position in the variants, by engine order in gold.
            or (i not in outer_cut and rows[0] != _multiset(outcomes[i].rows))
        ):
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
        status = gold_status(outcome.ok, outcome.rows)
        health.append(Health(status, flags, outcome.columns, outcome.rows, outcome.error))
    return health


def health_summary(health: Sequence[Health]) -> dict[str, dict[str, int]]:
    """Counts per status and per flag."""
    return health_counts((h.status for h in health), (h.flags for h in health))
