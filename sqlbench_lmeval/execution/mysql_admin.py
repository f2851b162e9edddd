"""Administration of a MySQL-protocol server for the ``mysql`` engine (trusted code, admin URL),
benchmark-agnostic (callers name the benchmark and its databases): the metadata database
``sqlbench_lmeval_meta``, the read-only accounts (also for the host of every anonymous
account) and the table checksums that show a run changed nothing (docs/mysql.md)."""

from __future__ import annotations

import json
import re
import secrets
import urllib.parse

from sqlbench_lmeval.execution.engines import driver_missing

try:
    import pymysql
except ModuleNotFoundError as error:  # the mysql extra is not installed
    raise driver_missing("mysql") from error

from sqlbench_lmeval.execution.mysql import (
    META_DATABASE,
    META_DATABASES_TABLE,
    META_SERVER_TABLE,
    checksum_tables,
    open_connection,
    parse_url,
    quote_identifier,
    server_identity,
    target_database,
)

META_PREPARED_TABLE = "prepared"
_META = quote_identifier(META_DATABASE)


def ensure_metadata(cursor) -> str:
    """Create the metadata database and its tables if missing; the server's identity (written
    once, on the first prepare, and never changed)."""
    cursor.execute(f"CREATE DATABASE IF NOT EXISTS {_META} CHARACTER SET utf8mb4")
    cursor.execute(
        f"CREATE TABLE IF NOT EXISTS {_META}.{META_SERVER_TABLE} "
        "(server_id CHAR(36) NOT NULL PRIMARY KEY, created_at DATETIME NOT NULL)"
    )
    cursor.execute(
        f"CREATE TABLE IF NOT EXISTS {_META}.{META_DATABASES_TABLE} "
        "(database_name VARCHAR(64) NOT NULL PRIMARY KEY, benchmark VARCHAR(64) NOT NULL)"
    )
    cursor.execute(
        f"CREATE TABLE IF NOT EXISTS {_META}.{META_PREPARED_TABLE} (benchmark VARCHAR(64) NOT "
        "NULL PRIMARY KEY, document LONGTEXT NOT NULL, prepared_at DATETIME NOT NULL)"
    )
    if server_identity(cursor) is None:
        cursor.execute(
            f"INSERT INTO {_META}.{META_SERVER_TABLE} SELECT UUID(), UTC_TIMESTAMP() FROM DUAL "
            f"WHERE NOT EXISTS (SELECT 1 FROM {_META}.{META_SERVER_TABLE})"
        )
    return server_identity(cursor)


def register_databases(cursor, benchmark: str, databases: list[str]) -> None:
    """Record ``databases`` as ``benchmark``'s (replacing its earlier list)."""
    cursor.execute(f"DELETE FROM {_META}.{META_DATABASES_TABLE} WHERE benchmark = %s", (benchmark,))
    cursor.executemany(
        f"REPLACE INTO {_META}.{META_DATABASES_TABLE} (database_name, benchmark) VALUES (%s, %s)",
        [(name.lower(), benchmark) for name in databases],
    )


def read_document(cursor, benchmark: str) -> dict | None:
    """The document ``prepare`` stored for ``benchmark``, None when there is none (or no
    metadata database); any account that may read the metadata database may call this."""
    try:
        cursor.execute(
            f"SELECT document FROM {_META}.{META_PREPARED_TABLE} WHERE benchmark = %s",
            (benchmark,),
        )
    except pymysql.err.ProgrammingError:  # no metadata database or table
        return None
    row = cursor.fetchone()
    return json.loads(row[0]) if row else None


def store_document(cursor, benchmark: str, document: dict) -> None:
    """Mark ``benchmark`` prepared: the last step of a successful prepare."""
    cursor.execute(
        f"REPLACE INTO {_META}.{META_PREPARED_TABLE} (benchmark, document, prepared_at) "
        "VALUES (%s, %s, UTC_TIMESTAMP())",
        (benchmark, json.dumps(document, ensure_ascii=False)),
    )


def forget_document(cursor, benchmark: str) -> None:
    """``benchmark`` is no longer prepared (a reload is under way; it may stop half-way)."""
    cursor.execute(f"DELETE FROM {_META}.{META_PREPARED_TABLE} WHERE benchmark = %s", (benchmark,))


