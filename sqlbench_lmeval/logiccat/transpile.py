"""MySQL gold -> SQLite, through sqlglot's tree: sqlglot does most of the work, and what it gets
wrong or leaves out between the two dialects is closed by rewrites of the tree before generation,
never by editing SQL text; with the database's column types (:func:`apply_coercions`), MySQL's
implicit coercions are made explicit and reported (the rewrites:
docs/logiccat.md#how-the-copy-is-made, "Gold").

>>> import sqlite3
>>> from sqlbench_lmeval.logiccat.mysql_functions import install
>>> conn = sqlite3.connect(":memory:")
>>> install(conn)
>>> sql = mysql_to_sqlite("SELECT 7.5 % 2, LEFT('LogicCat', 5), CAST(2.5 AS SIGNED)")
>>> conn.execute(sql).fetchone()  # MySQL's answers: % keeps fractions, CAST rounds
(1.5, 'Logic', 3)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import sqlglot
from sqlglot import exp


class TranspileError(ValueError):
    """The MySQL gold cannot be turned into one SQLite statement."""


# ---------------------------------------------------------------------------------------------
# Function rewrites: MySQL nodes -> calls SQLite has, or MySQL-named calls we register
# ---------------------------------------------------------------------------------------------
# (sqlglotc's generator classes are compiled and cannot be subclassed, so every fix is a tree
# rewrite before plain sqlglot SQLite generation.)

_DATE_WRAPPERS = (exp.TsOrDsToDate, exp.TsOrDsToTimestamp, exp.TsOrDsToDatetime)


def _arg(node: exp.Expression, key: str = "this") -> exp.Expression | None:
    """An argument without the DATE()/TIMESTAMP() wrapping the MySQL parser adds."""
    value = node.args.get(key)
    while isinstance(value, _DATE_WRAPPERS) and not value.args.get("format"):
        value = value.this
    return value


def _anonymous(name: str, *args: exp.Expression | None) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=[a for a in args if a is not None])


def _call(name: str, *keys: str) -> Callable[[exp.Expression], exp.Expression]:
    def rewrite(node: exp.Expression) -> exp.Expression:
        return _anonymous(name, *(_arg(node, key) for key in keys))

    return rewrite


def _unit_literal(node: exp.Expression, default: str = "DAY") -> exp.Literal:
    unit = node.args.get("unit")
    return exp.Literal.string((unit.name if unit is not None else default).upper())


# Python strftime specifiers (sqlglot's internal form) -> MySQL's. Written out instead of using
# sqlglot's inverse trie, which leaves '%H:%M' unconverted in sqlglot 30.30.
_STRFTIME_TO_MYSQL = {
    "%M": "%i", "%S": "%s", "%B": "%M", "%-m": "%c", "%-d": "%e", "%I": "%h", "%A": "%W",
    "%-H": "%k", "%-I": "%l", "%G": "%x", "%W": "%u", "%-M": "%i", "%-S": "%s",
}  # fmt: skip


def strftime_to_mysql(text: str) -> str:
    """A strftime format string as MySQL's DATE_FORMAT/STR_TO_DATE format."""
    out: list[str] = []
    index = 0
    while index < len(text):
        if text[index] == "%" and index + 1 < len(text):
            width = 3 if text[index + 1] == "-" and index + 2 < len(text) else 2
            spec = text[index : index + width]
            out.append(_STRFTIME_TO_MYSQL.get(spec, spec))
            index += width
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


def _mysql_time_format(node: exp.Expression) -> exp.Expression:
    """The MySQL format string of a DATE_FORMAT/STR_TO_DATE node (sqlglot holds strftime's)."""
    fmt = node.args.get("format")
    if isinstance(fmt, exp.Literal):
        return exp.Literal.string(strftime_to_mysql(fmt.this))
    return fmt if fmt is not None else exp.Null()


def _time_to_str(node: exp.Expression) -> exp.Expression:
    return _anonymous("DATE_FORMAT", _arg(node), _mysql_time_format(node))


def _str_to_time(node: exp.Expression) -> exp.Expression:
    return _anonymous("STR_TO_DATE", node.this, _mysql_time_format(node))


def _datetime_add(node: exp.Expression) -> exp.Expression:
    subtract = isinstance(node, (exp.DateSub, exp.DatetimeSub, exp.TimestampSub))
    amount = node.expression
    unit_source = node
    if isinstance(amount, exp.Interval):
        amount, unit_source = amount.this, amount
    name = "DATE_SUB" if subtract else "DATE_ADD"
    return _anonymous(name, _arg(node), amount, _unit_literal(unit_source))


