"""LogicCat on a MySQL-protocol server: load the upstream dumps as they are, one database each.

``prepare_server(admin_url, source)`` (``sqlbench-lmeval prepare logiccat --engine mysql --url``):

- every ``db_id`` that has questions gets its own database, named like the ``db_id``, filled by
  sending the pinned upstream dump unchanged as one multi-statement batch over the admin
  connection (trusted text: the only place multi-statements are on). The six Spider-derived
  databases load from their MySQL dumps too; their gold is SQLite SQL upstream (the project
  runs it on the authors' SQLite files), so on the server it mostly fails, as in the MariaDB
  reference;
- one substitution, only where the server lacks the collation: MySQL 8's default
  ``utf8mb4_0900_ai_ci`` (all but 5 dumps) becomes MariaDB's ``utf8mb4_uca1400_ai_ci`` (10.10+;
  the same UCA accent- and case-insensitive comparison; ``utf8mb4_general_ci`` on older ones);
- every table's row count is checked against the rows of the dump's INSERTs (counted with the
  project's dump parser), then the read-only account is (re)created with SELECT on exactly these
  databases, and a manifest records server version, collation mapping, tables, row counts and
  load times.

Table names: the dumps are lower-case and gold SQL is often mixed case; the server must run with
``lower_case_table_names=1`` (as the dumps' own server did), which is checked.
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
import os
import re
import time
import urllib.parse
from pathlib import Path

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.logiccat import mysqldump
from sqlbench_lmeval.logiccat import source as source_module

MANIFEST_NAME = "mysql-server.json"
READER_OPTION_FILE = "mysql-reader.cnf"  # the read-only account's password, owner-only
URL_ENV = "SQLBENCH_LMEVAL_MYSQL_URL"
MYSQL8_COLLATION = "utf8mb4_0900_ai_ci"
COLLATION_FALLBACKS = ("utf8mb4_uca1400_ai_ci", "utf8mb4_general_ci")
READER_USER = "logiccat_reader"
ENGINE_DIALECT = "mysql"  # the sqlglot dialect of gold and predictions on this engine


def require_driver() -> None:
    """A UserError that says how to install the driver when PyMySQL is missing."""
    import importlib.util

    if importlib.util.find_spec("pymysql") is None:
        raise UserError('the mysql engine needs PyMySQL: pip install "sqlbench-lmeval[mysql]"')


def dump_row_counts(text: str) -> dict[str, int]:
    """Rows per (lower-case) table that the dump's INSERT statements insert."""
    from sqlglot import exp

    counts: dict[str, int] = {}
    for statement in mysqldump.parse_dump(text):
        if isinstance(statement, exp.Create) and statement.kind == "TABLE":
            counts.setdefault(statement.this.find(exp.Table).name.lower(), 0)
        elif isinstance(statement, exp.Insert):
            table = statement.this.find(exp.Table).name.lower()
            values = statement.expression
            rows = len(values.expressions) if isinstance(values, exp.Values) else 0
            counts[table] = counts.get(table, 0) + rows
    return counts


def _admin_connection(admin_url: str):
    from sqlbench_lmeval.execution.mysql import open_connection, parse_url

    # The dumps are trusted text, sent as one batch.
    return open_connection(parse_url(admin_url), trusted_batches=True)


def collation_mapping(cursor) -> dict[str, str]:
    """{MySQL 8 collation: what this server uses instead}, empty when it knows MySQL 8's."""
    cursor.execute("SHOW COLLATION LIKE %s", (MYSQL8_COLLATION,))
    if cursor.fetchall():
        return {}
    for candidate in COLLATION_FALLBACKS:
        cursor.execute("SHOW COLLATION LIKE %s", (candidate,))
        if cursor.fetchall():
            return {MYSQL8_COLLATION: candidate}
    raise UserError(f"the server knows neither {MYSQL8_COLLATION} nor {COLLATION_FALLBACKS}")


def _run_batch(cursor, text: str) -> None:
    cursor.execute(text)
    while cursor.nextset():
        pass


