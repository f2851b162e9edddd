"""A MySQL-protocol server (MariaDB or MySQL 8), sandboxed: hostile SQL in, :class:`Outcome` out
(the URL, the account check, the defences and the driver: docs/mysql.md#the-sandbox; the work it
counts: docs/r-ves.md#how-each-engine-counts-work)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

from sqlbench_lmeval.execution.engines import driver_missing

try:
    import pymysql
    import pymysql.cursors
except ModuleNotFoundError as error:  # the mysql extra is not installed
    raise driver_missing("mysql") from error

from sqlbench_lmeval.execution import random_seed
from sqlbench_lmeval.execution.deadline import Deadline, stopped
from sqlbench_lmeval.execution.engines import Engine, driver_version
from sqlbench_lmeval.execution.fetch import fetch_limited, out_of_memory
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

CONNECT_TIMEOUT_S = 10
# The server's own statement limit is the backstop (a worker killed mid-query leaves its query
# running on the server): it sits a little after the client's KILL QUERY, because a server that
# stops BENCHMARK()/SLEEP() at its limit returns a value, not an error, and only the client
# knows the deadline was the reason.
SERVER_LIMIT_MARGIN_S = 0.5
ALLOWED_FIRST_KEYWORDS = frozenset({"SELECT", "WITH"})
#: The session counters summed as work (``LIKE`` patterns; see the module docstring).
WORK_STATUS = ("Handler_read%", "Handler_tmp%", "Sort_rows")
_WORK_STATUS_QUERY = "SHOW SESSION STATUS WHERE " + " OR ".join(
    f"Variable_name LIKE '{pattern}'" for pattern in WORK_STATUS
)
DIALECT = "mysql"  # sqlglot's name of this engine's SQL (its comments and strings: lexis)
# Internal temporary tables on disk (Aria), never in memory (HEAP). With HEAP temporary tables
# the order of rows tied under an ORDER BY that sorts a temporary table ("Using temporary;
# Using filesort": most joins and GROUP BYs sorted on a computed key), and which tied rows its
# LIMIT keeps, changed from run to run on MariaDB 10.11 with identical plans: 111-174 of 4,036
# gold queries differed between two runs of all gold, even on one connection; with this
# setting 0 (the 2 left depend on RAND()). Consistent with filesort falling back to the row's
# position, for a HEAP table a memory address, where sort keys tie; an Aria row's position is
# its insertion order, the same every run. MySQL 8 (TempTable engine) is not measured.
MARIADB_REPRODUCIBLE_TIES = "tmp_memory_table_size = 0"
#: The two halves of the state RAND() without a seed reads, set before every statement.
_SET_SEED = (
    f"SET SESSION rand_seed1 = {random_seed.INTEGER_SEED}, rand_seed2 = {random_seed.INTEGER_SEED}"
)

# Server error numbers (both MariaDB and MySQL unless noted).
ER_QUERY_INTERRUPTED = 1317  # KILL QUERY
ER_STATEMENT_TIMEOUT = 1969  # MariaDB: max_statement_time exceeded
ER_QUERY_TIMEOUT = 3024  # MySQL: max_execution_time exceeded
_TIMEOUT_ERRORS = frozenset({ER_QUERY_INTERRUPTED, ER_STATEMENT_TIMEOUT, ER_QUERY_TIMEOUT})
CR_SERVER_GONE = 2006
CR_SERVER_LOST = 2013
CR_CONNECTION_ERROR = 2002
CR_CONN_HOST_ERROR = 2003
ER_CON_COUNT_ERROR = 1040  # too many connections
ER_SERVER_SHUTDOWN = 1053
ER_TOO_MANY_USER_CONNECTIONS = 1203
ER_CONNECTION_KILLED = 1927  # MariaDB: KILL CONNECTION, or the server shutting down
ER_CLIENT_INTERACTION_TIMEOUT = 4031  # MySQL 8: disconnected after wait_timeout
# The server is not there (any more), or turns connections away for now: wait for it.
_GONE_ERRORS = frozenset(
    {
        CR_SERVER_GONE,
        CR_SERVER_LOST,
        CR_CONNECTION_ERROR,
        CR_CONN_HOST_ERROR,
        ER_CON_COUNT_ERROR,
        ER_SERVER_SHUTDOWN,
        ER_TOO_MANY_USER_CONNECTIONS,
        ER_CONNECTION_KILLED,
        ER_CLIENT_INTERACTION_TIMEOUT,
    }
)
ER_USER_LIMIT_REACHED = 1226  # an account's resource limit (MAX_USER_CONNECTIONS among them)
# The server (or the account) holds as many connections as it allows: others' runs free them.
_BUSY_ERRORS = frozenset({ER_CON_COUNT_ERROR, ER_TOO_MANY_USER_CONNECTIONS})
ER_DBACCESS_DENIED_ERROR = 1044
ER_ACCESS_DENIED_ERROR = 1045
ER_BAD_DB_ERROR = 1049


@dataclass(frozen=True)
class ServerAddress:
    """Where a server is and who logs in; ``database`` is the one a Database URL names."""

    host: str
    port: int
    user: str
    password: str
    unix_socket: str | None
    database: str | None
    option_file: str | None = None  # a [client] section with what the URL leaves out

    @property
    def server(self) -> tuple:
        return (self.host, self.port, self.user, self.password, self.unix_socket, self.option_file)


def parse_url(url: str) -> ServerAddress:
    """``mysql://user:pass@host:port/db?unix_socket=/path`` -> :class:`ServerAddress`."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("mysql", "mariadb"):
        raise ValueError(f"not a mysql:// URL: {redact(url)}")
    query = urllib.parse.parse_qs(parts.query)
    database = urllib.parse.unquote(parts.path.lstrip("/")) or None
    return ServerAddress(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 3306,
        user=urllib.parse.unquote(parts.username or ""),
        password=urllib.parse.unquote(parts.password or ""),
        unix_socket=query.get("unix_socket", [None])[0],
        database=database,
        option_file=_expand(query.get("read_default_file", [None])[0]),
    )


