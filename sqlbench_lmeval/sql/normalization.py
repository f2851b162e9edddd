"""SQL normalisation for structure comparison: one canonical sqlglot tree per query, whatever the
spelling (names the author chose, constants, operations that do nothing, the dialect), from
which :mod:`sqlbench_lmeval.sql.structure` reads its feature bags (the rules, form -> canonical
form: docs/structure.md#normalisation).

>>> from sqlglot import exp
>>> sql = (
...     "SELECT ss.x FROM store_sales AS ss"
...     " WHERE ss.x * 1 > 2001 + 1 AND ss.d = DATE '2000-08-23' + INTERVAL 14 DAY"
... )
>>> tree, qualified = normalize(parse_one(sql, "duckdb"), "duckdb")
>>> render(tree.find(exp.Where)), qualified
("WHERE store_sales.x > 2002 AND store_sales.d = '2000-09-06'", True)"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.schema import MappingSchema

#: Dialects tried, in this order, when a query does not parse in the item's own dialect.
FALLBACK_DIALECTS = ("postgres", "spark", "mysql", "snowflake", "bigquery", "tsql", "sqlite")

#: Tokens are rendered in one dialect whatever dialect the query was read in, so that a query
#: read as PostgreSQL and one read as DuckDB give the same token for the same structure.
TOKEN_DIALECT = "duckdb"

#: Dialects in which ``<date> + 14`` adds 14 days (in MySQL it is arithmetic on a number).
_DATE_PLUS_DAYS_DIALECTS = frozenset({"duckdb", "postgres", "snowflake", "oracle", "redshift"})

#: Column meta keys: the instance (FROM-clause node) a column reads from, as a number unique in
#: the query, and a flag that the column's source has been resolved.
SOURCE = "sqlbench_source_instance"
_RESOLVED = "sqlbench_resolved"

#: What counts as a query: SELECT (also with WITH, or DuckDB's FROM-first form), set
#: operations, VALUES and DuckDB's PIVOT statement. A bare expression (sqlglot reads ``SELEC x``
#: as the expression ``SELEC AS x``) or another statement (DELETE, DROP, ...) is not one.
_QUERY_TYPES = (exp.Query, exp.Values, exp.Pivot)

_SUBQUERY_PLACEHOLDER = "(subquery)"


def render(node: exp.Expression, *, throwaway: bool = False) -> str:
    """The token text of ``node`` (in :data:`TOKEN_DIALECT`, without comments).

    sqlglot's writer changes the tree it writes, so it writes a copy; ``throwaway`` says that
    ``node`` is a copy made for this token alone (:func:`placeholder_subqueries`), which it may
    then change instead: copying a tree costs more than writing it."""
    return node.sql(dialect=TOKEN_DIALECT, comments=False, copy=not throwaway)


def placeholder_subqueries(node: exp.Expression) -> exp.Expression:
    """A copy of ``node`` with every nested query written ``(subquery)``: a token holds the
    shape of the expression around a subquery, the subquery's own features are read where it is."""

    def hide(child: exp.Expression) -> exp.Expression:
        if isinstance(child, (exp.Subquery, exp.Query)):
            return exp.Var(this=_SUBQUERY_PLACEHOLDER)
        return child

    root = node.copy()
    return root if isinstance(root, exp.Query) else root.transform(hide, copy=False)


# ---------------------------------------------------------------- parsing


def parse_one(sql: str | None, dialect: str) -> exp.Expression | None:
    """The single query ``sql`` holds, or None when it is empty, unparseable, not a query or
    several statements."""
    if sql is None or not sql.strip():
        return None
    try:
        statements = [s for s in sqlglot.parse(sql, dialect=dialect) if s is not None]
    except Exception:  # ParseError, TokenError, and whatever odd input makes sqlglot raise
        return None
    if len(statements) != 1 or not isinstance(statements[0], _QUERY_TYPES):
        return None
    return statements[0]


