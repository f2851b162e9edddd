"""A MySQL-protocol server (MariaDB or MySQL 8), sandboxed: hostile SQL in, :class:`Outcome` out.

``Database("mysql", "mysql://user:password@host:port/dbname")`` names one database on a server
(``?unix_socket=/path`` connects through a socket instead of the port). A URL without password
may name a MySQL option file instead, ``?read_default_file=/path/reader.cnf``, whose
``[client]`` section holds it: the URL can then be written into documents and logs without the
secret (the file stays readable by its owner only). The account in the URL
should be the read-only one that ``prepare --engine mysql`` creates (SELECT on the benchmark
databases only): the server's privilege system is the first and strongest wall.

Driver: PyMySQL - pure Python, no C compiler or client library (libmariadb/libmysqlclient) to
install, one wheel for every platform and Python, maintained in the PyMySQL organisation and
the driver SQLAlchemy and Django document for this case. Result sets here are small (capped), so
mysqlclient's C speed buys nothing worth a system dependency.

Defences, per connection (one :class:`_Session` per server, account and setup hook in a
process, shared by all its databases through ``COM_INIT_DB``):

1. the client never enables ``CLIENT_MULTI_STATEMENTS`` (a ``;`` followed by a second statement
   is a syntax error on the server) and ``local_infile`` is off (the server cannot ask the client
   for a file);
2. ``SET SESSION TRANSACTION READ ONLY``: even an account with write grants could not write;
3. a client-side timer issues ``KILL QUERY`` from a second connection at the deadline (it stops
   ``SLEEP``/``BENCHMARK`` and anything the server setting misses, e.g. a MySQL optimizer hint
   that lifts ``max_execution_time``), and ``max_statement_time`` (MariaDB, seconds) /
   ``max_execution_time`` (MySQL, milliseconds) stop the statement on the server shortly after,
   should the client be gone;
4. rows stream through an unbuffered cursor under the row cap and byte budget of
   :func:`~sqlbench_lmeval.execution.fetch.fetch_limited`; a result cut off there is ended with
   ``KILL CONNECTION`` (not drained) and the next query gets a new connection;
5. only statements whose first keyword is SELECT or WITH are sent (``SET``, ``KILL``, ``DO``,
   ``CALL``, ``LOAD DATA``, ... never reach the server; an executable comment ``/*! ... */`` in
   front counts as a statement of unknown kind and is refused too).

A server that drops the connection (restart, ``KILL CONNECTION``, network) makes that item
``crashed``; the session reconnects (and re-runs the setup hook) for the next one. A query that
may leave user variables or named locks behind is followed by a reconnect too, so no query sees
another's session state.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import pymysql
import pymysql.cursors

from sqlbench_lmeval.execution.deadline import Deadline
from sqlbench_lmeval.execution.fetch import fetch_limited
from sqlbench_lmeval.execution.job import Limits
from sqlbench_lmeval.execution.outcome import Outcome, Status

VERSION = pymysql.VERSION_STRING
CONNECT_TIMEOUT_S = 10
# The server's own statement limit is the backstop (a worker killed mid-query leaves its query
# running on the server): it sits a little after the client's KILL QUERY, because a server that
# stops BENCHMARK()/SLEEP() at its limit returns a value, not an error, and only the client
# knows the deadline was the reason.
SERVER_LIMIT_MARGIN_S = 0.5
ALLOWED_FIRST_KEYWORDS = frozenset({"SELECT", "WITH"})
# Internal temporary tables on disk (Aria), never in memory (HEAP). With HEAP temporary tables
# the order of rows tied under an ORDER BY that sorts a temporary table ("Using temporary;
# Using filesort": most joins and GROUP BYs sorted on a computed key), and which tied rows its
# LIMIT keeps, changed from run to run on MariaDB 10.11 with identical plans: 111-174 of 4,036
# gold queries differed between two runs of all gold, even on one connection; with this
# setting 0 (the 2 left depend on RAND()). Consistent with filesort falling back to the row's
# position, for a HEAP table a memory address, where sort keys tie; an Aria row's position is
# its insertion order, the same every run. MySQL 8 (TempTable engine) is not measured.
MARIADB_REPRODUCIBLE_TIES = "tmp_memory_table_size = 0"

# Server error numbers (both MariaDB and MySQL unless noted).
ER_QUERY_INTERRUPTED = 1317  # KILL QUERY
ER_STATEMENT_TIMEOUT = 1969  # MariaDB: max_statement_time exceeded
ER_QUERY_TIMEOUT = 3024  # MySQL: max_execution_time exceeded
_TIMEOUT_ERRORS = frozenset({ER_QUERY_INTERRUPTED, ER_STATEMENT_TIMEOUT, ER_QUERY_TIMEOUT})
CR_SERVER_GONE = 2006
CR_SERVER_LOST = 2013
CR_CONNECTION_ERROR = 2002
CR_CONN_HOST_ERROR = 2003
_LOST_ERRORS = frozenset({CR_SERVER_GONE, CR_SERVER_LOST, CR_CONNECTION_ERROR, CR_CONN_HOST_ERROR})


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
        option_file=query.get("read_default_file", [None])[0],
    )


def database_url(server_url: str, database: str) -> str:
    """The URL of one database on the server ``server_url`` points at."""
    parts = urllib.parse.urlsplit(server_url)
    path = "/" + urllib.parse.quote(database, safe="")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def redact(url: str) -> str:
    """``url`` without its password, for messages and manifests."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(":" + parts.password + "@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def open_connection(
    address: ServerAddress, database: str | None = None, *, trusted_batches: bool = False
) -> pymysql.Connection:
    """A plain PyMySQL connection: utf8mb4, autocommit, no LOCAL INFILE, one statement per call.

    ``trusted_batches`` allows several statements per call, for the admin connection that loads
    the upstream dumps (our own, trusted text); model-written SQL never runs on such a connection.
    """
    return pymysql.connect(
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
            # The session settings too: they decide the order of tied rows.
            settings = MARIADB_REPRODUCIBLE_TIES
            text = json.dumps(
                [address.host, address.port, address.database, checksums, created, settings]
            )
            digest = hashlib.sha256(text.encode()).hexdigest()
            _fingerprints[url] = f"{server_version(conn)} {digest}"
        finally:
            conn.close()
    return _fingerprints[url]


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

    def ready(self, database: str | None, limits: Limits) -> pymysql.Connection:
        """The live connection, reconnected if the server dropped it, on ``database``."""
        if self.conn is None or not self.conn.open:
            self.close()
            self.conn = open_connection(self.address, database)
            self.database = database
            self.applied = None
            self.version = server_version(self.conn)
            if self.setup is not None:
                self.setup(self.conn)
        if self.database != database and database is not None:
            self.conn.select_db(database)
            self.database = database
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
                    self.killer = open_connection(self.address)
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
    """A handle on the database ``url`` names. Connecting waits for :func:`run`, so a server that
    cannot be reached makes that item ``crashed`` (never a cacheable error); a malformed URL
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


_COMMENT_OR_SPACE = re.compile(r"\s+|--[^\n]*(?:\n|$)|#[^\n]*(?:\n|$)|/\*(?![!M])[\s\S]*?\*/")
_WORD = re.compile(r"[A-Za-z_]+")


def _code_start(sql: str) -> int:
    """Where the code starts after blanks, ``--``/``#``/ordinary ``/* */`` comments and ``(``.

    An executable comment (``/*!``, ``/*M!``) is code, so it is not skipped.
    """
    position = 0
    while position < len(sql):
        match = _COMMENT_OR_SPACE.match(sql, position)
        if match:
            position = match.end()
        elif sql[position] == "(":
            position += 1
        else:
            break
    return position


def first_keyword(sql: str) -> str:
    """The statement's first keyword in upper case ('' if it does not start with a word)."""
    word = _WORD.match(sql, _code_start(sql))
    return word.group(0).upper() if word else ""


def run(handle: DatabaseHandle, sql: str, limits: Limits) -> Outcome:
    """Run one SELECT on the handle's database; never raises for bad SQL or a lost server."""
    start = time.monotonic()
    if _code_start(sql) >= len(sql):
        return Outcome(Status.NO_SQL, error="no statement to run")
    keyword = first_keyword(sql)
    if keyword not in ALLOWED_FIRST_KEYWORDS:
        return Outcome(
            Status.ERROR,
            error=f"only SELECT statements are allowed (got {keyword or 'no keyword'})",
            elapsed_s=time.monotonic() - start,
        )
    session = handle.session
    try:
        conn = session.ready(handle.database, limits)
    except pymysql.err.Error as error:
        session.close()
        return _crashed(error, start)
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
        outcome = _classify(error, start, limits)
    except MemoryError:
        abandoned = True
        outcome = Outcome(
            Status.ERROR,
            error=f"out of memory (limit {limits.memory_mb} MiB)",
            elapsed_s=time.monotonic() - start,
        )
    finally:
        deadline.stop()
    if abandoned:
        _stop_stream(session, conn, cursor)
    if outcome.status is Status.CRASHED or abandoned or _leaves_session_state(sql):
        session.close()
    else:
        try:
            cursor.close()  # reads what is left of the stream (the EOF packet)
        except pymysql.err.Error:
            session.close()
    if (deadline.fired or time.monotonic() - start > limits.timeout_s + SERVER_LIMIT_MARGIN_S) and (
        outcome.status is not Status.TIMEOUT
    ):
        # SLEEP()/BENCHMARK() stopped by KILL QUERY or by the server's limit return a value
        # without an error; the clock decides.
        outcome = Outcome(
            Status.TIMEOUT,
            error=f"stopped after {limits.timeout_s:g} s",
            elapsed_s=time.monotonic() - start,
        )
    return outcome


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


def _leaves_session_state(sql: str) -> bool:
    """Whether the query may leave state behind on its connection for the next one to see:
    user variables (``@x := 1``, ``SELECT ... INTO @x``) or named locks (``GET_LOCK``). Such a
    connection is closed after the query; the next one starts clean. Textual and generous
    (``@@version`` counts too): a needless reconnect costs milliseconds."""
    return "@" in sql or "get_lock" in sql.lower()


def _classify(error: pymysql.err.Error, start: float, limits: Limits) -> Outcome:
    code = error.args[0] if error.args and isinstance(error.args[0], int) else None
    if code in _TIMEOUT_ERRORS:
        return Outcome(
            Status.TIMEOUT,
            error=f"stopped after {limits.timeout_s:g} s",
            elapsed_s=time.monotonic() - start,
        )
    if code in _LOST_ERRORS or isinstance(error, pymysql.err.InterfaceError):
        return _crashed(error, start)
    return Outcome(Status.ERROR, error=_message(error), elapsed_s=time.monotonic() - start)


def _crashed(error: BaseException, start: float) -> Outcome:
    return Outcome(
        Status.CRASHED,
        error=f"server connection lost: {_message(error)}",
        elapsed_s=time.monotonic() - start,
    )


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
