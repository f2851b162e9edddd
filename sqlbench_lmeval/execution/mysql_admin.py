"""Administration of a MySQL-protocol server for the ``mysql`` engine (trusted code, admin URL).

The read-only account predictions run under, and table checksums that show a run changed
nothing. Benchmark-agnostic: callers name the databases.
"""

from __future__ import annotations

import secrets
import urllib.parse

from sqlbench_lmeval.execution.mysql import (
    checksum_tables,
    open_connection,
    parse_url,
    quote_identifier,
)

READ_ONLY_USER = "sqlbench_reader"


def create_read_only_account(
    admin_url: str, databases: list[str], user: str = READ_ONLY_USER, host: str = "%"
) -> str:
    """(Re)create ``user``@``host`` with SELECT on ``databases`` only; returns its URL.

    The password is new each time (random, URL-safe); the returned URL is the admin URL with
    this account in place of the admin's.
    """
    password = secrets.token_urlsafe(18)
    conn = open_connection(parse_url(admin_url))
    try:
        with conn.cursor() as cursor:
            cursor.execute("DROP USER IF EXISTS %s@%s", (user, host))
            cursor.execute("CREATE USER %s@%s IDENTIFIED BY %s", (user, host, password))
            for database in databases:
                cursor.execute(
                    f"GRANT SELECT ON {quote_identifier(database)}.* TO %s@%s", (user, host)
                )
    finally:
        conn.close()
    return with_account(admin_url, user, password)


def with_account(url: str, user: str, password: str) -> str:
    """``url`` with another user and password."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    credentials = f"{urllib.parse.quote(user, safe='')}:{urllib.parse.quote(password, safe='')}"
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{credentials}@{host}{port}"))


def table_checksums(admin_url: str, database: str) -> dict[str, int | None]:
    """``CHECKSUM TABLE`` of every table in ``database``: {table name: checksum}."""
    conn = open_connection(parse_url(admin_url))
    try:
        with conn.cursor() as cursor:
            return checksum_tables(cursor, database)
    finally:
        conn.close()
