"""A Navicat/mysqldump MySQL dump -> tables and rows in a SQLite database, through sqlglot's tree:
``CREATE TABLE`` rewritten into SQLite DDL, rows converted per column type (what is kept,
dropped and converted, and why: docs/logiccat.md#how-the-copy-is-made, "Data")."""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.tokens import TokenType

Type = exp.DataType.Type

_INTEGER_TYPES = {
    Type.BIT, Type.BOOLEAN, Type.TINYINT, Type.UTINYINT, Type.SMALLINT, Type.USMALLINT,
    Type.MEDIUMINT, Type.UMEDIUMINT, Type.INT, Type.UINT, Type.BIGINT, Type.UBIGINT, Type.YEAR,
}  # fmt: skip
_FLOAT32_TYPES = {Type.FLOAT}
_REAL_TYPES = {Type.DOUBLE, Type.UDOUBLE, Type.DECIMAL, Type.UDECIMAL, Type.BIGDECIMAL}
_TEXT_TYPES = {
    Type.CHAR, Type.VARCHAR, Type.NCHAR, Type.NVARCHAR, Type.TEXT, Type.TINYTEXT,
    Type.MEDIUMTEXT, Type.LONGTEXT, Type.ENUM, Type.SET, Type.JSON,
}  # fmt: skip
_TEMPORAL_TYPES = {
    Type.DATE: "DATE",
    Type.DATETIME: "DATETIME",
    Type.TIMESTAMP: "TIMESTAMP",
    Type.TIMESTAMPTZ: "TIMESTAMP",
    Type.TIME: "TIME",
}
_BLOB_TYPES = {
    Type.BLOB, Type.TINYBLOB, Type.MEDIUMBLOB, Type.LONGBLOB, Type.BINARY, Type.VARBINARY,
}  # fmt: skip
_GEOMETRY_TYPES = {Type.GEOMETRY, Type.POINT}


class DumpDialect(MySQL):
    """MySQL as sqlglot reads it, plus the POINT column type (unknown to sqlglot 30)."""

    class Tokenizer(MySQL.Tokenizer):
        KEYWORDS = {**MySQL.Tokenizer.KEYWORDS, "POINT": TokenType.POINT}


class DumpError(ValueError):
    """The dump contains something this converter cannot represent in SQLite."""


@dataclass(frozen=True)
class Column:
    """One column as created in SQLite."""

    name: str
    sqlite_type: str  # INTEGER, REAL, TEXT, DATE, DATETIME, TIMESTAMP, TIME, BLOB
    kind: str  # integer, float32, real, text, temporal, blob, point: how INSERT values convert
    comment: str | None = None
    constraints: tuple[str, ...] = ()  # SQLite text: NOT NULL, DEFAULT ..., CHECK (...)


@dataclass(frozen=True)
class Table:
    """A CREATE TABLE rewritten for SQLite."""

    name: str  # lower-cased
    columns: tuple[Column, ...]
    table_constraints: tuple[str, ...]  # PRIMARY KEY / FOREIGN KEY / CHECK, SQLite text
    comment: str | None = None

    @property
    def ddl(self) -> str:
        """CREATE TABLE text with the upstream comments kept as ``--`` comments."""
        return render_create_table(self)


@dataclass(frozen=True)
class LoadSummary:
    """What a dump put into the database."""

    tables: tuple[str, ...]
    views: tuple[str, ...]
    rows: int


def quote(name: str) -> str:
    """A SQLite identifier, always double-quoted."""
    return exp.to_identifier(name, quoted=True).sql("sqlite")


def _one_line(text: str) -> str:
    return " ".join(text.replace("\r", " ").replace("\n", " ").split())


