"""LogicCat on a MySQL-protocol server: ``prepare_server(admin_url, source)`` (``sqlbench-lmeval
prepare logiccat --engine mysql --url``) loads the upstream dumps as they are, one database
each, proves the read-only account and judges the gold, and records it all on the server as the
last step; a prepared server is then only verified and read, and any machine evaluates with the
reader alone (:func:`server_run`). The steps and rules: docs/mysql.md, docs/many-machines.md."""

from __future__ import annotations

import calendar
import configparser
import datetime as dt
import hashlib
import json
import os
import re
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.execution import (
    Database,
    GoldCache,
    Job,
    Limits,
    Status,
    engines,
    execute_many,
)
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable
from sqlbench_lmeval.logiccat import mysqldump
from sqlbench_lmeval.logiccat import source as source_module
from sqlbench_lmeval.logiccat.fidelity import REFERENCE_NOW
from sqlbench_lmeval.logiccat.gold import NONDETERMINISTIC_ORDER
from sqlbench_lmeval.logiccat.mysql_functions import FROZEN_NOW, FROZEN_NOW_TEXT
from sqlbench_lmeval.paths import cache_dir as cache_root
from sqlbench_lmeval.paths import gold_cache_dir
from sqlbench_lmeval.scoring.answer import gold_health
from sqlbench_lmeval.scoring.item import Item

MANIFEST_NAME = "mysql-server.json"  # this cache's prepared server: where, and its reader
READER_OPTION_FILE = "mysql-reader.cnf"  # the read-only account's password, owner-only
BENCHMARK = "logiccat"  # its name in the server's metadata database
# prepare stops instead of marking the server prepared when fewer gold queries than this share
# ran (MariaDB 10.11.19: 3,559 of 4,036; the rest are SQLite-only or MySQL-8-only gold).
MIN_GOLD_RAN = 0.5
URL_ENV = "SQLBENCH_LMEVAL_MYSQL_URL"
MYSQL8_COLLATION = "utf8mb4_0900_ai_ci"
COLLATION_FALLBACKS = ("utf8mb4_uca1400_ai_ci", "utf8mb4_general_ci")
READER_USER = "logiccat_reader"
ENGINE_DIALECT = "mysql"  # the sqlglot dialect of gold and predictions on this engine


def require_driver() -> None:
    """The one-line error naming the mysql extra when PyMySQL is not installed."""
    engines.require_driver("mysql")


def dump_row_counts(text: str) -> dict[str, int]:
    """Rows per (lower-case) table that the dump's INSERT statements insert."""

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
    from sqlbench_lmeval.execution.mysql import (
        open_connection,
        parse_url,
    )  # optional: PyMySQL (the mysql extra)

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
    from sqlbench_lmeval.execution.mysql import (
        quote_identifier,
    )  # optional: PyMySQL (the mysql extra)

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


# ---------------------------------------------------------------------------------------------
# prepare: load or verify, the reader, its proof, the gold, the record on the server
# ---------------------------------------------------------------------------------------------


def _table_state(cursor, database: str) -> tuple[dict[str, int], dict[str, int | None]]:
    """Row count and ``CHECKSUM TABLE`` of every base table of ``database`` (lower-case names)."""
    from sqlbench_lmeval.execution.mysql import (
        checksum_tables,
        quote_identifier,
    )  # optional: PyMySQL (the mysql extra)

    checksums = {t.lower(): c for t, c in checksum_tables(cursor, database.lower()).items()}
    counts = {}
    for table in checksums:
        cursor.execute(
            f"SELECT COUNT(*) FROM {quote_identifier(database)}.{quote_identifier(table)}"
        )
        counts[table] = cursor.fetchone()[0]
    return counts, checksums


def _verify_load(cursor, document: dict) -> None:
    """The server still holds what prepare loaded: same tables, row counts and checksums."""
    for db_id, recorded in document["databases"].items():
        counts, checksums = _table_state(cursor, db_id)
        if counts != recorded["tables"] or checksums != recorded["checksums"]:
            changed = sorted(
                table
                for table in set(counts) | set(recorded["tables"])
                if counts.get(table) != recorded["tables"].get(table)
                or checksums.get(table) != recorded["checksums"].get(table)
            )
            raise UserError(
                f"the server's LogicCat data changed since prepare loaded it: {db_id} tables "
                f"{', '.join(changed)} differ in rows or CHECKSUM TABLE. Scores on it would not "
                "be comparable: run prepare with --reload to load the dumps again"
            )