def _expand(path: str | None) -> str | None:
    return os.path.expanduser(path) if path else path


def database_url(server_url: str, database: str) -> str:
    """The URL of one database on the server ``server_url`` points at."""
    parts = urllib.parse.urlsplit(server_url)
    path = "/" + urllib.parse.quote(database, safe="")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def redact(url: str) -> str:
    """``url`` with ``***`` for its password, for messages and manifests."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}:***@{_host_port(parts)}"))


def public_url(url: str) -> str:
    """``url`` as outputs show it: no password and no option file (a path of one machine that
    holds a secret), so every machine that evaluates on the same server writes the same text."""
    parts = urllib.parse.urlsplit(url)
    user = f"{parts.username}@" if parts.username else ""
    query = [
        (key, value)
        for key, value in urllib.parse.parse_qsl(parts.query)
        if key != "read_default_file"
    ]
    return urllib.parse.urlunsplit(
        parts._replace(netloc=user + _host_port(parts), query=urllib.parse.urlencode(query))
    )


def _host_port(parts: urllib.parse.SplitResult) -> str:
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return host + (f":{parts.port}" if parts.port else "")


def database_name(url: str) -> str:
    """The database a URL names (its path), '' when it names none."""
    return urllib.parse.unquote(urllib.parse.urlsplit(url).path.lstrip("/"))


class _Connection(pymysql.connections.Connection):
    """PyMySQL's connection, with one TLS context per process for its default mode.

    With no TLS option given, PyMySQL (1.2+) offers TLS when the server does ("preferred") and
    builds that context afresh for every connection: loading the system's certificates costs
    30-50 ms of CPU each time, a third of a scoring run's CPU on a server (the gold cache keys
    open one connection per database). The context it builds takes no option (no certificate
    checked), so one built the same way once serves every connection alike. Contexts built from
    TLS options (an option file's ``ssl-*`` keys) are built per connection, as PyMySQL does."""

    _preferred_tls = None  # built by the first connection that needs it

    def _create_ssl_ctx(self, sslp):
        if not (isinstance(sslp, dict) and not sslp):
            return super()._create_ssl_ctx(sslp)
        if _Connection._preferred_tls is None:
            _Connection._preferred_tls = super()._create_ssl_ctx(sslp)
        return _Connection._preferred_tls


def is_busy(error: BaseException) -> bool:
    """Whether ``error`` is the server (or the account) at its connection limit."""
    code = _error_code(error)
    if code == ER_USER_LIMIT_REACHED:  # also the hourly query limits: not worth waiting for
        return "max_user_connections" in _message(error)
    return code in _BUSY_ERRORS


def open_connection(
    address: ServerAddress,
    database: str | None = None,
    *,
    trusted_batches: bool = False,
    wait_busy: bool = True,
) -> pymysql.Connection:
    """A plain PyMySQL connection: utf8mb4, autocommit, no LOCAL INFILE, one statement per call.

    ``trusted_batches`` allows several statements per call, for the admin connection that loads
    the upstream dumps (our own, trusted text); model-written SQL never runs on such a connection.
    A server at its connection limit is waited for (``unavailable.wait_while_busy``) unless
    ``wait_busy`` is false: the sessions of the worker processes wait in the runner instead.
    """

    def connect() -> pymysql.Connection:
        return _open_connection(address, database, trusted_batches)

    if not wait_busy:
        return connect()
    return wait_while_busy(connect, is_busy, server_place(address))


def _open_connection(
    address: ServerAddress, database: str | None, trusted_batches: bool
) -> pymysql.Connection:
    return _Connection(
        host=address.host,
        port=address.port,
        user=address.user,
        password=address.password,
        unix_socket=address.unix_socket,
        database=database,
        # Fills in only what the URL leaves empty (the password); explicit values win.
        read_default_file=address.option_file,
        charset="utf8mb4",
        autocommit=True,
        local_infile=False,
        connect_timeout=CONNECT_TIMEOUT_S,
        # PyMySQL adds its base capabilities; CLIENT_MULTI_STATEMENTS only for trusted batches.
        client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS if trusted_batches else 0,
    )


def is_mariadb(conn: pymysql.Connection) -> bool:
    return "mariadb" in conn.get_server_info().lower()


def server_version(conn: pymysql.Connection) -> str:
    """``"MariaDB 10.11.19"`` / ``"MySQL 8.0.36"``: flavour and release, for cache keys."""
    info = conn.get_server_info()
    release = re.match(r"[\d.]+", info.removeprefix("5.5.5-"))
    return f"{'MariaDB' if is_mariadb(conn) else 'MySQL'} {release.group(0) if release else info}"


def quote_identifier(name: str) -> str:
    """A backtick-quoted MySQL identifier (a backtick inside is doubled)."""
    return "`" + name.replace("`", "``") + "`"


def checksum_tables(cursor, database: str) -> dict[str, int | None]:
    """``CHECKSUM TABLE`` of every base table of ``database``: {table name: checksum}."""
    cursor.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = %s AND table_type = 'BASE TABLE' ORDER BY table_name",
        (database,),
    )
    checksums = {}
    for (table,) in cursor.fetchall():
        cursor.execute(f"CHECKSUM TABLE {quote_identifier(database)}.{quote_identifier(table)}")
        checksums[table] = cursor.fetchone()[1]
    return checksums