def _timestamp_diff(node: exp.Expression) -> exp.Expression:
    # sqlglot keeps TIMESTAMPDIFF(unit, start, end) as this=end, expression=start.
    return _anonymous("TIMESTAMPDIFF", _unit_literal(node), node.expression, node.this)


def _trunc(node: exp.Expression) -> exp.Expression:
    decimals = node.args.get("decimals")
    if decimals is None:
        return exp.cast(node.this, "INTEGER")
    return _anonymous("TRUNCATE", node.this, decimals)


_DECIMAL = {exp.DataType.Type.DECIMAL, exp.DataType.Type.UDECIMAL}
_INTEGER = {exp.DataType.Type.BIGINT, exp.DataType.Type.INT, exp.DataType.Type.UBIGINT,
            exp.DataType.Type.UINT}  # fmt: skip


_STRING_FUNCTIONS = (
    exp.Substring, exp.SubstringIndex, exp.Concat, exp.ConcatWs, exp.Left, exp.Right,
    exp.Trim, exp.Upper, exp.Lower, exp.Replace, exp.TimeToStr, exp.GroupConcat,
)  # fmt: skip


def _is_string_valued(node: exp.Expression) -> bool:
    """A string literal or a string function: MySQL truncates these when casting to integer."""
    if isinstance(node, exp.Literal):
        return node.is_string
    return isinstance(node, _STRING_FUNCTIONS) or (
        isinstance(node, exp.Anonymous) and node.name.upper() in ("SUBSTRING_INDEX", "CONCAT")
    )


def _cast(node: exp.Expression) -> exp.Expression:
    target = node.args["to"]
    if target.this in _DECIMAL:
        params = target.expressions
        scale = params[1].this if len(params) > 1 else exp.Literal.number(0)
        # MySQL's CAST to DECIMAL(p, s) rounds to s places.
        return exp.Round(this=exp.cast(node.this, "REAL"), decimals=scale)
    if target.this in _INTEGER:
        if _is_string_valued(node.this):
            return exp.cast(node.this, "INTEGER")
        # MySQL rounds a number cast to SIGNED/UNSIGNED; SQLite truncates.
        return exp.cast(exp.Round(this=node.this), "INTEGER")
    return node


def _length(node: exp.Expression) -> exp.Expression:
    """MySQL LENGTH() counts bytes (UTF-8); SQLite's length() counts characters."""
    if node.args.get("binary"):
        return exp.Length(this=exp.cast(node.this, "BLOB"))
    return node


def _left_right(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Left):
        return exp.Substring(this=node.this, start=exp.Literal.number(1), length=node.expression)
    return exp.Substring(this=node.this, start=exp.Neg(this=exp.Paren(this=node.expression)))


def _atan(node: exp.Expression) -> exp.Expression:
    if node.args.get("expression") is not None:
        return _anonymous("ATAN2", node.this, node.expression)
    return node


_EXTRACT_UNITS = {"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "QUARTER", "WEEK",
                  "MICROSECOND"}  # fmt: skip


def _extract(node: exp.Expression) -> exp.Expression:
    unit = node.this.name.upper()
    value = node.expression
    if unit in _EXTRACT_UNITS:
        return _anonymous(unit, value)
    if unit == "YEAR_MONTH":
        year = exp.Mul(this=_anonymous("YEAR", value), expression=exp.Literal.number(100))
        return exp.Paren(this=exp.Add(this=year, expression=_anonymous("MONTH", value.copy())))
    return node


def _interval_arithmetic(node: exp.Expression) -> exp.Expression:
    """``d + INTERVAL n unit`` / ``d - INTERVAL n unit`` as DATE_ADD/DATE_SUB."""
    interval = node.expression
    if isinstance(interval, exp.Interval):
        name = "DATE_ADD" if isinstance(node, exp.Add) else "DATE_SUB"
        return _anonymous(name, node.this, interval.this, _unit_literal(interval))
    if isinstance(node, exp.Add) and isinstance(node.this, exp.Interval):
        interval = node.this
        return _anonymous("DATE_ADD", node.expression, interval.this, _unit_literal(interval))
    return node


