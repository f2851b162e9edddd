"""A PostgreSQL server, sandboxed: hostile SQL in, :class:`Outcome` out (the URL, the role's
rights, the defences and the driver: docs/postgres.md#the-sandbox; it counts no work:
docs/r-ves.md#postgresql-r_ves-is-not-defined)."""

from __future__ import annotations

import functools
import hashlib
import json
import time
import urllib.parse
from collections.abc import Callable

from sqlbench_lmeval.execution.engines import driver_missing

try:
    import psycopg
    import psycopg.errors
    from psycopg.sql import SQL, Identifier
except ModuleNotFoundError as error:  # the postgres extra is not installed
    raise driver_missing("postgres") from error

from sqlbench_lmeval.execution import random_seed
from sqlbench_lmeval.execution.deadline import Deadline, stopped
from sqlbench_lmeval.execution.engines import Engine, driver_version
from sqlbench_lmeval.execution.fetch import (
    fetch_limited,
    out_of_memory,
    result_budget,
    result_size,
)
from sqlbench_lmeval.execution.job import Limits
from sqlbench_lmeval.execution.outcome import Outcome, Status
from sqlbench_lmeval.execution.statement import refusal
from sqlbench_lmeval.execution.unavailable import (
    BUSY_ADVICE,
    ConnectionLost,
    EvaluationUnavailable,
    ServerBusy,
    wait_while_busy,
)

SCHEMES = ("postgresql", "postgres")
CONNECT_TIMEOUT_S = 10
#: The time limit per query when none is given (``score --timeout``,
#: ``$SQLBENCH_LMEVAL_TIMEOUT``): PostgreSQL runs TPC-DS's analytic queries about ten times
#: slower than DuckDB (gold query 4: 1 s on DuckDB, 20 s here), so the other engines' 10 s
#: would cut off gold itself.
DEFAULT_TIMEOUT_S = 60.0
# The server's statement_timeout sits a little after the client's cancel: a worker killed
# mid-query leaves its statement running on the server until then.
SERVER_LIMIT_MARGIN_S = 0.5
IDLE_IN_TRANSACTION_S = 60
ALLOWED_FIRST_KEYWORDS = frozenset({"SELECT", "WITH", "VALUES", "TABLE"})
DIALECT = "postgres"  # sqlglot's name of this engine's SQL (its comments and strings: lexis)
CURSOR_NAME = "sqlbench_answer"
APPLICATION_NAME = "sqlbench-lmeval"

# Functions of pg_catalog that reach files, large objects, the server's configuration or
# sessions (the role's own included); none may be executable by the role. Large objects are a
# way to write that a read-only transaction does not refuse (``lo_from_bytea``).
RISKY_FUNCTIONS = (
    "pg_read_file",
    "pg_read_binary_file",
    "pg_stat_file",
    "pg_ls_dir",
    "pg_ls_logdir",
    "pg_ls_waldir",
    "pg_ls_tmpdir",
    "pg_ls_archive_statusdir",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "loread",
    "lowrite",
)
RISKY_FUNCTIONS_WHERE = (
    "p.pronamespace = 'pg_catalog'::regnamespace "
    "AND (p.proname = ANY(%s) OR p.proname LIKE 'lo\\_%%')"
)
RISKY_FUNCTIONS_PARAMS = (list(RISKY_FUNCTIONS),)


# ---------------------------------------------------------------------------------------------
# URLs
# ---------------------------------------------------------------------------------------------


def check_url(url: str) -> str:
    """``url`` when it is a ``postgresql://`` URL, else ValueError (the password left out)."""
    if urllib.parse.urlsplit(url).scheme not in SCHEMES:
        raise ValueError(f"not a postgresql:// URL: {redact(url)}")
    return url


def redact(url: str) -> str:
    """``url`` without any password (in the user part or a ``password=`` parameter)."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}:***@{host}"
    query = "&".join(
        f"{name}=***" if name.lower() == "password" else pair
        for pair in parts.query.split("&")
        if pair
        for name in [pair.partition("=")[0]]
    )
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=query))


def public_url(url: str) -> str:
    """``url`` as outputs show it: no password and no password file (a path of one machine that
    holds a secret), so every machine that evaluates on the same server writes the same text."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    user = f"{parts.username}@" if parts.username else ""
    query = [
        (name, value)
        for name, value in urllib.parse.parse_qsl(parts.query)
        if name.lower() not in ("password", "passfile")
    ]
    return urllib.parse.urlunsplit(
        parts._replace(netloc=user + host, query=urllib.parse.urlencode(query))
    )