# ---------------------------------------------------------------------------------------------
# The account's rights: read from the server, never inferred from the URL
# ---------------------------------------------------------------------------------------------

#: The database ``prepare`` keeps on the server: its identity, the databases it loaded (the only
#: ones a reader may see) and what every evaluating machine needs about them. Readers may SELECT
#: it; it is one of the benchmark's databases for the rights check.
META_DATABASE = "sqlbench_lmeval_meta"
META_DATABASES_TABLE = "benchmark_databases"
META_SERVER_TABLE = "server"
# Visible to every account on MySQL 8 (performance_schema) and everywhere (information_schema);
# privileges on them still count through SHOW GRANTS.
SYSTEM_SCHEMAS = frozenset({"information_schema", "performance_schema"})
READER_ADVICE = (
    "Model-written SQL runs only under a read-only account: use the reader that `sqlbench-lmeval "
    "prepare` creates (SELECT on the benchmark's databases only; its URL is printed by prepare "
    "and kept, with the password in an option file, in that machine's cache)."
)

_GRANT = re.compile(
    r"^GRANT (?P<privileges>.+?) ON (?:(?:FUNCTION|PROCEDURE|PACKAGE BODY|PACKAGE|TABLE) )?"
    r"(?P<target>(?:\*|`(?:[^`]|``)*`)(?:\.(?:\*|`(?:[^`]|``)*`))?) TO (?P<tail>.+)$",
    re.DOTALL,
)
_ROLE_GRANT = re.compile(r"^GRANT (?P<roles>`.+?) TO ", re.DOTALL)