def load_database(cursor, db_id: str, text: str, collations: dict[str, str]) -> dict[str, int]:
    """(Re)create ``db_id`` from its dump; returns the row count of every table it holds."""
    from sqlbench_lmeval.execution.mysql import quote_identifier

    for old, new in collations.items():
        text = text.replace(old, new)
    name = quote_identifier(db_id)
    cursor.execute(f"DROP DATABASE IF EXISTS {name}")
    cursor.execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4")
    cursor.execute(f"USE {name}")
    # TIMESTAMP values are stored in UTC and shown in the session zone: load and read (see
    # set_clock) in one fixed zone, so the dump's literals read back unchanged anywhere.
    cursor.execute("SET time_zone = '+00:00'")
    _run_batch(cursor, text)
    cursor.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = %s AND table_type = 'BASE TABLE'",
        (db_id.lower(),),
    )
    counts = {}
    for (table,) in cursor.fetchall():
        quoted = f"{name}.{quote_identifier(table)}"
        cursor.execute(f"SELECT COUNT(*) FROM {quoted}")
        counts[table.lower()] = cursor.fetchone()[0]
        # Settle the optimizer statistics now (exact: every table is smaller than the sampled
        # pages) instead of whenever the background recalculation runs: plans, and with them
        # the order of tied rows under LIMIT, are then the same for gold and predictions.
        cursor.execute(f"ANALYZE TABLE {quoted}")
        cursor.fetchall()
    return counts


def db_ids(source) -> list[str]:
    """Every ``db_id`` that has questions, sorted."""
    return sorted({record["db_id"] for record in source_module.load_records(source)})


def prepare_server(admin_url: str, source, manifest_dir: Path | None = None) -> dict:
    """Load every LogicCat database into the server, check it, create the reader; the manifest."""
    from sqlbench_lmeval.execution.mysql import redact, server_version
    from sqlbench_lmeval.execution.mysql_admin import create_read_only_account
    from sqlbench_lmeval.scoring import gold_health

    names = db_ids(source)
    conn = _admin_connection(admin_url)
    databases: dict[str, dict] = {}
    started = time.monotonic()
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT @@lower_case_table_names")
            if int(cursor.fetchone()[0]) != 1:
                raise UserError(
                    "the server must run with lower_case_table_names=1 (the dumps' tables are "
                    "lower-case, gold SQL mixes case): start it with --lower-case-table-names=1"
                )
            collations = collation_mapping(cursor)
            version = server_version(conn)
            for db_id in names:
                text = source_module.dump_file(source, db_id).read_text("utf-8")
                load_start = time.monotonic()
                loaded = load_database(cursor, db_id, text, collations)
                seconds = time.monotonic() - load_start
                expected = dump_row_counts(text)
                if loaded != expected:
                    raise UserError(f"{db_id}: rows on the server {loaded} != dump {expected}")
                databases[db_id] = {
                    "tables": loaded,
                    "load_s": round(seconds, 3),
                    "schema": upstream_schema(text),
                }
    finally:
        conn.close()
    load_seconds = time.monotonic() - started
    reader_url = create_read_only_account(admin_url, names, user=READER_USER)
    gold_start = time.monotonic()
    golds = [(r["idx"], r["db_id"], r["query"]) for r in source_module.load_records(source)]
    outcomes = run_gold_on_server(golds, reader_url)
    # Twice, in fresh worker processes (so on other connections), as a check: the engine keeps
    # tie order reproducible (execution/mysql.py; before, ~135 of 4,036 gold queries changed
    # their tied rows between runs), so only RAND() gold should differ. Whatever does differ
    # gets the flag the SQLite build gives tie-dependent gold.
    again = run_gold_on_server(golds, reader_url)
    unstable = sorted(
        item_id
        for item_id, outcome in outcomes.items()
        if (outcome.status, outcome.rows) != (again[item_id].status, again[item_id].rows)
    )
    manifest = {
        "engine": "mysql",
        "server_version": version,
        "dataset_version": f"logiccat-{source.commit[:7]}-mysql-{version.replace(' ', '-')}",
        "server": redact(admin_url),
        "collations": collations,
        "databases": databases,
        "load_s": round(load_seconds, 3),
        "reader_url": reader_url,
        # Judged as on SQLite (scoring.gold_health): ok / empty / all_null / error / ...
        "gold_status": {str(i): gold_health(o) for i, o in outcomes.items()},
        "gold_s": round(time.monotonic() - gold_start, 3),
        "unstable_order": unstable,
    }
    if manifest_dir is not None:
        manifest["reader_url"] = write_reader_option_file(reader_url, Path(manifest_dir))
        write_manifest(manifest, Path(manifest_dir))
    return manifest