def parse_with_fallback(sql: str | None, dialect: str) -> tuple[exp.Expression, str] | None:
    """The query ``sql`` holds and the dialect that read it: ``dialect`` first, then each of
    :data:`FALLBACK_DIALECTS`; None when none of them reads one query."""
    for candidate in (dialect, *(d for d in FALLBACK_DIALECTS if d != dialect)):
        tree = parse_one(sql, candidate)
        if tree is not None:
            return tree, candidate
    return None


# ---------------------------------------------------------------- the whole pipeline


def normalize(
    tree: exp.Expression,
    dialect: str,
    schema: Mapping | None = None,
    *,
    read_again: Callable[[], exp.Expression] | None = None,
) -> tuple[exp.Expression, bool]:
    """A normalised copy of ``tree`` (read in ``dialect``) and whether its names resolved.

    ``read_again``, when the caller has the text ``tree`` was read from, reads it again into a
    new tree: ``tree`` itself is then rewritten (the caller gives it up), not a copy of it.
    """
    qualified = True
    try:
        # qualify works in place: on a failure the rules are applied again to a fresh tree
        # (cheaper than a copy kept for the rare failure; reading the text again is cheaper
        # than copying the tree at all).
        first = tree if read_again is not None else tree.copy()
        resolved = qualify_names(_before_names(first, dialect), dialect, schema)
        # Again: qualify writes names in the dialect's case (Snowflake's are upper case).
        _resolve_sources(_plain_identifiers(resolved), schema or {})
        tree = resolved
    except Exception:
        # sqlglot could not resolve the names (it happens with odd predictions): keep them as
        # written; ``qualified`` reports it.
        tree = _before_names(read_again() if read_again is not None else tree.copy(), dialect)
        qualified = False
    return tree, qualified


def qualify_names(tree: exp.Expression, dialect: str, schema: Mapping | None) -> exp.Expression:
    """sqlglot's ``qualify`` of ``tree`` in place, as the structure metrics use it: every column
    attached to its source, select items aliased, ``*`` left as written (its columns would be
    features nobody wrote), names not quoted."""
    return qualify(
        tree,
        dialect=dialect,
        schema=_sqlglot_schema(schema, dialect),
        expand_stars=False,
        validate_qualify_columns=False,
        quote_identifiers=False,
        identify=False,
    )


def _before_names(tree: exp.Expression, dialect: str) -> exp.Expression:
    """The rules applied before names are resolved."""
    # Plain before qualify, so that names match the schema's whatever their quoting.
    tree = _plain_identifiers(_drop_positions_next_to_star(tree))
    tree = _drop_redundant_aliases(tree)
    # Constants first: the definitions that replace derived-column names are then folded too.
    return _fold_constants(tree, dialect)


#: sqlglot's schema objects by (id of the mapping, dialect); the mapping is kept so that its id
#: stays its own. Building one normalises every name of the schema: a third of the time of a
#: query, were it done per query.
_SCHEMAS: dict[tuple[int, str], tuple[Mapping, MappingSchema]] = {}


def _sqlglot_schema(schema: Mapping | None, dialect: str) -> MappingSchema | None:
    if schema is None:
        return None
    key = (id(schema), dialect)
    if key not in _SCHEMAS or _SCHEMAS[key][0] is not schema:
        if len(_SCHEMAS) >= 16:  # a handful of schemas in any run; never grow without bound
            del _SCHEMAS[next(iter(_SCHEMAS))]
        _SCHEMAS[key] = (schema, MappingSchema(dict(schema), dialect=dialect))
    return _SCHEMAS[key][1]


def _plain_identifiers(tree: exp.Expression) -> exp.Expression:
    """Every identifier in lower case and unquoted (DuckDB and SQLite match names caselessly).

    Before names are resolved, not only in the tokens: a quoted name would keep its quotes in
    the name a derived column gets from its definition (``SUM(t."x")``, which a window or a
    CTE then quotes again), and a quoted lower-case name does not match the schema of a dialect
    that folds names to upper case (Snowflake). Tokens are compared, never run, so no quote is
    ever needed in them."""
    for identifier in tree.find_all(exp.Identifier):
        identifier.set("this", identifier.this.lower())
        identifier.set("quoted", False)
    return tree