def render_create_table(table: Table) -> str:
    """CREATE TABLE text; a comment follows its column's comma so the text stays valid SQL."""
    entries: list[tuple[str, str | None]] = []
    for column in table.columns:
        parts = [quote(column.name), column.sqlite_type, *column.constraints]
        entries.append((" ".join(parts), column.comment))
    entries.extend((constraint, None) for constraint in table.table_constraints)
    header = f"CREATE TABLE {quote(table.name)} ("
    if table.comment:
        header += f" -- {_one_line(table.comment)}"
    lines = [header]
    for index, (body, comment) in enumerate(entries):
        comma = "," if index < len(entries) - 1 else ""
        suffix = f" -- {_one_line(comment)}" if comment else ""
        lines.append(f"  {body}{comma}{suffix}")
    lines.append(")")
    return "\n".join(lines)


def _column_kind(data_type: exp.DataType) -> tuple[str, str]:
    """(SQLite type, value kind) of a MySQL column type."""
    this = data_type.this
    if this in _INTEGER_TYPES:
        return "INTEGER", "integer"
    if this in _FLOAT32_TYPES:
        return "REAL", "float32"
    if this in _REAL_TYPES:
        return "REAL", "real"
    if this in _TEXT_TYPES:
        return "TEXT COLLATE NOCASE", "text"
    if this in _TEMPORAL_TYPES:
        return _TEMPORAL_TYPES[this], "temporal"
    if this in _BLOB_TYPES:
        return "BLOB", "blob"
    if this in _GEOMETRY_TYPES:
        return "TEXT", "point"
    raise DumpError(f"unsupported MySQL column type {data_type.sql('mysql')}")


def _literal_default(value: exp.Expression) -> str | None:
    """A DEFAULT worth keeping: literals only (NULL and CURRENT_TIMESTAMP say nothing)."""
    if isinstance(value, exp.Literal) or (
        isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal)
    ):
        return f"DEFAULT {value.sql('sqlite')}"
    return None


def _column(definition: exp.ColumnDef) -> Column:
    if definition.kind is None:
        raise DumpError(f"column {definition.name} has no type")
    sqlite_type, kind = _column_kind(definition.kind)
    name = definition.name
    constraints: list[str] = []
    comment = None
    for constraint in definition.constraints:
        item = constraint.kind
        if isinstance(item, exp.NotNullColumnConstraint) and not item.args.get("allow_null"):
            constraints.append("NOT NULL")
        elif isinstance(item, exp.DefaultColumnConstraint):
            default = _literal_default(item.this)
            if default:
                constraints.append(default)
        elif isinstance(item, exp.CommentColumnConstraint):
            comment = item.this.name if isinstance(item.this, exp.Literal) else item.this.sql()
        elif isinstance(item, exp.PrimaryKeyColumnConstraint):
            constraints.append("PRIMARY KEY")
        elif isinstance(item, exp.CheckColumnConstraint):
            constraints.append(f"CHECK ({item.this.sql('sqlite')})")
        # AUTO_INCREMENT, ON UPDATE, COLLATE, CHARACTER SET, UNIQUE: not needed read-only.
    if definition.kind.this is Type.ENUM and definition.kind.expressions:
        allowed = ", ".join(value.sql("sqlite") for value in definition.kind.expressions)
        constraints.append(f"CHECK ({quote(name)} IN ({allowed}))")
    return Column(name, sqlite_type, kind, comment, tuple(constraints))


def _identifier_list(nodes: Iterable[exp.Expression]) -> str:
    return ", ".join(quote(node.name) for node in nodes)


def _table_constraint(node: exp.Expression) -> str | None:
    """PRIMARY KEY / FOREIGN KEY / CHECK as SQLite text; secondary indexes give None."""
    if isinstance(node, exp.PrimaryKey):
        return f"PRIMARY KEY ({_identifier_list(node.expressions)})"
    if isinstance(node, exp.Constraint):
        texts = [_table_constraint(inner) for inner in node.expressions]
        return " ".join(text for text in texts if text) or None
    if isinstance(node, exp.ForeignKey):
        reference = node.args["reference"].this
        target = reference.this.name.lower()
        columns = _identifier_list(reference.expressions)
        return (
            f"FOREIGN KEY ({_identifier_list(node.expressions)}) "
            f"REFERENCES {quote(target)} ({columns})"
        )
    if isinstance(node, exp.CheckColumnConstraint):
        return f"CHECK ({node.this.sql('sqlite')})"
    return None