def _split_privileges(text: str) -> list[str]:
    """``SELECT (a, b), INSERT`` -> ``["SELECT", "INSERT"]`` (column lists dropped)."""
    names, depth, current = [], 0, ""
    for char in text:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            names.append(current)
            current = ""
        elif depth == 0 and char != ")":
            current += char
    names.append(current)
    return [" ".join(name.split()).upper() for name in names if name.strip()]


_TARGET_PART = re.compile(r"\*|`((?:[^`]|``)*)`")


def target_database(target: str) -> str:
    r"""The database of a grant's target: ```db`.`t``` -> ``db``, ``*.*`` -> ``*``; the escapes
    GRANT writes for its wildcards (``\_``, ``\%``) undone."""
    quoted = _TARGET_PART.match(target).group(1)
    if quoted is None:
        return "*"
    return quoted.replace("``", "`").replace("\\_", "_").replace("\\%", "%")


def extra_privileges(grants: list[str], allowed_databases: set[str] | None) -> list[str]:
    """What ``SHOW GRANTS`` lines give beyond SELECT on ``allowed_databases`` (lower-case names;
    None: not known yet, only the kinds of privilege are judged). Fails closed: a line it does
    not recognise counts as extra. Never returns a line's text (it may hold a password hash)."""
    extra: list[str] = []
    for line in grants:
        if line.startswith(("SET DEFAULT ROLE", "REVOKE")):
            # A default role needs a role grant, a partial revoke a global grant: both reported.
            continue
        if line.startswith("GRANT PROXY ON "):
            extra.append("PROXY")
            continue
        match = _GRANT.match(line)
        if match is None:
            role = _ROLE_GRANT.match(line)
            extra.append(f"role {role.group('roles')}" if role else "an unrecognised grant")
            continue
        privileges = _split_privileges(match.group("privileges"))
        database = target_database(match.group("target"))
        tail = match.group("tail")
        through = " (through PUBLIC)" if tail.startswith("PUBLIC") else ""
        global_level = database == "*"
        for privilege in privileges:
            if privilege == "USAGE":
                continue
            if privilege == "SELECT" and not global_level:
                name = database.lower()
                if allowed_databases is None or name in allowed_databases:
                    continue
                extra.append(
                    f"SELECT on {match.group('target')}{through} (not a benchmark database)"
                )
                continue
            extra.append(f"{privilege} on {match.group('target')}{through}")
        if "WITH GRANT OPTION" in tail.upper():
            extra.append(f"GRANT OPTION on {match.group('target')}{through}")
    return extra


def check_read_only(conn: pymysql.Connection) -> None:
    """Raise :class:`EvaluationUnavailable` unless the connection's account holds SELECT on the
    benchmark databases registered on this server and nothing else (see the module docstring).
    Read from the server (``CURRENT_USER()``, ``SHOW GRANTS``, ``SHOW DATABASES``), so the
    account decides, whatever the URL says."""
    with conn.cursor() as cursor:
        cursor.execute("SELECT CURRENT_USER()")
        account = cursor.fetchone()[0] or ""
        user, _, host = account.rpartition("@")
        if not user:
            raise EvaluationUnavailable(
                f"logged in as the anonymous account ''@'{host}', not as the account the URL "
                f"names: the server has an anonymous account for this client's host, which "
                f"matches before a 'user'@'%' account. {READER_ADVICE} `prepare` creates the "
                "reader for the hosts of anonymous accounts too; or drop them (DROP USER "
                f"''@'{host}', as mariadb-secure-installation does)."
            )
        cursor.execute("SHOW GRANTS")
        grants = [row[0] for row in cursor.fetchall()]
        extra = extra_privileges(grants, None)
        if not extra:
            registered = _registered_databases(cursor, account)
            extra = extra_privileges(grants, registered)
            cursor.execute("SHOW DATABASES")
            visible = {row[0].lower() for row in cursor.fetchall()}
            extra += [
                f"access to database `{name}` (not a benchmark database)"
                for name in sorted(visible - registered - SYSTEM_SCHEMAS)
            ]
    if extra:
        raise EvaluationUnavailable(
            f"the account {_account_text(account)} holds more than SELECT on the benchmark's "
            f"databases: {'; '.join(dict.fromkeys(extra))}. {READER_ADVICE}"
        )


def _account_text(account: str) -> str:
    user, _, host = account.rpartition("@")
    return f"'{user}'@'{host}'"