def is_position(node: exp.Expression) -> bool:
    """A positional reference (``ORDER BY 1``, ``GROUP BY 2``)."""
    return isinstance(node, exp.Literal) and not node.is_string


def _drop_redundant_aliases(tree: exp.Expression) -> exp.Expression:
    """``SELECT x AS x`` -> ``SELECT x`` (sqlglot's ``qualify`` cannot resolve ``GROUP BY x``
    next to the former when a source of the query is behind ``SELECT *``)."""
    for alias in list(tree.find_all(exp.Alias)):
        column = alias.this
        if isinstance(column, exp.Column) and not column.is_star and column.name == alias.alias:
            alias.replace(column)
    return tree


def _drop_positions_next_to_star(tree: exp.Expression) -> exp.Expression:
    """Replace ``ORDER BY 1`` by NULL in a query whose select list holds ``*``: sqlglot cannot
    expand a position next to an unexpanded star, and the star's columns are unknown anyway."""
    for order in list(tree.find_all(exp.Order)):
        query = order.parent
        if not isinstance(query, exp.Query) or not any(
            isinstance(s, exp.Star) or (isinstance(s, exp.Column) and s.is_star)
            for s in query.selects
        ):
            continue
        for ordered in order.expressions:
            if is_position(ordered.this):
                ordered.set("this", exp.Null())
    return tree


# ---------------------------------------------------------------- names


def _resolve_sources(tree: exp.Expression, schema: Mapping) -> None:
    """Write every column by what it reads, not by the names the author chose.

    - a column of a base table: ``table.column`` with the table's real name;
    - a column of a CTE or derived table: the definition of that column (bottom-up, so through
      any number of CTEs): a plain column is the column it passes through, anything else is a
      column whose name is the rendered defining expression (``SUM(store_sales.ss_net_profit)``);
    - an ORDER BY key that names or numbers a select item: that item's expression.

    Every resolved column keeps, in its meta, which FROM-clause instance it reads (:data:`SOURCE`),
    so that ``d1.x = d2.x`` stays a join and ``a.p > b.p`` keeps its direction.
    """
    instance_of = {id(node): n for n, node in enumerate(tree.find_all(exp.Table, exp.Subquery))}
    # traverse_scope yields inner scopes (CTEs, derived tables, subqueries) before outer ones.
    for scope in traverse_scope(tree):
        order_keys = _order_alias_names(scope.expression)
        columns = list(scope.columns)
        order = scope.expression.args.get("order")
        if order is not None:  # names inside ORDER BY expressions sqlglot left to us
            known = {id(c) for c in columns}
            columns += [c for c in order.find_all(exp.Column) if id(c) not in known]
            _unqualify_misread_aliases(scope, order, schema)
        for column in columns:
            if column.meta.get(_RESOLVED) or id(column) in order_keys:
                continue
            _resolve_column(scope, column, instance_of, schema)
        _resolve_order_references(scope.expression)


def _unqualify_misread_aliases(scope: Scope, order: exp.Order, schema: Mapping) -> None:
    """``ORDER BY CASE WHEN alias = 0 ...`` over one table: qualify writes ``table.alias``
    though the table has no such column; the name is the select item's (made bare again)."""
    names = {item.alias_or_name for item in scope.expression.selects}
    for column in order.find_all(exp.Column):
        found = _find_source(scope, column.table) if column.table else None
        source = found[1] if found else None
        if (
            isinstance(source, exp.Table)
            and source.name in schema
            and column.name not in schema[source.name]
            and column.name in names
        ):
            column.set("table", None)


