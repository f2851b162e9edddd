"""Administration of a PostgreSQL server for the ``postgres`` engine (trusted code, admin URL): a
database locked down for model SQL, the read-only role predictions run under and its libpq
password file. Benchmark-agnostic: callers name the database, the role and the tables (what
``prepare`` does with them: docs/postgres.md)."""

from __future__ import annotations

import contextlib
import os
import secrets
import uuid
from pathlib import Path

from sqlbench_lmeval.execution.engines import driver_missing

try:
    import psycopg
    from psycopg import sql
except ModuleNotFoundError as error:  # the postgres extra is not installed
    raise driver_missing("postgres") from error

from sqlbench_lmeval.execution.postgres import (
    RISKY_FUNCTIONS_PARAMS,
    RISKY_FUNCTIONS_WHERE,
    open_connection,
    with_database,
    with_role,
)

SCHEMA = "public"
#: Functions PUBLIC may execute by default that no answer needs: ending or interrupting a
#: session (its own included: an answer could end the session it runs in), and the large-object
#: functions (creating one is a write that a read-only transaction does not refuse; our
#: rollback undoes it, and now it is refused as well).
READER_ATTRIBUTES = (
    "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT "
    "CONNECTION LIMIT 64"
)
#: Server-side defaults of the reader, in force whichever client connects: read-only
#: transactions, and (superusers only may set it) a cap on the temporary files one session
#: writes, against sorts and hashes that would fill the server's disk.
READER_SETTINGS = {"default_transaction_read_only": "on", "temp_file_limit": "4GB"}


def create_database(admin_url: str, database: str) -> None:
    """(Re)create ``database`` from ``template0``, UTF-8 with the ``C`` collation (text sorts
    by its bytes), locked down: PUBLIC may not connect, create temporary tables, use or create
    in schema ``public``, or call the session-signalling and large-object functions there
    (:data:`~sqlbench_lmeval.execution.postgres.RISKY_FUNCTIONS`)."""
    name = sql.Identifier(database)
    with open_connection(admin_url) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(name))
        conn.execute(
            sql.SQL(
                "CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"
            ).format(name)
        )
        conn.execute(sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(name))
    with open_connection(with_database(admin_url, database)) as conn:
        conn.execute(sql.SQL("REVOKE ALL ON SCHEMA {} FROM PUBLIC").format(sql.Identifier(SCHEMA)))
        signatures = conn.execute(
            "SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p "
            f"WHERE {RISKY_FUNCTIONS_WHERE} ORDER BY 1",
            RISKY_FUNCTIONS_PARAMS,
        ).fetchall()
        for (signature,) in signatures:  # e.g. pg_terminate_backend(integer,bigint)
            conn.execute(f"REVOKE EXECUTE ON FUNCTION {signature} FROM PUBLIC")


def set_database_settings(admin_url: str, database: str, settings: dict[str, str]) -> None:
    """Defaults of every session on ``database`` (``ALTER DATABASE ... SET``), whichever role
    connects; a session's own change lasts until the engine resets it after the answer."""
    with open_connection(admin_url) as conn:
        for name, value in settings.items():
            conn.execute(
                sql.SQL("ALTER DATABASE {} SET {} = {}").format(
                    sql.Identifier(database), sql.Identifier(name), sql.Literal(value)
                )
            )


def role_exists(admin_url: str, role: str) -> bool:
    with open_connection(admin_url) as conn:
        return (
            conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
            is not None
        )


def grant_reader(
    admin_url: str, database: str, role: str, password: str, tables: list[str]
) -> None:
    """Create (or reset) ``role``: LOGIN with ``password`` and nothing else, CONNECT on
    ``database``, USAGE on its ``public`` schema, SELECT on ``tables`` there, and the
    server-side defaults of :data:`READER_SETTINGS` (a setting the admin may not set is left
    out; the engine's own limits remain)."""
    ident = sql.Identifier(role)
    with open_connection(with_database(admin_url, database)) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        verb = sql.SQL("ALTER" if exists else "CREATE")
        conn.execute(
            sql.SQL("{} ROLE {} WITH {} PASSWORD {}").format(
                verb, ident, sql.SQL(READER_ATTRIBUTES), sql.Literal(password)
            )
        )
        for name, value in READER_SETTINGS.items():
            with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
                conn.execute(
                    sql.SQL("ALTER ROLE {} SET {} = {}").format(
                        ident, sql.Identifier(name), sql.Literal(value)
                    )
                )
        conn.execute(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(database), ident)
        )
        conn.execute(
            sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(SCHEMA), ident)
        )
        for table in tables:
            conn.execute(
                sql.SQL("GRANT SELECT ON {} TO {}").format(sql.Identifier(SCHEMA, table), ident)
            )


def new_password() -> str:
    return secrets.token_urlsafe(24)


def write_private_file(path: Path, text: str) -> None:
    """``text`` into ``path``, readable by its owner only, replaced in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)


def write_passfile(path: Path, database: str, role: str, password: str) -> None:
    """A libpq password file for ``role`` on ``database`` at any host and port, readable by
    its owner only (libpq ignores a password file others may read)."""
    escaped = password.replace("\\", "\\\\").replace(":", "\\:")
    write_private_file(path, f"*:*:{database}:{role}:{escaped}\n")


def read_passfile(path: Path, role: str) -> str | None:
    """``role``'s password in a password file :func:`write_passfile` wrote, or None."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.replace("\\\\", "\1").replace("\\:", "\0").split(":")
        if len(fields) == 5 and fields[3] == role:
            return fields[4].replace("\0", ":").replace("\1", "\\")
    return None


def reader_url(admin_url: str, database: str, role: str, passfile: Path) -> str:
    """The URL of ``role`` on ``database`` with its password read from ``passfile``."""
    return with_role(with_database(admin_url, database), role, passfile=str(passfile.resolve()))