def _registered_databases(cursor, account: str) -> set[str]:
    """The databases ``prepare`` registered on this server (lower-case), with the metadata one."""
    try:
        cursor.execute(
            f"SELECT database_name FROM {META_DATABASE}.{META_DATABASES_TABLE}"  # noqa: S608
        )
    except pymysql.err.Error as error:
        raise EvaluationUnavailable(
            f"the server holds no benchmark prepared by `sqlbench-lmeval prepare` that the "
            f"account {_account_text(account)} may read ({_message(error)}): run `sqlbench-lmeval "
            "prepare <benchmark> --engine mysql --url <admin URL>` once for this server, then "
            "evaluate with the reader it creates"
        ) from None
    return {row[0].lower() for row in cursor.fetchall()} | {META_DATABASE}


def server_identity(cursor) -> str | None:
    """The identity ``prepare`` recorded on the server itself (a random UUID in
    ``sqlbench_lmeval_meta.server``), None when the server holds none. Not ``@@hostname`` and
    port (one server answers under many names and ports, containers share host names),
    ``@@server_id`` (1 on every default install) or ``@@server_uuid`` (MySQL only): a row that
    lives in the server's own data names it under every spelling of its URL."""
    try:
        cursor.execute(f"SELECT server_id FROM {META_DATABASE}.{META_SERVER_TABLE}")  # noqa: S608
    except pymysql.err.Error:
        return None
    row = cursor.fetchone()
    return row[0] if row else None


_fingerprints: dict[str, str] = {}


def database_fingerprint(url: str) -> str:
    """``"MariaDB 10.11.19 <sha256>"``: the server's version and a hash of ``CHECKSUM TABLE`` and
    creation time of every table of the database ``url`` names, for the gold cache key (the
    server's counterpart of a file's hash). Once per process and URL; raises pymysql errors."""
    if url not in _fingerprints:
        address = parse_url(url)
        conn = open_connection(address, address.database)
        try:
            with conn.cursor() as cursor:
                checksums = sorted(checksum_tables(cursor, address.database).items())
                # When the tables were (re)created: a reload may change plans and so the order
                # of tied rows, so gold cached before it is not reused.
                cursor.execute(
                    "SELECT table_name, CAST(create_time AS CHAR) FROM information_schema.tables "
                    "WHERE table_schema = DATABASE() ORDER BY table_name"
                )
                created = [list(row) for row in cursor.fetchall()]
                # The server by its recorded identity, so every spelling of its URL (and
                # every machine) keys the same gold; host and port where it has none.
                server = server_identity(cursor) or [address.host, address.port]
            # The session settings too: they decide the order of tied rows.
            settings = MARIADB_REPRODUCIBLE_TIES
            text = json.dumps([server, address.database, checksums, created, settings])
            digest = hashlib.sha256(text.encode()).hexdigest()
            _fingerprints[url] = f"{server_version(conn)} {digest}"
        finally:
            conn.close()
    return _fingerprints[url]


def server_place(address: ServerAddress) -> str:
    """The server ``address`` names, for messages (never the password)."""
    place = address.unix_socket or f"{address.host}:{address.port}"
    return f"the MySQL server at {place}"


def connection_failure(
    error: BaseException,
    address: ServerAddress,
    database: str | None = None,
    *,
    was_connected: bool = False,
) -> EvaluationUnavailable:
    """What a failure to connect to ``address`` (on ``database``) means for the evaluation: the
    one place that names the cause and the fix, for the engine and for the pre-flight checks.
    ``was_connected``: this process had a session, so a refusal now means the server went away.
    """
    if isinstance(error, EvaluationUnavailable):
        return error
    # A failing setup hook arrives wrapped (runner's "setup hook failed: ..."); what made
    # it fail decides.
    cause = error if isinstance(error, pymysql.err.Error) else error.__cause__
    code = _error_code(cause)
    text = _message(error)
    where = server_place(address)
    if cause is not None and is_busy(cause):
        return ServerBusy(f"{where} refuses new connections: {text}; {BUSY_ADVICE}")
    if code in _GONE_ERRORS or isinstance(cause, pymysql.err.InterfaceError):
        if was_connected:
            return ConnectionLost(f"lost the connection to {where}: {text}")
        return EvaluationUnavailable(
            f"cannot reach {where}: {text}; is the server running, and do the URL's "
            "host and port (or socket) point at it?"
        )
    if code == ER_ACCESS_DENIED_ERROR:
        return EvaluationUnavailable(
            f"cannot log in to {where} as {address.user!r}: {text}; the password in the URL or "
            "its option file is wrong, or the account was changed or dropped (prepare creates "
            "the read-only account; its password changes only with `prepare --rotate-reader`). "
            f"On a server with anonymous accounts a client from their host matches ''@'host' "
            f"before '{address.user}'@'%': re-running prepare (it keeps the password) creates "
            "the reader for those hosts"
        )
    if code in (ER_BAD_DB_ERROR, ER_DBACCESS_DENIED_ERROR):
        return EvaluationUnavailable(
            f"cannot open the database {database!r} on {where}: {text}; the benchmark's "
            "databases are missing there or this account may not read them: prepare the "
            "server again"
        )
    return EvaluationUnavailable(f"cannot open a session on {where}: {text}")