def _xor(node: exp.Expression) -> exp.Expression:
    """MySQL's ``a ^ b`` (bitwise XOR) as ``(a | b) - (a & b)``."""
    left, right = node.this, node.expression
    both = exp.BitwiseAnd(this=exp.Paren(this=left.copy()), expression=exp.Paren(this=right.copy()))
    either = exp.BitwiseOr(this=exp.Paren(this=left), expression=exp.Paren(this=right))
    return exp.Paren(this=exp.Sub(this=exp.Paren(this=either), expression=exp.Paren(this=both)))


def _concat(node: exp.Expression) -> exp.Expression:
    return _anonymous("MYSQL_CONCAT", *node.expressions)


FUNCTION_REWRITES: dict[type, Callable[[exp.Expression], exp.Expression]] = {
    exp.Year: _call("YEAR", "this"),
    exp.Month: _call("MONTH", "this"),
    exp.Day: _call("DAY", "this"),
    exp.DayOfMonth: _call("DAYOFMONTH", "this"),
    exp.DayOfWeek: _call("DAYOFWEEK", "this"),
    exp.DayOfYear: _call("DAYOFYEAR", "this"),
    exp.Quarter: _call("QUARTER", "this"),
    exp.Hour: _call("HOUR", "this"),
    exp.Minute: _call("MINUTE", "this"),
    exp.Second: _call("SECOND", "this"),
    exp.Week: _call("WEEK", "this", "mode"),
    exp.WeekOfYear: _call("WEEKOFYEAR", "this"),
    exp.Dayname: _call("DAYNAME", "this"),
    exp.LastDay: _call("LAST_DAY", "this"),
    exp.DateAdd: _datetime_add,
    exp.DateSub: _datetime_add,
    exp.DatetimeAdd: _datetime_add,
    exp.DatetimeSub: _datetime_add,
    exp.TimestampAdd: _datetime_add,
    exp.TimestampSub: _datetime_add,
    exp.TimestampDiff: _timestamp_diff,
    exp.DateDiff: _call("DATEDIFF", "this", "expression"),
    exp.TimeToStr: _time_to_str,
    exp.StrToTime: _str_to_time,
    exp.StrToDate: _str_to_time,
    exp.UnixToTime: _call("FROM_UNIXTIME", "this"),
    exp.Timestamp: _call("TIMESTAMP", "this", "expression"),
    exp.Trunc: _trunc,
    exp.NumberToStr: _call("MYSQL_FORMAT", "this", "format"),
    exp.StddevPop: _call("STDDEV_POP", "this"),
    exp.StddevSamp: _call("STDDEV_SAMP", "this"),
    exp.Stddev: _call("STDDEV_POP", "this"),
    exp.VariancePop: _call("VAR_POP", "this"),
    exp.Variance: _call("VAR_SAMP", "this"),
    exp.Rand: _call("RAND", "this"),
    exp.Left: _left_right,
    exp.Right: _left_right,
    exp.Atan: _atan,
    exp.Extract: _extract,
    exp.Cast: _cast,
    exp.Add: _interval_arithmetic,
    exp.Sub: _interval_arithmetic,
    exp.Mod: _call("MOD", "this", "expression"),
    exp.Length: _length,
    exp.BitwiseXor: _xor,
    exp.Concat: _concat,
    exp.RegexpReplace: _call("REGEXP_REPLACE", "this", "expression", "replacement"),
    exp.RegexpExtract: _call("REGEXP_SUBSTR", "this", "expression"),
}


def _rewrite_functions(tree: exp.Expression) -> exp.Expression:
    # Children first (reversed breadth-first order), so a rewritten node holds rewritten args.
    for node in reversed(list(tree.walk(bfs=True))):
        rewrite = FUNCTION_REWRITES.get(type(node))
        if rewrite is None:
            continue
        new = rewrite(node)
        if new is not node:
            if node is tree:
                tree = new
            else:
                node.replace(new)
    return tree


# ---------------------------------------------------------------------------------------------
# Structural rewrites
# ---------------------------------------------------------------------------------------------

_RENAMED_CALLS = {"TIMEDIFF": "MYSQL_TIMEDIFF"}
_COMPARISONS = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.NEQ)


def _drop_dual(tree: exp.Expression) -> exp.Expression:
    for select in tree.find_all(exp.Select):
        source = select.args.get("from_")
        if isinstance(source, exp.From) and isinstance(source.this, exp.Table):
            if source.this.name.lower() == "dual" and not source.this.db:
                select.set("from_", None)
    return tree