def convert_create_table(create: exp.Create) -> Table:
    """The SQLite form of a MySQL CREATE TABLE tree."""
    schema = create.this
    if not isinstance(schema, exp.Schema):
        raise DumpError(f"CREATE TABLE without columns: {create.sql('mysql')[:80]}")
    columns: list[Column] = []
    constraints: list[str] = []
    for node in schema.expressions:
        if isinstance(node, exp.ColumnDef):
            columns.append(_column(node))
        else:
            text = _table_constraint(node)
            if text:
                constraints.append(text)
    comment = None
    for prop in (create.args.get("properties") or exp.Properties()).expressions:
        if isinstance(prop, exp.SchemaCommentProperty):
            comment = prop.this.name
    return Table(schema.this.name.lower(), tuple(columns), tuple(constraints), comment)


def float32(value: float) -> float:
    """``value`` rounded to IEEE single precision, as MySQL stores a FLOAT."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        return float(text)


def _literal_value(node: exp.Expression) -> object:
    """The Python value of an INSERT literal (before the column's conversion)."""
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return int(node.this)
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else _number(node.this)
    if isinstance(node, exp.Neg):
        inner = _literal_value(node.this)
        if isinstance(inner, str):
            return "-" + inner
        if isinstance(inner, (int, float)):
            return -inner
    if isinstance(node, (exp.HexString, exp.ByteString)):
        return bytes.fromhex(node.this) if isinstance(node, exp.HexString) else node.this
    if isinstance(node, exp.BitString):
        return int(node.this, 2)
    if isinstance(node, exp.Anonymous) and node.name.upper() in (
        "ST_GEOMFROMTEXT",
        "GEOMFROMTEXT",
        "ST_POINTFROMTEXT",
    ):
        return _literal_value(node.expressions[0])
    raise DumpError(f"unsupported INSERT value {node.sql('mysql')[:80]}")


def convert_value(value: object, kind: str) -> object:
    """An INSERT value as stored in SQLite for a column of the given kind."""
    if value is None:
        return None
    if kind in ("float32", "real", "integer") and isinstance(value, str):
        try:
            value = _number(value.strip())
        except ValueError:
            return value  # MySQL would have refused it in strict mode; keep the text
    if kind == "float32" and isinstance(value, (int, float)):
        return float32(float(value))
    if kind == "real" and isinstance(value, (int, float)):
        return float(value)
    if kind == "integer" and isinstance(value, float):
        # MySQL rounds a fractional value stored into an integer column (half away from zero).
        return int(value + (0.5 if value >= 0 else -0.5))
    if kind in ("text", "temporal", "point") and isinstance(value, (int, float)):
        return str(value)
    return value


def _insert_rows(insert: exp.Insert, table: Table) -> tuple[tuple[str, ...], list[tuple]]:
    """The column names an INSERT fills and its rows, converted per column kind."""
    target = insert.this
    names = [column.name for column in table.columns]
    if isinstance(target, exp.Schema):  # INSERT INTO t (a, b) VALUES ...
        names = [node.name for node in target.expressions]
    by_name = {column.name.lower(): column for column in table.columns}
    try:
        kinds = [by_name[name.lower()].kind for name in names]
    except KeyError as missing:
        raise DumpError(f"INSERT into {table.name} names unknown column {missing}") from None
    values = insert.expression
    if not isinstance(values, exp.Values):
        raise DumpError(f"INSERT into {table.name} without VALUES")
    rows = []
    for row in values.expressions:
        items = row.expressions
        if len(items) != len(kinds):
            raise DumpError(
                f"INSERT into {table.name}: {len(items)} values for {len(kinds)} columns"
            )
        rows.append(
            tuple(convert_value(_literal_value(v), k) for v, k in zip(items, kinds, strict=False))
        )
    return tuple(names), rows


class _RowWriter:
    """Rows of consecutive INSERTs into the same table and columns, written in one batch run."""

    def __init__(self, conn: sqlite3.Connection):
        # Imported here, not at the top: sqlite-utils imports pandas when it is installed
        # (~0.5 s), and scoring imports this module (through the bundle) without building.
        import sqlite_utils  # heavy: sqlite-utils, loaded only to build the bundle

        # No plugins and no PRAGMA: the connection is used exactly as the caller set it up.
        self.db = sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)
        self.target: tuple[str, tuple[str, ...]] | None = None
        self.rows: list[tuple] = []

    def add(self, table: str, names: tuple[str, ...], rows: list[tuple]) -> None:
        if self.target != (table, names):
            self.flush()
            self.target = (table, names)
        self.rows.extend(rows)

    def flush(self) -> None:
        """Write what is collected (before any statement that is not an INSERT)."""
        if self.target is not None and self.rows:
            table, names = self.target
            # List mode: the first item names the columns, the rest are rows in that order.
            self.db.table(table).insert_all([names, *self.rows], batch_size=BATCH_SIZE)
        self.target, self.rows = None, []