def database_name(url: str) -> str | None:
    """The database a URL names (its path, else a ``dbname=`` parameter), or None."""
    parts = urllib.parse.urlsplit(url)
    path = urllib.parse.unquote(parts.path.lstrip("/"))
    if path:
        return path
    return urllib.parse.parse_qs(parts.query).get("dbname", [None])[0]


def with_database(url: str, database: str) -> str:
    """``url`` naming ``database`` instead (a ``dbname=`` parameter is dropped)."""
    parts = urllib.parse.urlsplit(url)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k != "dbname"]
    return urllib.parse.urlunsplit(
        parts._replace(
            path="/" + urllib.parse.quote(database, safe=""),
            query=urllib.parse.urlencode(query),
        )
    )


def with_role(url: str, user: str, *, password: str | None = None, **params: str) -> str:
    """``url`` logging in as ``user`` (with ``password`` in the URL, or none), plus libpq
    parameters ``params`` (e.g. ``passfile``) replacing any of the same name."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    credentials = urllib.parse.quote(user, safe="")
    if password is not None:
        credentials += ":" + urllib.parse.quote(password, safe="")
    query = [
        (k, v)
        for k, v in urllib.parse.parse_qsl(parts.query)
        if k not in params and k not in ("user", "password")
    ]
    query += sorted(params.items())
    return urllib.parse.urlunsplit(
        parts._replace(netloc=f"{credentials}@{host}", query=urllib.parse.urlencode(query))
    )


# ---------------------------------------------------------------------------------------------
# Connections
# ---------------------------------------------------------------------------------------------


def open_connection(
    url: str, *, options: str = "", autocommit: bool = True, wait_busy: bool = True
) -> psycopg.Connection:
    """A plain psycopg connection (UTF-8, no automatic prepared statements); raises
    ``psycopg.OperationalError`` when the server cannot be reached or refuses the login. A
    server with no free connection slot is waited for (``unavailable.wait_while_busy``) unless
    ``wait_busy`` is false: the sessions of the worker processes wait in the runner instead."""
    check_url(url)

    def connect() -> psycopg.Connection:
        return psycopg.connect(
            url,
            autocommit=autocommit,
            prepare_threshold=None,
            connect_timeout=CONNECT_TIMEOUT_S,
            application_name=APPLICATION_NAME,
            client_encoding="UTF8",
            options=options,
        )

    if not wait_busy:
        return connect()
    return wait_while_busy(connect, is_busy, f"PostgreSQL at {redact(url)}")


# What the server says when every connection slot is taken (SQLSTATE 53300): others' runs free
# them, so it is waited out like a server at its limit, not like one that is gone.
_BUSY_MESSAGES = (
    "too many clients already",
    "remaining connection slots are reserved",
    "too many connections for role",
    "too many connections for database",
)


def is_busy(error: BaseException) -> bool:
    """Whether ``error`` is the server (or a role or database) at its connection limit."""
    if not isinstance(error, psycopg.Error):
        return False
    message = _message(error).lower()
    return getattr(error, "sqlstate", None) == "53300" or any(
        busy in message for busy in _BUSY_MESSAGES
    )


def sandbox_options(limits: Limits) -> str:
    """libpq ``options`` of a sandboxed session: server defaults that ``DISCARD ALL`` (and
    ``RESET``) return to, not session settings an answer could keep."""
    statement_ms = int((float(limits.timeout_s) + SERVER_LIMIT_MARGIN_S) * 1000)
    settings = {
        "default_transaction_read_only": "on",
        "statement_timeout": str(statement_ms),
        "idle_in_transaction_session_timeout": str(IDLE_IN_TRANSACTION_S * 1000),
    }
    return " ".join(f"-c {name}={value}" for name, value in settings.items())


def server_version(conn: psycopg.Connection) -> str:
    """``"PostgreSQL 15.18"``: product and release, for cache keys and manifests."""
    number = conn.info.server_version  # e.g. 150018, 90624
    major = number // 10000
    if major >= 10:
        return f"PostgreSQL {major}.{number % 10000}"
    return f"PostgreSQL {major}.{number // 100 % 100}.{number % 100}"


# What libpq says when the server is not there (any more), or turns connections away for now
# (starting up, shutting down, full): worth waiting for. Any other failure to connect (a
# password, a role or a database refused) is not.
_GONE_MESSAGES = (
    "connection refused",
    "could not connect",
    "no such file or directory",  # the unix socket of a server that is down
    "the database system is starting up",
    "the database system is shutting down",
    "the database system is in recovery mode",
    "the database system is not yet accepting connections",
    "too many clients already",
    "server closed the connection unexpectedly",
    "connection reset",
    "timeout expired",
    "terminating connection",
)


def connection_failure(
    url: str, error: BaseException, *, was_connected: bool = False
) -> EvaluationUnavailable:
    """What a failure to open a session on ``url`` means for the evaluation: the one place that
    tells the cases apart, for the engine and for the checks before a run. ``was_connected``:
    this process had a session, so a server that is not there now went away (ConnectionLost,
    waited for); otherwise, and for every refusal, :func:`unavailable`."""
    if isinstance(error, EvaluationUnavailable):
        return error
    message = _message(error).lower()
    if is_busy(error):
        return ServerBusy(
            f"PostgreSQL at {redact(url)} refuses new connections: {_message(error)}; {BUSY_ADVICE}"
        )
    if was_connected and any(gone in message for gone in _GONE_MESSAGES):
        return ConnectionLost(
            f"lost the connection to PostgreSQL at {redact(url)}: {_message(error)}"
        )
    return unavailable(url, error)


def unavailable(url: str, error: BaseException) -> EvaluationUnavailable:
    """The error that stops a run when ``url`` cannot be logged into."""
    message = _message(error)
    hint = ""
    if "password authentication failed" in message or "no password supplied" in message:
        hint = (
            " (the role's password is read from the URL's passfile; `sqlbench-lmeval prepare "
            "tpcds --engine postgres --rotate-reader` makes a new one)"
        )
    elif "does not exist" in message:
        hint = " (run `sqlbench-lmeval prepare tpcds --engine postgres --url <admin URL>`)"
    return EvaluationUnavailable(f"cannot log in to PostgreSQL at {redact(url)}: {message}{hint}")


# ---------------------------------------------------------------------------------------------
# The role's rights
# ---------------------------------------------------------------------------------------------

_ROLE_QUERY = """
SELECT r.rolsuper, r.rolcreatedb, r.rolcreaterole, r.rolreplication, r.rolbypassrls,
       d.datdba = r.oid,
       has_database_privilege(d.oid, 'CREATE'),
       has_database_privilege(d.oid, 'TEMPORARY')