def write_reader_option_file(url: str, folder: Path) -> str:
    """The reader's password into a MySQL option file (owner-only) in ``folder``; returns
    ``url`` without the password, pointing at that file. That URL is what items carry into
    lm-eval documents (``db_path``) and so into ``--log_samples`` output: no secret in them."""
    from sqlbench_lmeval.execution.mysql import parse_url
    from sqlbench_lmeval.execution.mysql_admin import with_account

    address = parse_url(url)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / READER_OPTION_FILE
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(f"[client]\npassword = {address.password}\n")
    public = urllib.parse.urlsplit(with_account(url, address.user, ""))
    # with_account leaves "user:@host": drop the empty password's colon.
    netloc = public.netloc.replace(":@", "@", 1)
    options = [*urllib.parse.parse_qsl(public.query), ("read_default_file", str(path.resolve()))]
    query = urllib.parse.urlencode(options)
    return urllib.parse.urlunsplit(public._replace(netloc=netloc, query=query))


def write_manifest(manifest: dict, folder: Path) -> Path:
    """The manifest as JSON, readable by its owner only (it describes the server's accounts;
    the reader's password itself is in the option file beside it)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / MANIFEST_NAME
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, ensure_ascii=False, indent=1)
    return path


def prepare_command(url: str | None, source, cache_dir) -> dict:
    """``prepare logiccat --engine mysql``: ``url`` (admin) or ``$SQLBENCH_LMEVAL_MYSQL_URL``;
    the manifest goes to :func:`manifest_dir` of this cache."""
    from sqlbench_lmeval.paths import cache_dir as cache_root

    require_driver()
    url = url or os.environ.get(URL_ENV)
    if not url:
        raise UserError(f"--engine mysql needs --url mysql://admin:pass@host:port or ${URL_ENV}")
    resolved = source_module.resolve_source(source, cache_root(cache_dir))
    return prepare_server(url, resolved, manifest_dir=manifest_dir(cache_dir))


def manifest_dir(cache_dir=None) -> Path:
    """``<cache>/logiccat``: beside the SQLite bundle folder, which a rebuild replaces whole."""
    from sqlbench_lmeval.paths import cache_dir as cache_root

    return cache_root(cache_dir) / "logiccat"


# ---------------------------------------------------------------------------------------------
# Gold on the server: the frozen clock and the run
# ---------------------------------------------------------------------------------------------

FROZEN_CLOCK_SETUP = "sqlbench_lmeval.logiccat.server:freeze_clock"
REFERENCE_CLOCK_SETUP = "sqlbench_lmeval.logiccat.server:reference_clock"


def set_clock(conn, now: dt.datetime) -> None:
    """``NOW()``/``CURDATE()``/... return ``now`` on this connection: the session zone is UTC
    and ``timestamp`` is ``now`` read as UTC (``RAND()`` is not frozen)."""
    with conn.cursor() as cursor:
        cursor.execute("SET time_zone = '+00:00'")
        cursor.execute("SET timestamp = %s", (calendar.timegm(now.timetuple()),))


def freeze_clock(conn) -> None:
    """``Database.setup`` of every LogicCat database on a server: SQLite's frozen instant."""
    from sqlbench_lmeval.logiccat.mysql_functions import FROZEN_NOW

    set_clock(conn, FROZEN_NOW)


def reference_clock(conn) -> None:
    """The clock of the MariaDB reference run (fidelity measurement only)."""
    from sqlbench_lmeval.logiccat.fidelity import REFERENCE_NOW

    set_clock(conn, REFERENCE_NOW)