class _Session:
    """One sandboxed connection to a server plus the second connection that kills its queries."""

    def __init__(self, address: ServerAddress, setup: Callable | None) -> None:
        self.address = address
        self.setup = setup
        self.conn: pymysql.Connection | None = None
        self.killer: pymysql.Connection | None = None
        self.database: str | None = None
        self.applied: float | None = None  # the timeout_s the session variables hold
        self.version = ""
        self.was_connected = False  # a connection opened once: a refusal now means it went away
        self.opened: set[str] = set()  # databases whose tables this connection opened once
        self.status_overhead: dict[str, int] = {}  # what reading the work counters adds

    def ready(self, database: str | None, limits: Limits) -> pymysql.Connection:
        """The live connection, reconnected if the server dropped it, on ``database``."""
        if self.conn is None or not self.conn.open:
            self.close()
            self.conn = open_connection(self.address, database, wait_busy=False)
            try:
                check_read_only(self.conn)
            except EvaluationUnavailable:
                self.close()
                raise
            self.was_connected = True
            self.database = database
            self.applied = None
            self.version = server_version(self.conn)
            if self.setup is not None:
                self.setup(self.conn)
            self.opened = set()
            with self.conn.cursor() as cursor:
                self.status_overhead = status_overhead(cursor)
        if self.database != database and database is not None:
            self.conn.select_db(database)
            self.database = database
        if self.database is not None and self.database not in self.opened:
            open_tables(self.conn)
            self.opened.add(self.database)
        if self.applied != float(limits.timeout_s):
            self._apply(limits)
            self.applied = float(limits.timeout_s)
        return self.conn

    def _apply(self, limits: Limits) -> None:
        with self.conn.cursor() as cursor:
            cursor.execute("SET SESSION TRANSACTION READ ONLY")
            server_limit_s = float(limits.timeout_s) + SERVER_LIMIT_MARGIN_S
            if is_mariadb(self.conn):
                cursor.execute(
                    f"SET SESSION max_statement_time = %s, {MARIADB_REPRODUCIBLE_TIES}",
                    (server_limit_s,),
                )
            else:
                milliseconds = int(server_limit_s * 1000)
                cursor.execute("SET SESSION max_execution_time = %s", (milliseconds,))

    def kill_query(self, thread_id: int, *, connection: bool = False) -> None:
        """``KILL QUERY`` (``KILL CONNECTION`` with ``connection``) from the second connection
        (an account may kill its own threads)."""
        statement = "KILL CONNECTION" if connection else "KILL QUERY"
        for _ in range(2):  # one retry with a fresh connection if the old one went stale
            try:
                if self.killer is None or not self.killer.open:
                    # No waiting: the query's own server-side limit stops it meanwhile.
                    self.killer = open_connection(self.address, wait_busy=False)
                with self.killer.cursor() as cursor:
                    cursor.execute(f"{statement} {int(thread_id)}")
                return
            except pymysql.err.OperationalError as error:
                if error.args and error.args[0] == 1094:  # unknown thread: already gone
                    return
                _close(self.killer)
                self.killer = None
            except pymysql.err.Error:
                return

    def close(self) -> None:
        _close(self.conn)
        self.conn = None

    def where(self) -> str:
        """The server, for messages (never the password)."""
        return server_place(self.address)

    def unavailable(self, error: BaseException, database: str | None) -> EvaluationUnavailable:
        """What a failure to open a session on ``database`` means for the evaluation."""
        return connection_failure(error, self.address, database, was_connected=self.was_connected)