FROM pg_catalog.pg_roles r, pg_catalog.pg_database d
WHERE r.rolname = current_user AND d.datname = current_database()
"""
_ROLE_ATTRIBUTES = (
    "SUPERUSER",
    "CREATEDB",
    "CREATEROLE",
    "REPLICATION",
    "BYPASSRLS",
    "owns the database",
    "CREATE on the database",
    "TEMPORARY on the database",
)
_PREDEFINED_ROLES_QUERY = """
SELECT b.rolname FROM pg_catalog.pg_roles b
WHERE b.rolname LIKE 'pg\\_%' AND b.rolname <> 'pg_database_owner'
  AND pg_has_role(current_user, b.oid, 'MEMBER')
ORDER BY 1
"""
_SCHEMA_CREATE_QUERY = """
SELECT n.nspname FROM pg_catalog.pg_namespace n
WHERE has_schema_privilege(n.oid, 'CREATE') AND n.nspname NOT LIKE 'pg\\_temp\\_%'
  AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%'
ORDER BY 1
"""
# Relations the role may change, or read outside the schemas of its search path.
_RELATION_QUERY = """
SELECT n.nspname || '.' || c.relname,
       has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
  AND (has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
       OR (n.nspname <> ALL (current_schemas(false)) AND has_table_privilege(c.oid, 'SELECT')))