def _refuse_public_grants(cursor, allowed: set[str]) -> None:
    """Stop before loading when every account, and so the reader, holds more than SELECT
    through PUBLIC (MariaDB 10.11's ``mariadb-install-db`` grants the test databases to it)."""
    from sqlbench_lmeval.execution.mysql import (
        extra_privileges,
    )  # optional: PyMySQL (the mysql extra)
    from sqlbench_lmeval.execution.mysql_admin import (
        public_grants,
    )  # optional: PyMySQL (the mysql extra)

    lines = public_grants(cursor)
    extra = extra_privileges(lines, allowed)
    if extra:
        targets = sorted({line.split(" ON ", 1)[1].split(" TO ", 1)[0] for line in lines})
        revokes = " ".join(f"REVOKE ALL PRIVILEGES ON {target} FROM PUBLIC;" for target in targets)
        raise UserError(
            "every account on this server holds privileges through PUBLIC, so a read-only "
            f"account cannot exist here: {'; '.join(dict.fromkeys(extra))}. These are the "
            "test databases mariadb-install-db sets up unless --skip-test-db; remove them as "
            f"mariadb-secure-installation does, e.g. `{revokes}` (and DROP DATABASE test if "
            "unused), then run prepare again. Nothing was loaded."
        )


def _ensure_reader(cursor, names: list[str], rotate: bool, known: str | None) -> tuple:
    """The reader accounts: created (new password) when missing or ``rotate``, else kept (a host
    an anonymous account now needs is added with the same credentials). SELECT on ``names`` and
    the metadata database where missing. Returns (password or None when kept and not ``known``,
    what was done as a sentence)."""
    # optional: PyMySQL (the mysql extra)
    from sqlbench_lmeval.execution import mysql_admin as admin

    anonymous = admin.anonymous_hosts(cursor)
    needed = admin.reader_hosts(cursor)
    existing = admin.account_hosts(cursor, READER_USER)
    shadow = ""
    if anonymous:
        shown = ", ".join(f"''@'{host}'" for host in anonymous)
        shadow = (
            f" (the server has anonymous accounts {shown}: a client from such a host would match "
            f"them before '{READER_USER}'@'%', so the reader exists for those hosts too)"
        )
    hosts = ", ".join(f"'{host}'" for host in needed)
    if rotate or not existing:
        password = admin.new_password()
        for host in needed:
            if host in existing:
                admin.set_password(cursor, READER_USER, host, password)
            else:
                admin.create_account(cursor, READER_USER, host, password)
        done = (
            f"reader '{READER_USER}' given a new password (--rotate-reader): every evaluating "
            "machine needs the new option file"
            if existing
            else f"reader '{READER_USER}' created for {hosts}"
        )
        password_out = password
    else:
        added = [host for host in needed if host not in existing]
        for host in added:
            admin.copy_account(cursor, READER_USER, existing[0], host)
        done = f"reader '{READER_USER}' kept, credentials unchanged"
        if added:
            done += f"; added for {', '.join(repr(h) for h in added)} with the same password"
        password_out = known
    granted = []
    for host in needed:
        granted += admin.grant_select(cursor, READER_USER, host, names)
    if granted:
        done += f"; SELECT granted on {len(set(granted))} database(s)"
    return password_out, done + shadow