def drop_database_qualifiers(tree: exp.Expression, database: str | None) -> list[str]:
    """``db.table`` -> ``table`` when ``db`` is the item's own database (each LogicCat database
    is one SQLite file); returns the other databases named (cross-database queries)."""
    others = []
    for node in tree.find_all(exp.Table, exp.Column):
        qualifier = node.args.get("db")
        if qualifier is None or (isinstance(node, exp.Column) and node.args.get("table") is None):
            continue
        if database is None or qualifier.name.lower() == database.lower():
            node.set("db", None)
            node.set("catalog", None)
        else:
            others.append(qualifier.name)
    return others


def _null_user_variables(tree: exp.Expression) -> exp.Expression:
    """An unset MySQL user variable (``@x``) is NULL."""
    for node in list(tree.find_all(exp.Parameter)):
        node.replace(exp.Null())
    return tree


def _subquery_value_alias(query: exp.Expression) -> exp.Expression | None:
    """The subquery with its single output column aliased ``__v``, or None if not a Select."""
    if not isinstance(query, exp.Select) or len(query.expressions) != 1:
        return None
    copy = query.copy()
    only = copy.expressions[0]
    inner = only.this if isinstance(only, exp.Alias) else only
    copy.set("expressions", [exp.alias_(inner, "__v", quoted=False)])
    return copy


def _rewrite_all_any(tree: exp.Expression) -> exp.Expression:
    """``x op ALL (q)`` -> NOT EXISTS(a row of q failing op, or NULL); ANY/SOME -> EXISTS."""

    def rewrite(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, _COMPARISONS):
            return node
        quantified = node.expression
        if not isinstance(quantified, (exp.All, exp.Any)):
            return node
        query = quantified.this
        if isinstance(query, exp.Subquery):
            query = query.this
        subquery = _subquery_value_alias(query)
        if subquery is None:
            return node
        value = exp.column("__v", table="__q")
        test = node.__class__(this=node.this.copy(), expression=value)
        source = exp.Subquery(this=subquery, alias=exp.TableAlias(this=exp.to_identifier("__q")))
        if isinstance(quantified, exp.All):
            condition = exp.or_(exp.not_(test), exp.Is(this=value.copy(), expression=exp.Null()))
            return exp.not_(exp.Exists(this=exp.select("1").from_(source).where(condition)))
        return exp.Exists(this=exp.select("1").from_(source).where(test))

    return tree.transform(rewrite)


def own_scope_nodes(node: exp.Expression):
    """The nodes of ``node`` outside nested subqueries (one query level)."""
    yield node
    for child in node.iter_expressions():
        if isinstance(child, (exp.Subquery, exp.Select, exp.Union, exp.Except, exp.Intersect)):
            continue
        yield from own_scope_nodes(child)


def has_aggregate(node: exp.Expression | None) -> bool:
    """Whether ``node`` aggregates at its own query level (window functions do not count)."""
    if node is None:
        return False
    for found in own_scope_nodes(node):
        if isinstance(found, exp.AggFunc) and not isinstance(found.parent, exp.Window):
            return True
    return False


def _inline_aliases(node: exp.Expression, aliases: dict[str, exp.Expression]) -> exp.Expression:
    """A reference to a select alias replaced by the aliased expression."""
    if isinstance(node, exp.Column) and not node.table and node.name in aliases:
        return exp.Paren(this=aliases[node.name].copy())
    return node


def _having_as_where(tree: exp.Expression) -> exp.Expression:
    """MySQL allows HAVING as a row filter (aliases visible) in a non-aggregate query."""
    for select in list(tree.find_all(exp.Select)):
        having = select.args.get("having")
        if having is None or select.args.get("group"):
            continue
        if has_aggregate(having.this) or any(has_aggregate(e) for e in select.expressions):
            continue  # a one-group aggregate query: SQLite >= 3.39 runs this as MySQL does
        aliases = {e.alias: e.this for e in select.expressions if isinstance(e, exp.Alias)}
        condition = having.this.copy().transform(_inline_aliases, aliases)
        select.set("having", None)
        select.where(condition, copy=False)
    return tree