def work_status(cursor) -> dict[str, int]:
    """The session's :data:`WORK_STATUS` counters."""
    cursor.execute(_WORK_STATUS_QUERY)
    return {name: int(value) for name, value in cursor.fetchall()}


def status_overhead(cursor) -> dict[str, int]:
    """What reading the counters adds to them (the difference of two reads in a row)."""
    first = work_status(cursor)
    second = work_status(cursor)
    return {name: second[name] - first[name] for name in second}


def open_tables(conn: pymysql.Connection) -> None:
    """Open every base table of the current database once, so that loading a table's
    statistics (on its first open after a server start) counts as no query's work."""
    with conn.cursor() as cursor:
        cursor.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'"
        )
        for (table,) in cursor.fetchall():
            try:
                cursor.execute(f"SELECT * FROM {quote_identifier(table)} LIMIT 0")  # noqa: S608
                cursor.fetchall()
            except pymysql.err.ProgrammingError:  # a table the reader may not read: no query can
                pass


class DatabaseHandle:
    """What :func:`connect` returns: one database on a shared :class:`_Session`."""

    def __init__(self, session: _Session, database: str | None) -> None:
        self.session = session
        self.database = database

    def close(self) -> None:
        # The session serves other databases of the same server; it lives as long as the process.
        pass


_sessions: dict[tuple, _Session] = {}


def connect(url: str, limits: Limits, setup: Callable | None = None) -> DatabaseHandle:
    """A handle on the database ``url`` names. Connecting waits for :func:`run`, which raises
    :class:`EvaluationUnavailable` when it cannot (never an item's outcome); a malformed URL
    raises ValueError here."""
    address = parse_url(url)
    key = (address.server, setup)
    session = _sessions.get(key)
    if session is None:
        session = _sessions[key] = _Session(address, setup)
    return DatabaseHandle(session, address.database)


def close_all() -> None:
    """Close every session and its killer connection, each with the protocol's goodbye
    (``COM_QUIT``): a worker process does this before it exits, since a server logs a connection
    that vanishes without one as aborted."""
    while _sessions:
        _, session = _sessions.popitem()
        session.close()
        _close(session.killer)


def run(handle: DatabaseHandle, sql: str, limits: Limits) -> Outcome:
    """Run one SELECT on the handle's database; never raises for bad SQL. Raises
    :class:`EvaluationUnavailable` when no session can be opened, :class:`ConnectionLost` when
    the server dropped the connection or interrupted the query (see the module docstring)."""
    start = time.monotonic()
    refused = refusal(sql, DIALECT, ALLOWED_FIRST_KEYWORDS, start)
    if refused is not None:
        return refused
    session = handle.session
    try:
        conn = session.ready(handle.database, limits)
        with conn.cursor() as cursor:  # RAND() starts from the one seed (random_seed)
            cursor.execute(_SET_SEED)
    except Exception as error:
        session.close()
        raise session.unavailable(error, handle.database) from error
    before = _session_work(session, conn)
    deadline = Deadline(limits.timeout_s, partial(session.kill_query, conn.thread_id()))
    cursor = pymysql.cursors.SSCursor(conn)
    abandoned = False
    try:
        cursor.execute(sql)
        columns = tuple(d[0] for d in cursor.description or ())
        outcome = fetch_limited(cursor.fetchmany, columns, limits, start)
        # Stopped early by the cap: the rest of the stream is not worth draining.
        abandoned = outcome.status is Status.TOO_MANY_ROWS
    except pymysql.err.Error as error:
        deadline.stop()
        if _connection_lost(error, deadline.fired):
            session.close()
            raise ConnectionLost(
                f"lost the connection to {session.where()} during a query: {_message(error)}",
                during_query=True,
            ) from error
        outcome = _classify(error, start, limits)
    except MemoryError:
        abandoned = True
        outcome = out_of_memory(limits, start)
    finally:
        deadline.stop()
    work = None
    if abandoned:
        _stop_stream(session, conn, cursor)
        session.close()
    else:
        try:
            cursor.close()  # reads what is left of the stream (the EOF packet)
        except pymysql.err.Error:
            session.close()
        else:
            if outcome.ok:  # counted before a reconnect can reset the counters
                work = _work_since(session, conn, before)
            if _leaves_session_state(sql):
                session.close()
    if (deadline.fired or time.monotonic() - start > limits.timeout_s + SERVER_LIMIT_MARGIN_S) and (
        outcome.status is not Status.TIMEOUT
    ):
        # SLEEP()/BENCHMARK() stopped by KILL QUERY or by the server's limit return a value
        # without an error; the clock decides.
        outcome = stopped(limits.timeout_s, start)
    if outcome.ok and work is not None:
        outcome = replace(outcome, work=work)
    return outcome