ORDER BY 1
"""
_FUNCTION_QUERY = f"""
SELECT DISTINCT p.proname FROM pg_catalog.pg_proc p
WHERE {RISKY_FUNCTIONS_WHERE} AND has_function_privilege(p.oid, 'EXECUTE')
ORDER BY 1
"""
_EXTENSION_QUERY = "SELECT extname FROM pg_catalog.pg_extension WHERE extname <> 'plpgsql'"


def privileges_beyond_select(conn: psycopg.Connection) -> list[str]:
    """What the connected role may do beyond SELECT on its search path's tables, in words;
    empty for a read-only role. Runs outside any transaction of the caller's."""
    extra: list[str] = []
    with conn.cursor() as cursor:
        cursor.execute(_ROLE_QUERY)
        row = cursor.fetchone()
        extra += [name for name, held in zip(_ROLE_ATTRIBUTES, row or (), strict=False) if held]
        cursor.execute(_PREDEFINED_ROLES_QUERY)
        extra += [f"member of {name}" for (name,) in cursor.fetchall()]
        cursor.execute(_SCHEMA_CREATE_QUERY)
        extra += [f"CREATE on schema {name}" for (name,) in cursor.fetchall()]
        cursor.execute(_RELATION_QUERY)
        for name, writes in cursor.fetchall():
            extra.append(f"{'writes to' if writes else 'reads'} {name}")
        cursor.execute(_FUNCTION_QUERY, RISKY_FUNCTIONS_PARAMS)
        extra += [f"EXECUTE on {name}()" for (name,) in cursor.fetchall()]
        cursor.execute(_EXTENSION_QUERY)
        extra += [f"extension {name} installed" for (name,) in cursor.fetchall()]
    return extra


def check_rights(conn: psycopg.Connection, url: str) -> None:
    """Raise ``EvaluationUnavailable`` unless the connected role holds SELECT only."""
    extra = privileges_beyond_select(conn)
    if extra:
        shown = ", ".join(extra[:12]) + (f", ... ({len(extra)} in all)" if len(extra) > 12 else "")
        raise EvaluationUnavailable(
            f"model SQL never runs as a role with more than SELECT: {conn.info.user!r} at "
            f"{redact(url)} holds {shown}. Use the read-only role `sqlbench-lmeval prepare "
            "tpcds --engine postgres` created (leave --url out, or give its URL)"
        )


# ---------------------------------------------------------------------------------------------
# What identifies the data (gold cache keys) and what shows a run changed nothing (tests)
# ---------------------------------------------------------------------------------------------


def database_comment(conn: psycopg.Connection) -> str | None:
    """``COMMENT ON DATABASE`` of the current database (readable by every role)."""
    row = conn.execute(
        "SELECT pg_catalog.shobj_description(oid, 'pg_database') FROM pg_catalog.pg_database "
        "WHERE datname = current_database()"
    ).fetchone()
    return row[0] if row else None


def load_label(conn: psycopg.Connection) -> dict | None:
    """The JSON object a loader left in the database's comment (with a ``load_id`` that
    changes with every load), or None."""
    try:
        label = json.loads(database_comment(conn) or "")
    except ValueError:
        return None
    return label if isinstance(label, dict) and "load_id" in label else None


def table_checksums(conn: psycopg.Connection) -> dict[str, str]:
    """``{schema.table: md5 of its rows}`` over every base table outside the system schemas
    that the role can read (sorted row texts, so the order rows are stored in does not
    matter). For small databases: it reads every row."""
    tables = conn.execute(
        "SELECT n.nspname, c.relname FROM pg_catalog.pg_class c "
        "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
        "AND n.nspname NOT LIKE 'pg\\_%' AND has_table_privilege(c.oid, 'SELECT') ORDER BY 1, 2"
    ).fetchall()
    checksums = {}
    for schema, table in tables:
        query = SQL(
            "SELECT count(*), md5(coalesce(string_agg(r::text, chr(10) ORDER BY r::text), '')) "
            "FROM {} AS r"
        ).format(Identifier(schema, table))
        count, digest = conn.execute(query).fetchone()
        checksums[f"{schema}.{table}"] = f"{count}:{digest}"
    return checksums


_checksums: dict[str, dict[str, str]] = {}