def _rename_self_reading_ctes(tree: exp.Expression) -> exp.Expression:
    """``WITH t AS (SELECT ... FROM t)``: MySQL reads the table t inside; rename the CTE."""
    for with_ in list(tree.find_all(exp.With)):
        if with_.args.get("recursive"):
            continue
        for cte in with_.expressions:
            name = cte.alias_or_name
            inner = {table.name.lower() for table in cte.this.find_all(exp.Table)}
            if name.lower() not in inner:
                continue
            new_name = f"{name}__cte"
            cte.set("alias", exp.TableAlias(this=exp.to_identifier(new_name)))
            scope = with_.parent
            later = [c.this for c in with_.expressions[with_.expressions.index(cte) + 1 :]]
            main = [scope.args.get(k) for k in scope.args if k != "with_"]
            for part in later + [m for m in main if isinstance(m, exp.Expression)]:
                for table in part.find_all(exp.Table):
                    if table.name.lower() == name.lower() and not table.db:
                        table.set("this", exp.to_identifier(new_name))
                for column in part.find_all(exp.Column):
                    if column.table.lower() == name.lower():
                        column.set("table", exp.to_identifier(new_name))
    return tree


def _rename_calls(tree: exp.Expression) -> exp.Expression:
    for call in tree.find_all(exp.Anonymous):
        new_name = _RENAMED_CALLS.get(call.name.upper())
        if new_name:
            call.set("this", new_name)
    return tree


REWRITES: tuple[Callable[[exp.Expression], exp.Expression], ...] = (
    _drop_dual,
    _null_user_variables,
    _rewrite_all_any,
    _having_as_where,
    _rename_self_reading_ctes,
    _rename_calls,
    _rewrite_functions,
)


# ---------------------------------------------------------------------------------------------
# Type coercions (need the database's column types)
# ---------------------------------------------------------------------------------------------

OTHER_DATABASE = "reads database"  # the note rewrite_tree gives for db.table of another db

ColumnTypes = Mapping[str, frozenset[str]]
"""Lower-case column name -> the declared SQLite types of that name across the tables."""

_NUMERIC = frozenset({"INTEGER", "REAL"})
_DATETIME = frozenset({"DATETIME", "TIMESTAMP"})
_TEMPORAL = frozenset({"DATETIME", "TIMESTAMP", "DATE", "TIME"})
_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_NUMBER_TEXT = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*")
_NUMERIC_PREFIX = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _column_kinds(node: exp.Expression, types: ColumnTypes) -> frozenset[str]:
    if isinstance(node, exp.Column):
        return types.get(node.name.lower(), frozenset())
    return frozenset()


def _is_number(node: exp.Expression) -> bool:
    if isinstance(node, exp.Neg):
        node = node.this
    return isinstance(node, exp.Literal) and not node.is_string


def _unwrap(node: exp.Expression) -> exp.Expression:
    while isinstance(node, (exp.Paren, exp.Window)):
        node = node.this
    return node


def _is_temporal(node: exp.Expression, types: ColumnTypes) -> bool:
    """A DATE/DATETIME/TIMESTAMP/TIME column, or MIN/MAX/LAG/LEAD/... of one."""
    node = _unwrap(node)
    if isinstance(node, (exp.Max, exp.Min, exp.Lag, exp.Lead, exp.FirstValue, exp.LastValue)):
        return _is_temporal(node.this, types)
    kinds = _column_kinds(node, types)
    return bool(kinds) and kinds <= _TEMPORAL


_NUMERIC_AGGREGATES = (exp.Sum, exp.Avg, exp.Count, exp.StddevPop, exp.StddevSamp, exp.Stddev,
                       exp.Variance, exp.VariancePop)  # fmt: skip
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.IntDiv)


def _is_numeric(node: exp.Expression, types: ColumnTypes) -> bool:
    """Whether ``node`` surely yields a number (literal, number column, arithmetic, SUM...)."""
    node = _unwrap(node)
    if isinstance(node, exp.Neg):
        node = node.this
    if isinstance(node, exp.Literal):
        return not node.is_string
    if isinstance(node, (*_ARITHMETIC, *_NUMERIC_AGGREGATES)):
        return True
    if isinstance(node, (exp.Max, exp.Min)):
        return _is_numeric(node.this, types)
    kinds = _column_kinds(node, types)
    return bool(kinds) and kinds <= _NUMERIC


def mysql_number_prefix(text: str) -> int | float:
    """MySQL's number for a string: its numeric prefix, 0 if there is none."""
    found = _NUMERIC_PREFIX.match(text)
    if not found:
        return 0
    number = float(found.group(0))
    return int(number) if number.is_integer() and "e" not in found.group(0).lower() else number