def _resolve_column(
    scope: Scope, column: exp.Column, instance_of: Mapping, schema: Mapping
) -> None:
    """Resolve one column of ``scope`` in place (see :func:`_resolve_sources`)."""
    # A bare column in a query with one source reads that source (qualify leaves it bare when
    # the source is behind ``SELECT *``).
    only_source = next(iter(scope.selected_sources)) if len(scope.selected_sources) == 1 else ""
    found = _find_source(scope, column.table or only_source)
    if found is None:
        return  # unknown alias: the name stays as written
    node, source = found
    if not column.table and isinstance(source, exp.Table) and source.name in schema:
        if column.name not in schema[source.name]:
            return  # not the one source's column: a select item's name (see ORDER BY)
    if isinstance(source, exp.Table):
        column.set("table", exp.to_identifier(source.name))
        replacement = column
    elif isinstance(source, Scope):
        replacement = _column_definition(source, column.name, schema) or exp.column(column.name)
        column.replace(replacement)
    else:
        return
    replacement.meta[SOURCE] = instance_of.get(id(node))
    replacement.meta[_RESOLVED] = True


def _order_alias_names(query: exp.Expression) -> set[int]:
    """The ORDER BY keys of ``query`` that are a bare name of a select item: an output name
    comes before a source's column of the same name, as in the engines. (Inside an ORDER BY
    expression a name is a source's column first.)"""
    order = query.args.get("order") if isinstance(query, exp.Query) else None
    if order is None:
        return set()
    names = {item.alias_or_name for item in query.selects}
    return {
        id(ordered.this)
        for ordered in order.expressions
        if isinstance(ordered.this, exp.Column)
        and not ordered.this.table
        and ordered.this.name in names
    }


def _find_source(scope: Scope, alias: str) -> tuple[exp.Expression, object] | None:
    """The FROM-clause node and source ``alias`` names, in ``scope`` or (correlated) outside."""
    while scope is not None:
        if alias in scope.selected_sources:
            return scope.selected_sources[alias]
        scope = scope.parent
    return None


def _column_definition(source: Scope, name: str, schema: Mapping) -> exp.Column | None:
    """The (already resolved) definition of column ``name`` of a CTE or derived table; through
    ``SELECT *`` the definition in the star's source."""
    # A set operation's columns are its leftmost member's.
    while isinstance(source.expression, exp.SetOperation) and source.set_operation_scopes:
        source = source.set_operation_scopes[0]
    for projection in source.expression.selects:
        if projection.alias_or_name != name:
            continue
        value = projection.unalias()
        if isinstance(value, exp.Column) and not value.is_star:
            return value.copy()
        name = render(placeholder_subqueries(value), throwaway=True)
        return exp.Column(this=exp.Identifier(this=name))
    if source.expression.is_star:
        for inner in source.sources.values():
            if isinstance(inner, Scope):
                found = _column_definition(inner, name, schema)
            elif isinstance(inner, exp.Table) and name in schema.get(inner.name, {}):
                found = exp.column(name, table=inner.name)
            else:
                found = None
            if found is not None:
                return found
    return None  # unknown: the name stays


def _resolve_order_references(query: exp.Expression) -> None:
    """``ORDER BY alias``, ``ORDER BY 2`` and an alias inside an ORDER BY expression
    (``CASE WHEN alias = 0 ...``) -> the select item's expression."""
    order = query.args.get("order") if isinstance(query, exp.Query) else None
    if order is None:
        return
    items = [item for item in query.selects if not isinstance(item.unalias(), exp.Star)]
    by_name = {item.alias_or_name: item.unalias() for item in items}
    for ordered in order.expressions:
        key = ordered.this
        if is_position(key):
            position = int(Decimal(key.this))
            selected = query.selects[position - 1] if 0 < position <= len(query.selects) else None
            if selected is not None and not isinstance(selected.unalias(), exp.Star):
                ordered.set("this", selected.unalias().copy())
            continue
        for column in list(key.find_all(exp.Column)):
            # qualify qualifies every column it resolves; a bare one names a select item.
            if not column.table and column.name in by_name and not column.meta.get(_RESOLVED):
                replacement = by_name[column.name].copy()
                if column is key:
                    ordered.set("this", replacement)
                else:
                    column.replace(replacement)