def _prove_reader(reader: str, names: list[str], anonymous: list[str], from_cache: bool) -> str:
    """Log in as the reader where the admin did, check its rights as the engine does, run one
    SELECT per database; a UserError that explains what to do when any of it fails."""
    import pymysql  # optional: PyMySQL (the mysql extra)

    from sqlbench_lmeval.execution.mysql import (  # optional: PyMySQL (the mysql extra)
        check_read_only,
        open_connection,
        parse_url,
        quote_identifier,
    )

    try:
        conn = open_connection(parse_url(reader))
    except pymysql.err.OperationalError as error:
        reasons = []
        if anonymous:
            shown = ", ".join(f"''@'{host}'" for host in anonymous)
            reasons.append(
                f"the server has anonymous accounts ({shown}); a client from their host matches "
                f"them before '{READER_USER}'@'%' (the server sorts accounts by host, then user). "
                "prepare creates the reader for those hosts; one created since (or a host "
                "pattern this client resolves to differently) still shadows it: drop the "
                "anonymous accounts (DROP USER ''@'localhost', as mariadb-secure-installation "
                "does) and run prepare again"
            )
        if from_cache:
            reasons.append(
                "this cache's option file holds a password that no longer logs in (was the "
                "reader rotated from another machine?): prepare --rotate-reader sets a new one "
                "(every evaluating machine then needs the new option file)"
            )
        raise UserError(
            f"the read-only account cannot log in: {error.args[-1]}. "
            + ("Possible causes: " + "; ".join(reasons) if reasons else "")
            + ". Nothing was marked prepared."
        ) from None
    try:
        try:
            check_read_only(conn)
        except EvaluationUnavailable as error:
            raise UserError(f"the read-only account is not read-only: {error}") from None
        with conn.cursor() as cursor:
            cursor.execute("SELECT CURRENT_USER()")
            account = cursor.fetchone()[0]
            for db_id in names:
                cursor.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
                    "ORDER BY table_name LIMIT 1",
                    (db_id.lower(),),
                )
                row = cursor.fetchone()
                if row is None:
                    raise UserError(f"the read-only account sees no table in {db_id}")
                table = f"{quote_identifier(db_id)}.{quote_identifier(row[0])}"
                cursor.execute(f"SELECT * FROM {table} LIMIT 1")
                cursor.fetchall()
    except pymysql.err.Error as error:
        raise UserError(
            f"the read-only account cannot read the LogicCat databases: {error}"
        ) from None
    finally:
        conn.close()
    user, _, host = account.rpartition("@")
    return f"reader proved: logged in as '{user}'@'{host}', SELECT only, one query per database"


def _check_gold(outcomes: dict) -> None:
    """Stop when the evaluation could not run the gold: a lost connection, or most of it
    failing (MariaDB 10.11: 3,559 of 4,036 run; the rest fail there for their own SQL)."""

    crashed = [o for o in outcomes.values() if o.status is Status.CRASHED]
    ran = sum(o.status is Status.OK for o in outcomes.values())
    if crashed or ran < MIN_GOLD_RAN * len(outcomes):
        first = (crashed or [o for o in outcomes.values() if not o.ok] or [None])[0]
        raise UserError(
            f"only {ran} of {len(outcomes)} gold queries ran on the server"
            + (f" ({len(crashed)} lost their connection)" if crashed else "")
            + (f"; first error: {first.error}" if first is not None else "")
            + ". The server was not marked prepared."
        )