def _session_work(session: _Session, conn: pymysql.Connection) -> dict[str, int]:
    """The session's work counters now (:class:`ConnectionLost` when they cannot be read)."""
    try:
        with conn.cursor() as status:
            return work_status(status)
    except pymysql.err.Error as error:
        session.close()
        raise ConnectionLost(
            f"lost the connection to {session.where()}: {_message(error)}"
        ) from error


def _work_since(session: _Session, conn: pymysql.Connection, before: dict[str, int]) -> int:
    """The growth of the work counters since ``before``, less the cost of reading them."""
    after = _session_work(session, conn)
    overhead = session.status_overhead
    return sum(after[name] - before.get(name, 0) - overhead.get(name, 0) for name in after)


def _stop_stream(session: _Session, conn: pymysql.Connection, cursor) -> None:
    """End a result set read only in part (row cap, byte budget, out of memory) without noise.

    ``KILL CONNECTION`` from the second connection stops the server sending and has it close
    the connection itself, which it does not log (the kill was asked for). Closing our end in
    mid-stream instead, the server logs an aborted connection, and stopping the query then
    reading what the server had already sent takes a second or more under load. PyMySQL would
    still take the result for unfinished and, when the cursor is collected, try to read the
    rest from the closed socket ("Exception ignored in ... SSCursor.close" on stderr): the
    result is marked finished here, the one PyMySQL internal this module touches."""
    session.kill_query(conn.thread_id(), connection=True)
    result = getattr(cursor, "_result", None)
    if result is not None:
        result.unbuffered_active = False


#: Functions whose call a later query on the same session could see: named locks and the
#: session's last insert id (``LAST_INSERT_ID(expr)`` sets what ``LAST_INSERT_ID()`` returns).
_SESSION_STATE_FUNCTIONS = ("get_lock", "last_insert_id")


def _leaves_session_state(sql: str) -> bool:
    """Whether the query may leave state behind on its connection for the next one to see:
    user variables (``@x := 1``, ``SELECT ... INTO @x``), named locks (``GET_LOCK``) or the
    last insert id (the rule: docs/engines.md#no-answer-changes-another). Such a connection is
    closed after the query; the next one starts clean. Textual and generous (``@@version``
    counts too): a needless reconnect costs milliseconds."""
    lowered = sql.lower()
    return "@" in sql or any(name in lowered for name in _SESSION_STATE_FUNCTIONS)


def _error_code(error: BaseException | None) -> int | None:
    if isinstance(error, pymysql.err.Error) and error.args and isinstance(error.args[0], int):
        return error.args[0]
    return None


def _connection_lost(error: pymysql.err.Error, deadline_fired: bool) -> bool:
    """Whether ``error`` says the connection is gone, or the query was interrupted by someone
    other than our deadline (a server shutting down, an operator): not the query's outcome."""
    code = _error_code(error)
    if code in _GONE_ERRORS or isinstance(error, pymysql.err.InterfaceError):
        return True
    return code == ER_QUERY_INTERRUPTED and not deadline_fired


def _classify(error: pymysql.err.Error, start: float, limits: Limits) -> Outcome:
    if _error_code(error) in _TIMEOUT_ERRORS:
        return stopped(limits.timeout_s, start)
    return Outcome(Status.ERROR, error=_message(error), elapsed_s=time.monotonic() - start)


def _message(error: BaseException) -> str:
    if isinstance(error, pymysql.err.Error) and len(error.args) == 2:
        return f"({error.args[0]}) {error.args[1]}"
    return str(error) or type(error).__name__


def _close(conn) -> None:
    if conn is None:
        return
    try:
        conn.close()
    except Exception:
        pass


ENGINE = Engine(
    name="mysql",
    dialect=DIALECT,
    server=True,
    connect=connect,
    run=run,
    # The driver's; the server's version is part of the database fingerprint.
    version=lambda: driver_version("PyMySQL"),
    fingerprint=database_fingerprint,
    check_rights=check_read_only,
    database_name=database_name,
    public_path=public_url,
    close_all=close_all,
    work_unit="handler rows (read, temporary-table and sorted rows)",
)