# ---------------------------------------------------------------- constants


def number_value(node: exp.Expression) -> Decimal | None:
    """The value of a numeric literal (possibly negated or in parentheses), or None."""
    if isinstance(node, exp.Paren):
        return number_value(node.this)
    if isinstance(node, exp.Neg):
        inner = number_value(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return Decimal(node.this)
        except InvalidOperation:
            return None
    return None


def canonical_number(value: Decimal) -> str:
    """``100.00`` -> ``100``, ``1.20`` -> ``1.2``, ``-5`` -> ``-5`` (never exponent notation)."""
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "0") else text


def _literal(value: Decimal) -> exp.Expression:
    text = canonical_number(value)
    if text.startswith("-"):
        return exp.Neg(this=exp.Literal.number(text[1:]))
    return exp.Literal.number(text)


def _replace(tree: exp.Expression, node: exp.Expression, new: exp.Expression) -> exp.Expression:
    """Replace ``node`` by ``new``; the (possibly new) root."""
    if node is tree:
        return new
    node.replace(new)
    return tree


def _fold_constants(tree: exp.Expression, dialect: str) -> exp.Expression:
    """All constant rules, in the order they depend on each other."""
    tree = _fold_numbers(_drop_numeric_casts(_writer_spellings(tree)))
    tree = _fold_constant_cases(tree)
    tree = _fold_dates(_date_calls(tree), dialect)
    tree = _drop_identity_operations(tree)
    tree = _uncast_date_literals(tree)
    tree = _normalize_intervals(tree)
    return _canonical_in_lists(tree)


def _writer_spellings(tree: exp.Expression) -> exp.Expression:
    """What sqlglot's writers add to keep DuckDB's meaning in another dialect, undone:
    ``TRY_CAST`` -> ``CAST``; ``a / NULLIF(b, 0)`` -> ``a / b`` (DuckDB's division by zero is
    NULL); ``STDDEV`` -> ``STDDEV_SAMP`` (the same function in every dialect we read);
    ``a || b || c`` and ``CONCAT(a, b, c)`` are one concatenation; and the flags sqlglot keeps
    for a dialect's semantics (safe division, zero-based SUBSTRING, NULL-safe CONCAT), which
    would make the token writer spell the guard out."""
    for node in reversed(list(tree.dfs())):
        if isinstance(node, exp.TryCast):
            tree = _replace(tree, node, exp.Cast(this=node.this, to=node.to))
        elif isinstance(node, exp.Stddev):
            tree = _replace(tree, node, exp.StddevSamp(this=node.this))
        elif isinstance(node, (exp.DPipe, exp.Concat)):
            parts = (
                node.expressions if isinstance(node, exp.Concat) else [node.this, node.expression]
            )
            flat = [_unguarded(p) for part in parts for p in _concat_parts(_unguarded(part))]
            tree = _replace(tree, node, exp.Concat(expressions=flat))
        elif isinstance(node, exp.Div):
            divisor = node.expression
            if isinstance(divisor, exp.Nullif) and number_value(divisor.expression) == 0:
                node.set("expression", divisor.this)
            node.set("safe", None)
            node.set("typed", None)
        elif isinstance(node, exp.Substring):
            node.set("zero_start", None)
    return tree


def _concat_parts(node: exp.Expression) -> list[exp.Expression]:
    return node.expressions if isinstance(node, exp.Concat) else [node]


def _unguarded(node: exp.Expression) -> exp.Expression:
    """``COALESCE(x, '')`` -> ``x`` inside a concatenation (a writer's NULL-safe spelling)."""
    fallback = node.expressions if isinstance(node, exp.Coalesce) else []
    if len(fallback) == 1 and isinstance(fallback[0], exp.Literal) and fallback[0].this == "":
        return _unguarded(node.this)
    return node


_COMPARISONS = {
    exp.EQ: lambda a, b: a == b,
    exp.NEQ: lambda a, b: a != b,
    exp.LT: lambda a, b: a < b,
    exp.LTE: lambda a, b: a <= b,
    exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b,
}