def prepare_server(
    admin_url: str,
    source,
    manifest_dir: Path | None = None,
    *,
    reload: bool = False,
    rotate_reader: bool = False,
    gold_cache: GoldCache | None = None,
) -> dict:
    """Prepare the server ``admin_url`` names for LogicCat, or verify it when it already holds
    this dataset version (docs/mysql.md); the local manifest, with ``actions``: what
    was done, one sentence each. Gold judged now is stored in ``gold_cache`` (this machine's)."""
    # optional: PyMySQL (the mysql extra)
    from sqlbench_lmeval.execution import mysql_admin as admin
    from sqlbench_lmeval.execution.mysql import (
        META_DATABASE,
        redact,
        server_version,
    )  # optional: PyMySQL (the mysql extra)

    names = db_ids(source)
    records = source_module.load_records(source)
    folder = Path(manifest_dir) if manifest_dir is not None else None
    known = _cached_reader_password(folder, admin_url) if folder is not None else None
    actions: list[str] = []
    conn = _admin_connection(admin_url)
    started = time.monotonic()
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT @@lower_case_table_names")
            if int(cursor.fetchone()[0]) != 1:
                raise UserError(
                    "the server must run with lower_case_table_names=1 (the dumps' tables are "
                    "lower-case, gold SQL mixes case): start it with --lower-case-table-names=1"
                )
            _refuse_public_grants(cursor, {name.lower() for name in names} | {META_DATABASE})
            collations = collation_mapping(cursor)
            version = server_version(conn)
            dataset_version = f"logiccat-{source.commit[:7]}-mysql-{version.replace(' ', '-')}"
            identity = admin.ensure_metadata(cursor)
            anonymous = admin.anonymous_hosts(cursor)
            document = admin.read_document(cursor, BENCHMARK)
            same = (
                document is not None
                and document.get("dataset_version") == dataset_version
                and sorted(document.get("databases", ())) == names
            )
            if same and not reload:
                _verify_load(cursor, document)
                actions.append(
                    f"server already holds {dataset_version}: verified the row counts and "
                    f"checksums of {len(names)} databases; reloaded nothing (--reload reloads)"
                )
            else:
                admin.forget_document(cursor, BENCHMARK)
                why = (
                    "reload requested"
                    if same
                    else f"was {document['dataset_version']}"
                    if document
                    else "first prepare of this server"
                )
                document = {
                    "databases": _load_all(cursor, source, names, collations),
                    "collations": collations,
                }
                admin.register_databases(cursor, BENCHMARK, names)
                actions.append(
                    f"loaded {len(names)} databases ({why}) in {time.monotonic() - started:.1f} "
                    "s; row counts equal to the dumps"
                )
            password, reader_done = _ensure_reader(cursor, names, rotate_reader, known)
            actions.append(reader_done)
    finally:
        conn.close()
    if password is None:
        raise UserError(
            f"the reader '{READER_USER}' exists but its password is not in this cache "
            f"({folder / READER_OPTION_FILE if folder else 'no cache given'}), so its login "
            "cannot be proved from here: copy that option file from the machine that prepared "
            "the server, or run prepare with --rotate-reader (a new password: every evaluating "
            "machine then needs the new option file)"
        )
    reader = admin.with_account(admin_url, READER_USER, password)
    from_cache = password == known and not rotate_reader
    actions.append(_prove_reader(reader, names, anonymous, from_cache))
    if "gold_status" not in document:
        document.update(_judge_gold(records, reader, gold_cache))
        document.update(
            engine="mysql",
            server_version=version,
            dataset_version=dataset_version,
            source_commit=source.commit,
            frozen_clock=FROZEN_NOW_TEXT,
            reader_user=READER_USER,
            load_s=round(sum(d["load_s"] for d in document["databases"].values()), 3),
        )
        conn = _admin_connection(admin_url)
        try:
            with conn.cursor() as cursor:
                admin.store_document(cursor, BENCHMARK, document)
        finally:
            conn.close()
        ran = sum(
            status in ("ok", "empty", "all_null") for status in document["gold_status"].values()
        )
        actions.append(
            f"gold run twice as the reader: {ran} of {len(records)} ran, "
            f"{len(document['unstable_order'])} differed between the runs; server marked prepared"
        )
    manifest = {
        "engine": "mysql",
        "server": redact(admin_url),
        "server_id": identity,
        "server_version": document["server_version"],
        "dataset_version": document["dataset_version"],
        "databases": sorted(document["databases"]),
        "reader_url": admin.with_account(admin_url, READER_USER, ""),
        "actions": actions,
    }
    if folder is not None:
        manifest["reader_url"] = write_option_file(reader, folder / READER_OPTION_FILE)
        write_manifest(manifest, folder)
    return manifest


def _load_all(cursor, source, names: list[str], collations: dict[str, str]) -> dict[str, dict]:
    """Every database from its dump, checked against the dump's row counts."""
    databases = {}
    for db_id in names:
        text = source_module.dump_file(source, db_id).read_text("utf-8")
        load_start = time.monotonic()
        loaded = load_database(cursor, db_id, text, collations)
        seconds = time.monotonic() - load_start
        expected = dump_row_counts(text)
        if loaded != expected:
            raise UserError(f"{db_id}: rows on the server {loaded} != dump {expected}")
        _, checksums = _table_state(cursor, db_id)
        databases[db_id] = {
            "tables": loaded,
            "checksums": checksums,
            "load_s": round(seconds, 3),
            "schema": upstream_schema(text),
        }
    return databases