def reader_url(manifest: dict) -> str:
    return manifest["reader_url"]


def read_manifest(cache_dir=None) -> dict:
    """The manifest ``prepare logiccat --engine mysql`` wrote for this cache."""
    path = manifest_dir(cache_dir) / MANIFEST_NAME
    if not path.is_file():
        raise UserError(
            f"no MySQL server prepared for this cache ({path} is missing): run "
            "`sqlbench-lmeval prepare logiccat --engine mysql --url mysql://admin:pass@host:port`"
        )
    return json.loads(path.read_text("utf-8"))


def server_database(url: str, db_id: str, setup: str = FROZEN_CLOCK_SETUP):
    """The execution ``Database`` of ``db_id`` on the server ``url`` points at."""
    from sqlbench_lmeval.execution import Database
    from sqlbench_lmeval.execution.mysql import database_url

    return Database("mysql", database_url(url, db_id), setup)


def run_gold_on_server(
    golds, url: str, *, setup: str = FROZEN_CLOCK_SETUP, workers: int | None = None, limits=None
) -> dict[int, object]:
    """Upstream MySQL gold, verbatim, on the server: ``golds`` are (id, db_id, sql);
    returns id -> Outcome."""
    from sqlbench_lmeval.execution import Job, Limits, execute_many

    golds = list(golds)
    jobs = [Job(server_database(url, db_id, setup), sql) for _, db_id, sql in golds]
    outcomes = execute_many(jobs, limits or Limits(), workers=workers, progress=None)
    return {gold[0]: outcome for gold, outcome in zip(golds, outcomes, strict=True)}


_CREATE_STATEMENT = re.compile(r"^CREATE\b[\s\S]*?;[ \t]*$", re.MULTILINE)


def upstream_schema(text: str) -> str:
    """The dump's CREATE statements exactly as written (MySQL DDL with its Chinese COMMENTs),
    separated by a blank line: what a prompt for this engine shows."""
    return "\n\n".join(match.group(0).strip() for match in _CREATE_STATEMENT.finditer(text))


# ---------------------------------------------------------------------------------------------
# Items on the server (engine "mysql")
# ---------------------------------------------------------------------------------------------


def run_url(url: str | None, manifest: dict) -> str:
    """The URL predictions run under: the read-only account of the prepared server when ``url``
    is empty or points at that same server (host and port), else ``url`` as given."""
    from sqlbench_lmeval.execution.mysql import parse_url

    url = url or os.environ.get(URL_ENV)
    reader = manifest["reader_url"]
    if not url:
        return reader
    given, prepared = parse_url(url), parse_url(reader)
    if (given.host, given.port, given.unix_socket) == (
        prepared.host,
        prepared.port,
        prepared.unix_socket,
    ):
        return reader
    return url


def server_items(bundle, prompted: str, url: str | None, cache_dir=None) -> list:
    """The bundle's items on the server: upstream MySQL gold verbatim, MySQL dialect, gold
    health as judged on the server at prepare time, flags as judged on SQLite plus
    ``nondeterministic_order`` where two server runs ordered the gold's rows differently."""
    from sqlbench_lmeval.logiccat.gold import NONDETERMINISTIC_ORDER
    from sqlbench_lmeval.scoring import Item

    require_driver()
    manifest = read_manifest(cache_dir)
    url = run_url(url, manifest)
    statuses = manifest["gold_status"]
    unstable = set(manifest.get("unstable_order", ()))

    def flags(record) -> tuple[str, ...]:
        if record.id in unstable and NONDETERMINISTIC_ORDER not in record.flags:
            return (*record.flags, NONDETERMINISTIC_ORDER)
        return tuple(record.flags)

    return [
        Item(
            id=record.id,
            question=record.question,
            database=server_database(url, record.db_id),
            gold_sql=record.gold_sql_mysql,
            dialect=ENGINE_DIALECT,
            category=record.category,
            gold_status=statuses.get(str(record.id), record.gold_status),
            flags=flags(record),
            prediction_dialect=None if prompted == ENGINE_DIALECT else prompted,
        )
        for record in bundle.records
    ]