def _constant_truth(condition: exp.Expression) -> bool | None:
    """The value of a comparison of two numbers (``1 = 0``), or None."""
    compare = _COMPARISONS.get(type(condition))
    if compare is None:
        return None
    left, right = number_value(condition.this), number_value(condition.expression)
    return None if left is None or right is None else compare(left, right)


def _fold_constant_cases(tree: exp.Expression) -> exp.Expression:
    """``CASE WHEN 1 = 0 THEN 1 ELSE 1 END`` -> ``1``: a CASE whose conditions compare numbers
    (Snowflake's writer guards SUBSTRING positions so)."""
    for case in list(tree.find_all(exp.Case)):
        if case.this is not None:
            continue
        result = case.args.get("default") or exp.Null()
        for branch in case.args.get("ifs") or []:
            truth = _constant_truth(branch.this)
            if truth is None:
                result = None
                break
            if truth:
                result = branch.args["true"]
                break
        if result is not None:
            tree = _replace(tree, case, result)
    return tree


def _drop_numeric_casts(tree: exp.Expression) -> exp.Expression:
    """``CAST(x AS DOUBLE)`` -> ``x``: a conversion between number types changes no feature, and
    writers add them (DuckDB's ``/`` divides as floats; its PostgreSQL spelling casts)."""
    for cast in list(tree.find_all(exp.Cast)):
        if cast.to.this in exp.DataType.NUMERIC_TYPES:
            tree = _replace(tree, cast, cast.this)
    return tree


def _fold_numbers(tree: exp.Expression) -> exp.Expression:
    """Write numbers canonically and replace arithmetic on them by its value, innermost first."""
    operations = {
        exp.Add: lambda a, b: a + b,
        exp.Sub: lambda a, b: a - b,
        exp.Mul: lambda a, b: a * b,
        exp.Div: lambda a, b: a / b,
    }
    # Children come after their parent in pre-order, so reversed pre-order is bottom-up.
    for node in reversed(list(tree.dfs())):
        value = None
        operation = operations.get(type(node))
        if operation is not None:
            left, right = number_value(node.this), number_value(node.expression)
            if left is not None and right is not None:
                try:
                    value = operation(left, right)
                except ArithmeticError:  # division by zero and friends stay as written
                    value = None
        elif isinstance(node, (exp.Neg, exp.Paren)):
            value = number_value(node)
        elif isinstance(node, exp.Literal) and not node.is_string:
            value = number_value(node)  # 100.00 -> 100
        if value is not None:
            tree = _replace(tree, node, _literal(value))
    return tree


_DATE_TYPES = {exp.DataType.Type.DATE, exp.DataType.Type.TIMESTAMP, exp.DataType.Type.DATETIME}

#: sqlglot's nodes for ``DATE_ADD(d, n, unit)`` and friends, by the sign they add with.
_DATE_ADD_NODES = tuple(
    getattr(exp, name)
    for name in ("DateAdd", "TsOrDsAdd", "DatetimeAdd", "TimestampAdd")
    if hasattr(exp, name)
)
_DATE_SUB_NODES = tuple(
    getattr(exp, name) for name in ("DateSub", "DatetimeSub", "TimestampSub") if hasattr(exp, name)
)


def _date_value(node: exp.Expression) -> dt.date | None:
    """The date (or timestamp) an ISO date literal holds: ``'2000-08-23'``, ``DATE '...'``,
    ``CAST('...' AS TIMESTAMP)``; None for anything else."""
    if isinstance(node, exp.Cast) and node.to.this in _DATE_TYPES:
        node = node.this
    if not (isinstance(node, exp.Literal) and node.is_string):
        return None
    text = node.this.strip()
    try:
        return dt.date.fromisoformat(text) if len(text) == 10 else dt.datetime.fromisoformat(text)
    except ValueError:
        return None