def _judge_gold(records: list[dict], reader: str, gold_cache: GoldCache | None) -> dict:
    """Gold health as judged on the server (ok / empty / all_null / error / ...), and which
    items ordered their rows differently between two runs."""

    gold_start = time.monotonic()
    golds = [(r["idx"], r["db_id"], r["query"]) for r in records]
    outcomes = run_gold_on_server(golds, reader)
    _check_gold(outcomes)
    if gold_cache is not None:
        # Both runs are fresh (they judge this load), but the first one is exactly the gold
        # that scoring on this machine runs: the same queries on the same databases, clock
        # and limits, and a key that names this load (the tables' checksums and creation
        # times), so every spelling of the reader's URL reads it and a reload does not.
        gold_cache.store(gold_jobs(golds, reader), [outcomes[item_id] for item_id, _, _ in golds])
    # Twice, in fresh worker processes (so on other connections), as a check: the engine keeps
    # tie order reproducible (execution/mysql.py; before, ~135 of 4,036 gold queries changed
    # their tied rows between runs), so only RAND() gold should differ. Whatever does differ
    # gets the flag the SQLite build gives tie-dependent gold.
    again = run_gold_on_server(golds, reader)
    _check_gold(again)
    unstable = sorted(
        item_id
        for item_id, outcome in outcomes.items()
        if (outcome.status, outcome.rows) != (again[item_id].status, again[item_id].rows)
    )
    return {
        "gold_status": {str(i): gold_health(o) for i, o in outcomes.items()},
        "gold_s": round(time.monotonic() - gold_start, 3),
        "unstable_order": unstable,
    }


# ---------------------------------------------------------------------------------------------
# The local side: this cache's prepared server and option files (owner-only)
# ---------------------------------------------------------------------------------------------


def write_option_file(url: str, path: Path) -> str:
    """The account and password of ``url`` into a MySQL option file at ``path`` (owner-only);
    returns ``url`` without the password, pointing at that file. That URL is what items carry
    into lm-eval documents (``db_path``) and so into ``--log_samples`` output: no secret in
    them. (PyMySQL strips the quotes around the value.)"""
    from sqlbench_lmeval.execution.mysql import parse_url  # optional: PyMySQL (the mysql extra)
    from sqlbench_lmeval.execution.mysql_admin import (
        with_account,
    )  # optional: PyMySQL (the mysql extra)

    address = parse_url(url)
    if any(char in value for value in (address.user, address.password) for char in "\r\n"):
        raise UserError("a MySQL user name or password must not contain a line break")
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(f'[client]\nuser = "{address.user}"\npassword = "{address.password}"\n')
    public = urllib.parse.urlsplit(with_account(url, address.user, ""))
    options = [
        (key, value)
        for key, value in urllib.parse.parse_qsl(public.query)
        if key != "read_default_file"
    ]
    options.append(("read_default_file", str(path.resolve())))
    return urllib.parse.urlunsplit(public._replace(query=urllib.parse.urlencode(options)))


def read_option_password(path: Path) -> str | None:
    """The password a MySQL option file's ``[client]`` section holds (None if none), read by
    the parser PyMySQL itself reads it with."""

    from pymysql.optionfile import Parser  # optional: PyMySQL (the mysql extra)

    parser = Parser()
    try:
        parser.read(path, encoding="utf-8")
        return parser.get("client", "password")
    except (configparser.Error, OSError):
        return None


def _cached_reader_password(folder: Path, admin_url: str) -> str | None:
    """The reader's password in this cache's option file, unless this cache's manifest was
    written for another server (by its recorded identity; an older manifest records none)."""
    password = read_option_password(folder / READER_OPTION_FILE)
    manifest = local_manifest(folder=folder)
    if password is None or manifest is None or "server_id" not in manifest:
        return password
    from sqlbench_lmeval.execution.mysql import (
        open_connection,
        parse_url,
        server_identity,
    )  # optional: PyMySQL (the mysql extra)

    conn = open_connection(parse_url(admin_url))
    try:
        with conn.cursor() as cursor:
            identity = server_identity(cursor)
    finally:
        conn.close()
    return password if manifest["server_id"] == identity else None