def _operands(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Between):
        return [node.args["low"], node.args["high"]]
    if isinstance(node, exp.In):
        return list(node.expressions)
    return [node.expression]


def apply_coercions(tree: exp.Expression, types: ColumnTypes) -> list[str]:
    """Make MySQL's implicit coercions explicit (see the module docstring), in place; returns
    what was rewritten."""
    done: list[str] = []
    for node in list(tree.find_all(*_COMPARISONS, exp.Between, exp.In)):
        pairs = [(node.this, other) for other in _operands(node)]
        if isinstance(node, _COMPARISONS):
            pairs.append((node.expression, node.this))
        for column, other in pairs:
            kinds = _column_kinds(column, types)
            if not kinds or column.parent is not node:
                continue
            if kinds <= {"TEXT"} and _is_numeric(other, types):
                column.replace(exp.cast(column.copy(), "REAL"))
                done.append(f"text column {column.name} compared with a number")
            elif kinds <= _NUMERIC and isinstance(other, exp.Literal) and other.is_string:
                if not _NUMBER_TEXT.fullmatch(other.this):
                    other.replace(exp.Literal.number(mysql_number_prefix(other.this)))
                    done.append(f"number column {column.name} compared with text {other.this!r}")
            elif kinds <= _DATETIME and isinstance(other, exp.Literal) and other.is_string:
                if _DATE_ONLY.fullmatch(other.this.strip()):
                    other.replace(exp.Literal.string(other.this.strip() + " 00:00:00"))
                    done.append(f"datetime column {column.name} compared with a date")
    # Temporal values in arithmetic are numbers in MySQL (2023-01-02 10:00:00 -> 20230102100000).
    for node in list(tree.find_all(*_ARITHMETIC, exp.Sum, exp.Avg)):
        keys = ("this", "expression") if isinstance(node, _ARITHMETIC) else ("this",)
        if any(isinstance(node.args.get(k), exp.Interval) for k in keys):
            continue  # date +/- INTERVAL: date arithmetic, rewritten to DATE_ADD/DATE_SUB
        for key in keys:
            operand = node.args.get(key)
            if operand is not None and _is_temporal(operand, types):
                node.set(key, _anonymous("MYSQL_TEMPORAL_NUMBER", operand))
                done.append("temporal value used as a number")
    return done


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def parse_mysql(sql: str) -> list[exp.Expression]:
    """The statements of a MySQL text (empty statements dropped)."""
    return [tree for tree in sqlglot.parse(sql, read="mysql") if tree is not None]


def rewrite_tree(
    tree: exp.Expression,
    types: ColumnTypes | None = None,
    database: str | None = None,
    *,
    copy: bool = True,
) -> tuple[exp.Expression, list[str]]:
    """A rewritten copy of a MySQL statement tree, ready for SQLite generation, and the
    MySQL-only semantics it relies on (coercions made explicit, other databases named).

    ``database`` is the item's own database name: qualifiers naming it are dropped (None
    drops every qualifier). ``types`` enables :func:`apply_coercions`. ``copy=False`` rewrites
    ``tree`` itself (for callers that parsed it and need it no more).
    """
    if copy:
        tree = tree.copy()
    others = drop_database_qualifiers(tree, database)
    notes = [f"{OTHER_DATABASE} {name}" for name in others]
    notes += apply_coercions(tree, types) if types else []
    for rewrite in REWRITES:
        tree = rewrite(tree)
    return tree, notes


def generate(tree: exp.Expression) -> str:
    """SQLite text of a rewritten tree."""
    return tree.sql(dialect="sqlite", unsupported_level=sqlglot.ErrorLevel.IGNORE, copy=False)


def tree_to_sqlite(tree: exp.Expression, types: ColumnTypes | None = None) -> str:
    """One MySQL statement tree as SQLite text (the tree itself is not changed)."""
    return generate(rewrite_tree(tree, types)[0])


def mysql_to_sqlite(sql: str, types: ColumnTypes | None = None) -> str:
    """A one-statement MySQL query as SQLite text; raises TranspileError otherwise."""
    try:
        trees = parse_mysql(sql)
    except sqlglot.errors.SqlglotError as error:
        raise TranspileError(f"sqlglot cannot parse it as MySQL: {error}") from None
    if len(trees) != 1:
        raise TranspileError(f"expected one statement, found {len(trees)}")
    return tree_to_sqlite(trees[0], types)