def _is_typed_date(node: exp.Expression) -> bool:
    return isinstance(node, exp.Cast) and node.to.this == exp.DataType.Type.DATE


def _interval_parts(node: exp.Expression) -> tuple[Decimal, str] | None:
    """``INTERVAL 14 DAY`` / ``INTERVAL '14 days'`` -> (14, "DAY")."""
    if not isinstance(node, exp.Interval):
        return None
    unit = node.args.get("unit")
    amount = node.this
    if isinstance(amount, exp.Literal):
        text = amount.this.strip()
        if unit is None and " " in text:  # ``INTERVAL '14 days'`` as sqlglot sometimes keeps it
            text, unit_text = text.split(None, 1)
            unit = exp.var(unit_text)
        try:
            value = Decimal(text)
        except InvalidOperation:
            return None
    else:
        value = number_value(amount)
    if value is None or unit is None or not unit.name:
        return None
    return value, unit.name


def _shift(value: dt.date, amount: Decimal, unit: str) -> dt.date | None:
    """``value`` moved by ``amount`` ``unit``s, months clamped to the month's last day."""
    unit = unit.upper().rstrip("S")
    if amount != amount.to_integral_value():
        return None
    n = int(amount)
    if unit in ("DAY", "WEEK"):
        return value + dt.timedelta(days=n * (7 if unit == "WEEK" else 1))
    if unit in ("MONTH", "QUARTER", "YEAR"):
        step = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}[unit]
        months = value.year * 12 + value.month - 1 + n * step
        year, month = divmod(months, 12)
        month += 1
        following = dt.date(year + month // 12, month % 12 + 1, 1)
        last_day = (following - dt.timedelta(days=1)).day
        return value.replace(year=year, month=month, day=min(value.day, last_day))
    if unit in ("HOUR", "MINUTE", "SECOND") and isinstance(value, dt.datetime):
        return value + dt.timedelta(**{unit.lower() + "s": n})
    return None


def _date_arithmetic(node: exp.Expression, dialect: str) -> dt.date | None:
    """The date a constant date expression computes, or None when ``node`` is not one."""
    sign = 1
    if isinstance(node, (exp.Add, exp.Sub)):
        start, step = node.this, node.expression
        sign = -1 if isinstance(node, exp.Sub) else 1
        if isinstance(node, exp.Add) and _date_value(step) is not None:
            start, step = step, start  # INTERVAL 14 DAY + DATE '2000-08-23'
        parts = _interval_parts(step)
        if parts is None and _is_typed_date(start) and dialect in _DATE_PLUS_DAYS_DIALECTS:
            days = number_value(step)
            parts = None if days is None else (days, "DAY")
    elif isinstance(node, (*_DATE_ADD_NODES, *_DATE_SUB_NODES)):
        start, step = node.this, node.expression
        sign = -1 if isinstance(node, _DATE_SUB_NODES) else 1
        parts = _interval_parts(step)
        if parts is None:
            amount = number_value(step)
            if amount is None and isinstance(step, exp.Literal):  # MySQL reads ``'14'``
                try:
                    amount = Decimal(step.this)
                except InvalidOperation:
                    amount = None
            unit = node.args.get("unit")
            parts = None if amount is None else (amount, unit.name if unit else "DAY")
    else:
        return None
    value = _date_value(start)
    if value is None or parts is None:
        return None
    amount, unit = parts
    try:
        return _shift(value, sign * amount, unit)
    except (OverflowError, ValueError):  # past year 9999 or before year 1: left as written
        return None


def _date_calls(tree: exp.Expression) -> exp.Expression:
    """Date functions in the forms the date rules read: ``DATE('2000-08-23')`` and
    ``TO_DATE('2000-08-23')`` (no format) -> ``CAST('2000-08-23' AS DATE)``;
    ``DATEADD(day, 14, d)`` where the dialect read knows no DATEADD (DuckDB reads it as an
    unknown function) -> ``DATE_ADD(d, 14, day)``, as T-SQL and Snowflake mean it."""
    for node in list(tree.find_all(exp.Date, exp.TsOrDsToDate, exp.Anonymous)):
        if isinstance(node, exp.Anonymous):
            arguments = node.expressions
            if node.name.upper() != "DATEADD" or len(arguments) != 3:
                continue
            unit, amount, start = arguments
            new = exp.DateAdd(this=start, expression=amount, unit=exp.var(unit.name.upper()))
        elif isinstance(node.this, exp.Literal) and not node.args.get("format"):
            new = exp.Cast(this=node.this, to=exp.DataType.build("DATE"))
        else:
            continue
        tree = _replace(tree, node, new)
    return tree


def _fold_dates(tree: exp.Expression, dialect: str) -> exp.Expression:
    """``DATE '2000-08-23' + INTERVAL 14 DAY`` (and every spelling of it) -> ``'2000-09-06'``."""
    for node in reversed(list(tree.dfs())):
        value = _date_arithmetic(node, dialect)
        if value is None:
            continue
        text = value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
        tree = _replace(tree, node, exp.Literal.string(text))
    return tree


def _drop_identity_operations(tree: exp.Expression) -> exp.Expression:
    """``x * 1``, ``1 * x``, ``x / 1``, ``x + 0``, ``0 + x``, ``x - 0`` -> ``x``; then
    parentheses around a single column, literal or call, which group nothing."""
    for node in reversed(list(tree.dfs())):
        kept = None
        left = number_value(node.this) if isinstance(node, exp.Binary) else None
        right = number_value(node.expression) if isinstance(node, exp.Binary) else None
        if isinstance(node, exp.Mul):
            kept = node.this if right == 1 else node.expression if left == 1 else None
        elif isinstance(node, exp.Div) and right == 1:
            kept = node.this
        elif isinstance(node, exp.Add):
            kept = node.this if right == 0 else node.expression if left == 0 else None
        elif isinstance(node, exp.Sub) and right == 0:
            kept = node.this
        elif isinstance(node, exp.Paren) and isinstance(
            node.this, (exp.Column, exp.Literal, exp.Func, exp.Paren)
        ):
            kept = node.this
        if kept is not None:
            tree = _replace(tree, node, kept)
    return tree


def _uncast_date_literals(tree: exp.Expression) -> exp.Expression:
    """``CAST('2000-01-27' AS DATE)`` and ``DATE '2000-01-27'`` -> ``'2000-01-27'``: the
    engines compare a date column with the plain string the same way."""
    for cast in list(tree.find_all(exp.Cast)):
        literal = cast.this
        if isinstance(literal, exp.Literal) and literal.is_string and cast.to.this in _DATE_TYPES:
            tree = _replace(tree, cast, literal)
    return tree


def _normalize_intervals(tree: exp.Expression) -> exp.Expression:
    """``INTERVAL '30 days'``, ``INTERVAL 30 DAY`` -> ``INTERVAL '30' DAY``."""
    for interval in tree.find_all(exp.Interval):
        parts = _interval_parts(interval)
        if parts is None:
            continue
        amount, unit = parts
        interval.set("this", exp.Literal.string(canonical_number(amount)))
        unit = unit.upper()
        interval.set("unit", exp.var(unit[:-1] if unit.endswith("S") else unit))
    return tree


def _canonical_in_lists(tree: exp.Expression) -> exp.Expression:
    """``x IN ('TN', 'TN')`` -> ``x = 'TN'``; ``x NOT IN (5)`` -> ``x <> 5``; other IN lists
    lose their repeated items."""
    for node in list(tree.find_all(exp.In)):
        if node.args.get("query") is not None or not node.expressions:
            continue
        unique = list({render(item): item for item in node.expressions}.values())
        if len(unique) > 1:
            node.set("expressions", unique)
            continue
        negated = isinstance(node.parent, exp.Not)
        comparison = (exp.NEQ if negated else exp.EQ)(this=node.this, expression=unique[0])
        tree = _replace(tree, node.parent if negated else node, comparison)
    return tree