def write_manifest(manifest: dict, folder: Path) -> Path:
    """This cache's record of its prepared server (no secret: the reader's password is in the
    option file beside it), owner-only like that file."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / MANIFEST_NAME
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, ensure_ascii=False, indent=1)
    return path


def local_manifest(cache_dir=None, folder: Path | None = None) -> dict | None:
    """The manifest ``prepare`` wrote into this cache, None when it has none."""
    path = (folder or manifest_dir(cache_dir)) / MANIFEST_NAME
    if not path.is_file():
        return None
    return json.loads(path.read_text("utf-8"))


def read_manifest(cache_dir=None) -> dict:
    """:func:`local_manifest`, or a UserError that says how to get one."""
    manifest = local_manifest(cache_dir)
    if manifest is None:
        raise UserError(
            f"no MySQL server prepared for this cache ({manifest_dir(cache_dir) / MANIFEST_NAME} "
            'is missing): give the reader\'s URL (--url / {"url": ...} / $'
            f"{URL_ENV}: mysql://{READER_USER}:PASSWORD@host:port, or "
            "mysql://host:port?read_default_file=reader.cnf), or run `sqlbench-lmeval prepare "
            "logiccat --engine mysql --url mysql://admin:pass@host:port` on this machine"
        )
    return manifest


def prepare_command(
    url: str | None, source, cache_dir, *, reload: bool = False, rotate_reader: bool = False
) -> dict:
    """``prepare logiccat --engine mysql``: ``url`` (admin) or ``$SQLBENCH_LMEVAL_MYSQL_URL``;
    the manifest and the reader's option file go to :func:`manifest_dir` of this cache."""

    require_driver()
    url = url or os.environ.get(URL_ENV)
    if not url:
        raise UserError(f"--engine mysql needs --url mysql://admin:pass@host:port or ${URL_ENV}")
    resolved = source_module.resolve_source(source, cache_root(cache_dir))
    import pymysql  # optional: PyMySQL (the mysql extra)

    from sqlbench_lmeval.execution.mysql import redact  # optional: PyMySQL (the mysql extra)

    try:
        return prepare_server(
            url,
            resolved,
            manifest_dir=manifest_dir(cache_dir),
            reload=reload,
            rotate_reader=rotate_reader,
            gold_cache=GoldCache(gold_cache_dir(cache_dir)),
        )
    except pymysql.err.Error as error:
        raise UserError(
            f"prepare on {redact(url)} failed: {error}. prepare needs a reachable server and an "
            "admin account (CREATE/DROP DATABASE, CREATE USER, GRANT OPTION, SELECT on mysql.*)"
        ) from None


def manifest_dir(cache_dir=None) -> Path:
    """``<cache>/logiccat``: beside the SQLite bundle folder, which a rebuild replaces whole."""

    return cache_root(cache_dir) / "logiccat"


# ---------------------------------------------------------------------------------------------
# Evaluating: any machine, the reader alone
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerRun:
    """The prepared server a run evaluates on: ``url`` (the reader; no password in it: that is
    in an option file), the server's recorded identity, and prepare's document from the server."""

    url: str
    identity: str | None
    document: dict


_runs: dict[tuple, ServerRun] = {}


def server_run(url: str | None = None, cache_dir=None) -> ServerRun:
    """Connect as ``url`` (else ``$SQLBENCH_LMEVAL_MYSQL_URL``, else this cache's reader), check
    the account's rights as the engine does and read what prepare stored on the server. The
    parent's pre-flight: it raises EvaluationUnavailable (cannot log in, more than SELECT, no
    prepared LogicCat) before any prediction runs. Once per process and URL."""
    require_driver()
    given = url or os.environ.get(URL_ENV)
    local = local_manifest(cache_dir)
    if not given:
        given = read_manifest(cache_dir)["reader_url"]
    key = (given, str(manifest_dir(cache_dir)))
    if key not in _runs:
        _runs[key] = _connect_run(given, cache_dir, local)
    return _runs[key]