def database_fingerprint(url: str) -> str:
    """``"PostgreSQL 15.18 <sha256>"`` for the gold cache key (the server's counterpart of a
    file's hash): the server version and the loader's ``load_id`` and ``settings`` (a reload
    changes the id, and with it the plans and the order of tied rows), else a checksum of every
    table's rows. Not the URL: every spelling of the server's address, and every machine,
    keys the same gold. The label is read on every call (one query), so a reload by another
    machine changes the key at once; the checksums once per process and URL. Raises psycopg
    errors."""
    with open_connection(url) as conn:
        label = load_label(conn)
        if label:
            # The load, and the settings it left (they choose plans, so the order of ties).
            content = [label["load_id"], label.get("settings")]
        else:
            if url not in _checksums:
                _checksums[url] = table_checksums(conn)
            content = _checksums[url]
        digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()
        return f"{server_version(conn)} {digest}"


# ---------------------------------------------------------------------------------------------
# The sandboxed session
# ---------------------------------------------------------------------------------------------


class _Session:
    """One sandboxed connection to a database, checked once when it opens."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.conn: psycopg.Connection | None = None
        self.timeout_s: float | None = None  # the limit its statement_timeout was set for
        self.was_connected = False  # a connection opened once: a refusal now means it went away

    def ready(self, limits: Limits) -> psycopg.Connection:
        """The live, checked connection; a new one when the server dropped the old one or the
        time limit changed. Raises EvaluationUnavailable (ConnectionLost for a server that went
        away) when no login or check succeeds."""
        if self.conn is not None and (
            self.conn.closed or self.conn.broken or self.timeout_s != float(limits.timeout_s)
        ):
            self.close()
        if self.conn is None:
            try:
                conn = open_connection(self.url, options=sandbox_options(limits), wait_busy=False)
            except psycopg.Error as error:
                raise connection_failure(
                    self.url, error, was_connected=self.was_connected
                ) from error
            try:
                check_rights(conn, self.url)
            except psycopg.Error as error:  # the server went away between login and check
                conn.close()
                raise connection_failure(self.url, error, was_connected=True) from error
            except BaseException:
                conn.close()
                raise
            self.conn, self.timeout_s = conn, float(limits.timeout_s)
            self.was_connected = True
        return self.conn

    def reset(self) -> None:
        """End the answer's transaction and forget everything it set (settings, advisory
        locks, ...): the next answer starts from the startup options. Any failure closes the
        connection instead (the next answer gets a new one)."""
        if self.conn is None:
            return
        try:
            self.conn.execute("ROLLBACK; DISCARD ALL")
        except psycopg.Error:
            self.close()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()  # psycopg's close never raises, on a broken connection neither
        self.conn = None


_sessions: dict[str, _Session] = {}
_SET_SEED = f"SELECT setseed({random_seed.SEED})"


def connect(url: str, limits: Limits, setup: Callable | None = None) -> _Session:
    """The session for ``url``; connecting waits for :func:`run`. A malformed URL raises
    ValueError here; setup hooks are not supported on this engine."""
    check_url(url)
    if setup is not None:
        raise ValueError("the postgres engine takes no setup hook")
    session = _sessions.get(url)
    if session is None:
        session = _sessions[url] = _Session(url)
    return session


def close_all() -> None:
    """Close every session (tests)."""
    while _sessions:
        _sessions.popitem()[1].close()


class _DeadlinePassed(Exception):
    """The deadline fired between two fetches."""


class _Fetcher:
    """``fetchmany`` for :func:`fetch_limited` on a server-side cursor, asking the server for
    few rows at first and more while they stay small: one ``FETCH`` arrives whole in the
    client's memory, so 1,024 rows of 10 MB would be 10 GB before the byte budget could look
    at them. Stops with :class:`_DeadlinePassed` once the deadline fired."""

    GROWTH = 16

    def __init__(self, cursor, deadline: Deadline, limits: Limits) -> None:
        self.cursor = cursor
        self.deadline = deadline
        self.budget = result_budget(limits)
        self.next_size = 1
        self.rows = 0
        self.size = 0

    def __call__(self, wanted: int) -> list[tuple]:
        if self.deadline.fired:
            raise _DeadlinePassed
        size = min(wanted, self.next_size)
        if self.rows:
            per_row = max(1, self.size // self.rows)
            size = min(size, max(1, (self.budget - self.size) // per_row))
        chunk = self.cursor.fetchmany(size)
        self.rows += len(chunk)
        self.size += result_size(chunk)
        self.next_size *= self.GROWTH
        return chunk


def run(session: _Session, sql: str, limits: Limits) -> Outcome:
    """Run one query; never raises for bad SQL. Raises :class:`EvaluationUnavailable` when no
    session can be opened (or the role holds more than SELECT), :class:`ConnectionLost` when
    the server dropped the connection or someone else cancelled the query (see the module
    docstring)."""
    start = time.monotonic()
    refused = refusal(sql, DIALECT, ALLOWED_FIRST_KEYWORDS, start)
    if refused is not None:
        return refused
    if "\x00" in sql:  # libpq would send the text up to it and drop the rest unseen
        return Outcome(
            Status.ERROR,
            error="the query holds a NUL character",
            elapsed_s=time.monotonic() - start,
        )
    conn = session.ready(limits)
    deadline = Deadline(limits.timeout_s, functools.partial(_cancel, conn))
    lost: ConnectionLost | None = None
    try:
        conn.execute("BEGIN TRANSACTION READ ONLY")
        conn.execute(_SET_SEED)  # random() starts from the one seed (random_seed)
        cursor = conn.cursor(CURSOR_NAME, scrollable=False)
        cursor.execute(sql)
        columns = tuple(d.name for d in cursor.description or ())
        outcome = fetch_limited(_Fetcher(cursor, deadline, limits), columns, limits, start)
    except _DeadlinePassed:
        outcome = stopped(limits.timeout_s, start)
    except psycopg.errors.QueryCanceled as error:
        if deadline.fired or "statement timeout" in str(error):
            outcome = stopped(limits.timeout_s, start)  # our cancel, or statement_timeout
        else:
            # Not ours (the role may not cancel queries: check_rights): an operator, a server
            # shutting down. Not the answer's outcome: it runs again.
            lost = ConnectionLost(
                f"a query on PostgreSQL at {redact(session.url)} was cancelled by someone "
                f"other than the evaluation: {_message(error)}",
                during_query=True,
            )
    except psycopg.Error as error:
        if conn.broken or conn.closed:
            lost = ConnectionLost(
                f"lost the connection to PostgreSQL at {redact(session.url)} during a query: "
                f"{_message(error)}",
                during_query=True,
            )
        else:
            outcome = _error(error, start)
    except MemoryError:
        outcome = out_of_memory(limits, start)
    except (UnicodeError, ValueError) as error:  # text libpq cannot send (a NUL, a surrogate)
        outcome = _error(error, start)
    finally:
        deadline.stop()
    if conn.broken or conn.closed:
        session.close()
    else:
        session.reset()
    if lost is not None:
        raise lost
    if deadline.fired and outcome.status is not Status.TIMEOUT:
        outcome = stopped(limits.timeout_s, start)  # the cancel may surface as another error
    return outcome


def _cancel(conn: psycopg.Connection) -> None:
    try:
        conn.cancel_safe(timeout=CONNECT_TIMEOUT_S)
    except Exception:
        pass  # statement_timeout follows


def _error(error: BaseException, start: float) -> Outcome:
    return Outcome(Status.ERROR, error=_message(error), elapsed_s=time.monotonic() - start)


def _message(error: BaseException) -> str:
    """The server's message (first line, plus its DETAIL/HINT), without psycopg's decoration."""
    if isinstance(error, psycopg.Error) and error.diag.message_primary:
        text = error.diag.message_primary
        for extra in (error.diag.message_detail, error.diag.message_hint):
            if extra:
                text += f" ({extra})"
        if error.sqlstate:
            text = f"[{error.sqlstate}] {text}"
        return text
    return str(error).strip() or type(error).__name__


ENGINE = Engine(
    name="postgres",
    dialect=DIALECT,
    server=True,
    connect=connect,
    run=run,
    # The driver's; the server's version is part of the database fingerprint.
    version=lambda: driver_version("psycopg"),
    fingerprint=database_fingerprint,
    check_rights=check_rights,
    database_name=lambda url: database_name(url) or "",
    public_path=public_url,
    close_all=close_all,
    default_timeout_s=DEFAULT_TIMEOUT_S,
)