# -- accounts ----------------------------------------------------------------------------------


def anonymous_hosts(cursor) -> list[str]:
    """Hosts of the server's anonymous accounts (``''@'localhost'``, ... as
    ``mariadb-install-db`` creates them without ``--skip-test-db`` cleanup)."""
    cursor.execute("SELECT host FROM mysql.user WHERE user = '' ORDER BY host")
    return [row[0] for row in cursor.fetchall()]


def account_hosts(cursor, user: str) -> list[str]:
    """Hosts for which an account named ``user`` exists."""
    cursor.execute("SELECT host FROM mysql.user WHERE user = %s ORDER BY host", (user,))
    return [row[0] for row in cursor.fetchall()]


def public_grants(cursor) -> list[str]:
    """What MariaDB 10.11+ grants to ``PUBLIC`` (every account); empty on servers without it."""
    try:
        cursor.execute("SHOW GRANTS FOR PUBLIC")
    except pymysql.err.Error:
        return []
    return [row[0] for row in cursor.fetchall() if " ON " in row[0]]


def reader_hosts(cursor) -> list[str]:
    """Where the reader must exist: ``'%'`` and the host of every anonymous account (see the
    module docstring)."""
    return sorted({"%", *anonymous_hosts(cursor)})


def new_password() -> str:
    return secrets.token_urlsafe(18)


def create_account(cursor, user: str, host: str, password: str) -> None:
    cursor.execute("CREATE USER %s@%s IDENTIFIED BY %s", (user, host, password))


def set_password(cursor, user: str, host: str, password: str) -> None:
    cursor.execute("ALTER USER %s@%s IDENTIFIED BY %s", (user, host, password))


def copy_account(cursor, user: str, model_host: str, host: str) -> None:
    """Create ``user``@``host`` with the credentials ``user``@``model_host`` has (its stored
    hash, from ``SHOW CREATE USER``), so adding a host never changes the password."""
    cursor.execute("SHOW CREATE USER %s@%s", (user, model_host))
    statement = cursor.fetchone()[0]
    account = re.match(r"CREATE USER (`(?:[^`]|``)*`@`(?:[^`]|``)*`)", statement)
    if account is None:
        raise RuntimeError(f"cannot read the definition of {user!r}@{model_host!r}")
    target = f"{quote_identifier(user)}@{quote_identifier(host)}"
    cursor.execute(statement.replace(account.group(1), target, 1))


def grant_name(database: str) -> str:
    """``database`` quoted for GRANT, its wildcards ``_`` and ``%`` escaped: a grant on
    ``a_b`` must not also cover ``aXb``."""
    return quote_identifier(database.replace("_", "\\_").replace("%", "\\%"))


def grant_select(cursor, user: str, host: str, databases: list[str]) -> list[str]:
    """SELECT on each of ``databases`` and the metadata database that ``user``@``host`` lacks
    (nothing is written when it holds them all); the databases granted now."""
    cursor.execute("SHOW GRANTS FOR %s@%s", (user, host))
    held = set()
    for (line,) in cursor.fetchall():
        match = re.match(r"GRANT SELECT ON (\S+)\.\* TO ", line)
        if match:
            held.add(target_database(match.group(1)).lower())
    granted = []
    for database in [*databases, META_DATABASE]:
        if database.lower() not in held:
            cursor.execute(f"GRANT SELECT ON {grant_name(database)}.* TO %s@%s", (user, host))
            granted.append(database)
    return granted


def with_account(url: str, user: str, password: str) -> str:
    """``url`` with another user and password (no password: ``user@host``)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    credentials = urllib.parse.quote(user, safe="")
    if password:
        credentials += ":" + urllib.parse.quote(password, safe="")
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{credentials}@{host}{port}"))


def table_checksums(admin_url: str, database: str) -> dict[str, int | None]:
    """``CHECKSUM TABLE`` of every table in ``database``: {table name: checksum}."""
    conn = open_connection(parse_url(admin_url))
    try:
        with conn.cursor() as cursor:
            return checksum_tables(cursor, database)
    finally:
        conn.close()