def _connect_run(url: str, cache_dir, local: dict | None) -> ServerRun:

    import pymysql  # optional: PyMySQL (the mysql extra)

    from sqlbench_lmeval.execution.mysql import (  # optional: PyMySQL (the mysql extra)
        check_read_only,
        connection_failure,
        open_connection,
        parse_url,
        public_url,
        server_identity,
    )
    from sqlbench_lmeval.execution.mysql_admin import (
        read_document,
    )  # optional: PyMySQL (the mysql extra)

    address = parse_url(url)
    shown = public_url(url)
    try:
        conn = open_connection(address)
    except pymysql.err.Error as error:
        raise connection_failure(error, address) from None
    try:
        with conn.cursor() as cursor:
            identity = server_identity(cursor)
            try:
                check_read_only(conn)
            except EvaluationUnavailable as error:
                hint = ""
                if local and identity and local.get("server_id") == identity:
                    hint = (
                        " This cache prepared this server: its reader is "
                        f"{public_url(local['reader_url'])} (password in "
                        f"{manifest_dir(cache_dir) / READER_OPTION_FILE}); run without --url."
                    )
                raise EvaluationUnavailable(f"{error}{hint}") from None
            document = read_document(cursor, BENCHMARK)
    finally:
        conn.close()
    if document is None:
        raise EvaluationUnavailable(
            f"the server {shown} holds no prepared LogicCat (its metadata database has no "
            "record, or a prepare stopped half-way): run `sqlbench-lmeval prepare logiccat "
            "--engine mysql --url <admin URL>` once for this server"
        )
    if address.password:
        # Items carry their URL into lm-eval documents and sample logs: the password goes into
        # an owner-only option file of this cache, the URL names the file.
        server = f"{address.user}@{address.host}:{address.port}:{address.unix_socket}"
        name = f"mysql-login-{hashlib.sha256(server.encode()).hexdigest()[:12]}.cnf"
        url = write_option_file(url, manifest_dir(cache_dir) / name)
    return ServerRun(url=url, identity=identity, document=document)


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

    set_clock(conn, FROZEN_NOW)


def reference_clock(conn) -> None:
    """The clock of the MariaDB reference run (fidelity measurement only)."""

    set_clock(conn, REFERENCE_NOW)


def server_database(url: str, db_id: str, setup: str = FROZEN_CLOCK_SETUP):
    """The execution ``Database`` of ``db_id`` on the server ``url`` points at."""
    from sqlbench_lmeval.execution.mysql import database_url  # optional: PyMySQL (the mysql extra)

    return Database("mysql", database_url(url, db_id), setup)


def gold_jobs(golds, url: str, setup: str = FROZEN_CLOCK_SETUP) -> list[Job]:
    """The jobs of upstream MySQL gold on the server: ``golds`` are (id, db_id, sql)."""
    return [Job(server_database(url, db_id, setup), sql) for _, db_id, sql in golds]


def run_gold_on_server(
    golds, url: str, *, setup: str = FROZEN_CLOCK_SETUP, workers: int | None = None, limits=None
) -> dict[int, object]:
    """Upstream MySQL gold, verbatim, on the server: ``golds`` are (id, db_id, sql);
    returns id -> Outcome."""

    golds = list(golds)
    jobs = gold_jobs(golds, url, setup)
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


def server_items(bundle, prompted: str, url: str | None, cache_dir=None) -> list:
    """The bundle's items on the server: upstream MySQL gold verbatim, MySQL dialect, gold
    health as judged on the server at prepare time (read from the server), flags as judged on
    SQLite plus ``nondeterministic_order`` where two server runs ordered the gold's rows
    differently. Gold results themselves are run by this machine, as the reader, into its own
    gold cache (keyed by the server's identity and checksums, so every spelling of the URL
    shares them)."""

    run = server_run(url, cache_dir)
    document = run.document
    commit = bundle.manifest.get("source_commit", "")
    if document.get("source_commit") and commit != document["source_commit"]:
        raise UserError(
            f"the server holds LogicCat {document['source_commit'][:12]} but this cache's "
            f"bundle was built from {commit[:12]}: build the bundle from the same upstream "
            "revision (prepare logiccat --source ... --force)"
        )
    statuses = document["gold_status"]
    unstable = set(document.get("unstable_order", ()))

    def flags(record) -> tuple[str, ...]:
        if record.id in unstable and NONDETERMINISTIC_ORDER not in record.flags:
            return (*record.flags, NONDETERMINISTIC_ORDER)
        return tuple(record.flags)

    return [
        Item(
            id=record.id,
            question=record.question,
            database=server_database(run.url, record.db_id),
            gold_sql=record.gold_sql_mysql,
            dialect=ENGINE_DIALECT,
            category=record.category,
            gold_status=statuses.get(str(record.id), record.gold_status),
            flags=flags(record),
            prediction_dialect=None if prompted == ENGINE_DIALECT else prompted,
        )
        for record in bundle.records
    ]