#: Rows per multi-row INSERT (sqlite-utils lowers it to stay under 999 bound parameters).
BATCH_SIZE = 500


def parse_dump(text: str) -> list[exp.Expression]:
    """All statements of a dump as sqlglot trees (comments and blank statements skipped)."""
    try:
        statements = sqlglot.parse(text, read=DumpDialect)
    except sqlglot.errors.ParseError as error:
        raise DumpError(f"cannot parse dump: {error}") from error
    return [statement for statement in statements if statement is not None]


def load_dump(
    text: str,
    conn: sqlite3.Connection,
    view_to_sqlite: Callable[[exp.Expression], str] | None = None,
) -> LoadSummary:
    """Execute a MySQL dump's tables, rows and views into ``conn``.

    ``view_to_sqlite`` turns a view's MySQL SELECT tree into SQLite text (LogicCat passes its
    gold transpiler); without it, sqlglot's plain MySQL -> SQLite generation is used.
    """
    tables: dict[str, Table] = {}
    views: list[str] = []
    rows = 0
    writer = _RowWriter(conn)
    for statement in parse_dump(text):
        if isinstance(statement, exp.Insert):
            name = statement.this.find(exp.Table).name.lower()
            if name not in tables:
                raise DumpError(f"INSERT into {name} before its CREATE TABLE")
            names, values = _insert_rows(statement, tables[name])
            writer.add(name, names, values)
            rows += len(values)
            continue
        writer.flush()  # every row inserted so far lands before DDL runs
        if isinstance(statement, exp.Drop):
            kind = "VIEW" if (statement.args.get("kind") or "").upper() == "VIEW" else "TABLE"
            for dropped in statement.args.get("tables") or [statement.this]:
                name = dropped.name.lower()
                conn.execute(f"DROP {kind} IF EXISTS {quote(name)}")
                tables.pop(name, None)
                if name in views:
                    views.remove(name)
        elif isinstance(statement, exp.Create) and statement.args.get("kind") == "TABLE":
            table = convert_create_table(statement)
            conn.execute(table.ddl)
            tables[table.name] = table
        elif isinstance(statement, exp.Create) and statement.args.get("kind") == "VIEW":
            name = statement.this.name.lower()
            query = statement.expression
            body = view_to_sqlite(query) if view_to_sqlite else query.sql("sqlite")
            conn.execute(f"CREATE VIEW {quote(name)} AS {body}")
            views.append(name)
        elif isinstance(statement, (exp.Set, exp.Transaction, exp.Commit)):
            continue  # SET NAMES / FOREIGN_KEY_CHECKS, BEGIN, COMMIT: session settings only
        else:
            raise DumpError(f"unexpected statement in dump: {statement.sql('mysql')[:80]}")
    writer.flush()
    return LoadSummary(tuple(tables), tuple(views), rows)
