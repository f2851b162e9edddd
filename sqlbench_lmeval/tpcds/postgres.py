"""TPC-DS on a PostgreSQL server (the paper's engine): ``prepare(admin_url, ...)``
(``sqlbench-lmeval prepare tpcds --engine postgres --url ...``) loads the DuckDB build's rows
into a database of its own, checks them, creates and proves the read-only role, runs gold
written as PostgreSQL against DuckDB's results and keeps the manifest in the database; run again
it verifies instead of reloading (the steps: docs/postgres.md; the gold:
docs/tpcds.md#gold-on-postgresql)."""

from __future__ import annotations

import io
import json
import os
import time
import urllib.parse
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope
from sqlglot.optimizer.unnest_subqueries import unnest_subqueries

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.execution import Database, GoldCache, Job, Limits, engines
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable
from sqlbench_lmeval.paths import cache_dir as cache_root
from sqlbench_lmeval.paths import gold_cache_dir
from sqlbench_lmeval.scoring.answer import gold_health
from sqlbench_lmeval.scoring.compare import compare, gold_order_matters
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.tpcds.data import (
    BUILDER_VERSION,
    check_scale_factor,
    ensure_database,
    gold_queries,
    primary_keys,
    scale_factor_label,
    schema_mapping,
)

ENGINE = "postgres"
DIALECT = "postgres"  # the sqlglot dialect of gold and of predictions on this engine
URL_ENV = "SQLBENCH_LMEVAL_POSTGRES_URL"
#: Bump when the load changes what ends up in the database.
LOADER_VERSION = 1
#: Bump when :func:`gold_in_postgres` changes the gold SQL.
GOLD_VERSION = 1
#: Gold's time limit on this engine (``prepare``); the engine's default time limit is the same
#: (``execution.postgres.DEFAULT_TIMEOUT_S``).
GOLD_TIMEOUT_S = 60.0
#: Defaults of every session on the database (gold's and answers'), recorded in the manifest:
#: no JIT compilation (it costs more than it saves on queries of seconds), hash tables of up to
#: 64 MB before they spill, and no nested-loop joins: PostgreSQL cannot estimate the rows of a
#: materialized CTE (it guessed 40 where there were tens of thousands) and joined such scans by
#: nested loops whose work grew with the square of their rows (gold query 4: over 30 s with
#: them, 20 s without, on the loaded 2-core machine we measured on).
DATABASE_SETTINGS = {"jit": "off", "work_mem": "64MB", "enable_nestloop": "off"}
SCHEMA = "public"
LABEL_KIND = "sqlbench-lmeval tpcds"

#: DuckDB's column types of the TPC-DS tables -> PostgreSQL's.
_TYPES = {"INTEGER": "integer", "BIGINT": "bigint", "VARCHAR": "varchar", "DATE": "date"}


def require_driver() -> None:
    """The one-line error naming the postgres extra when psycopg is not installed."""
    engines.require_driver(ENGINE)


def database_name(scale_factor: float) -> str:
    """``sqlbench_tpcds_sf1``, ``sqlbench_tpcds_sf0_01``: one database per scale factor."""

    return "sqlbench_tpcds_sf" + scale_factor_label(scale_factor).replace(".", "_")


def reader_role(database: str) -> str:
    return f"{database}_reader"


def postgres_type(duckdb_type: str) -> str:
    if duckdb_type.startswith("DECIMAL"):
        return "numeric" + duckdb_type.removeprefix("DECIMAL")
    return _TYPES[duckdb_type]


def create_table_statements() -> dict[str, str]:
    """``{table: CREATE TABLE ...}`` of the 24 tables, without keys (added after the load)."""
    from psycopg import sql  # optional: psycopg (the postgres extra)

    statements = {}
    for table, columns in schema_mapping().items():
        body = sql.SQL(", ").join(
            sql.SQL("{} {}").format(sql.Identifier(column), sql.SQL(postgres_type(kind)))
            for column, kind in columns.items()
        )
        statements[table] = sql.SQL("CREATE TABLE {} ({})").format(sql.Identifier(table), body)
    return statements


# ---------------------------------------------------------------------------------------------
# Gold in PostgreSQL
# ---------------------------------------------------------------------------------------------


def gold_in_postgres(sql: str) -> str:
    """A gold query (DuckDB's SQL) as PostgreSQL: sqlglot's translation, plus two rewrites.

    - A query that compares with a correlated aggregate subquery (queries 1, 6, 30, 32, 41, 81,
      92) is decorrelated first (:func:`decorrelated`): PostgreSQL runs such a subquery once per
      outer row, which took minutes on queries 1, 6, 30 and 81 at sf 1.
    - PostgreSQL rounds to a number of places only a ``numeric`` (there is no
      ``round(double precision, integer)``), and sqlglot writes DuckDB's decimal divisions as
      ``double precision`` ones: so the value of ``ROUND(x, n)`` becomes ``CAST(x AS DECIMAL)``
      first (queries 2 and 78).

    The results are checked against DuckDB's at ``prepare``; docs/tpcds.md lists what differs.
    """

    tree = sqlglot.parse_one(sql, read="duckdb")
    if correlated_aggregates(tree):
        tree = decorrelated(tree)
    for call in list(tree.find_all(exp.Round)):
        if call.args.get("decimals") is not None:
            call.this.replace(exp.cast(call.this.copy(), exp.DataType.build("DECIMAL")))
    return tree.sql(dialect=DIALECT)


def _qualified(tree):

    return qualify(tree.copy(), schema=schema_mapping(), dialect="duckdb", quote_identifiers=False)


def correlated_aggregates(tree) -> list[str]:
    """The correlated scalar subqueries of ``tree`` that aggregate (``x > (SELECT AVG(...)
    ... WHERE inner.k = outer.k)``), as SQL; EXISTS and IN subqueries are not counted
    (PostgreSQL plans those as semi-joins)."""

    found = []
    for scope in traverse_scope(_qualified(tree)):
        node = scope.expression
        if not scope.is_subquery or not scope.external_columns or not isinstance(node, exp.Select):
            continue
        parent = node.parent
        while isinstance(parent, (exp.Subquery, exp.Paren)):
            parent = parent.parent
        if not isinstance(parent, (exp.Exists, exp.In)) and any(
            node.selects[0].find_all(exp.AggFunc)
        ):
            found.append(node.sql(dialect="duckdb"))
    return found


def decorrelated(tree):
    """``tree`` with its correlated subqueries joined instead (sqlglot's
    ``unnest_subqueries``: the subquery grouped by its correlation keys, LEFT JOINed on them).
    Columns are qualified first (the rule needs it), and comma joins become ``CROSS JOIN``s:
    PostgreSQL binds an explicit JOIN tighter than a comma, so the added ``LEFT JOIN ... ON
    outer.k = ...`` could not otherwise refer to a table listed earlier in the FROM."""

    tree = _qualified(tree)
    for select in tree.find_all(exp.Select):
        for join in select.args.get("joins") or []:
            if not any(join.args.get(k) for k in ("kind", "side", "on", "using")):
                join.set("kind", "CROSS")
    return unnest_subqueries(tree)


@lru_cache(maxsize=1)
def postgres_gold() -> Mapping[int, str]:

    return {number: gold_in_postgres(sql) for number, sql in gold_queries().items()}


# ---------------------------------------------------------------------------------------------
# Columns checked per table (DuckDB and PostgreSQL compute the same numbers)
# ---------------------------------------------------------------------------------------------


def column_check_sql(table: str, columns: Mapping[str, str]) -> str:
    """One SELECT of: the row count, per column its non-NULL count, and the sum of a numeric
    column or the total length of a text column. Plain SQL both engines run alike (our own
    identifiers: TPC-DS names need no quoting)."""
    parts = ["count(*)"]
    for column, kind in columns.items():
        parts.append(f"count({column})")
        if kind == "VARCHAR":
            parts.append(f"coalesce(sum(length({column})), 0)")
        elif kind != "DATE":
            parts.append(f"coalesce(sum({column}), 0)")
    return f"SELECT {', '.join(parts)} FROM {table}"


def _numbers(row) -> list:
    """A check row as exact numbers (DuckDB and psycopg return ints and Decimals)."""

    return [None if value is None else Decimal(value) for value in row]


# ---------------------------------------------------------------------------------------------
# The load
# ---------------------------------------------------------------------------------------------


def _say(progress: bool):
    return print if progress else (lambda *_args, **_kwargs: None)


def _admin(url: str, database: str | None = None):
    from sqlbench_lmeval.execution.postgres import (
        open_connection,
        redact,
        with_database,
    )  # optional: psycopg (the postgres extra)

    target = with_database(url, database) if database else url
    try:
        return open_connection(target)
    except Exception as error:
        raise UserError(f"cannot log in to PostgreSQL at {redact(target)}: {error}") from error


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


#: Rows per Arrow batch streamed from DuckDB into COPY.
COPY_BATCH_ROWS = 100_000
#: Tables loaded at once (each its own connection): the server parses one table's rows while
#: this process writes another's as CSV.
LOAD_THREADS = 2


def load_tables(admin_url: str, database: str, duckdb_path: str, *, progress: bool) -> dict:
    """Every table from the DuckDB file into ``database`` (created empty), checked, keyed and
    analysed; returns ``{table: {"rows", "load_s"}}``. Raises UserError on any mismatch.

    Rows stream from DuckDB as Arrow batches, written as CSV (pyarrow: an empty string is
    ``""``, NULL nothing, so PostgreSQL reads them back as themselves) into ``COPY ... FROM
    STDIN (FORMAT csv, FREEZE)`` in the transaction that created the table (frozen rows: no
    later pass sets their visibility bits). Largest tables first, :data:`LOAD_THREADS` at once.
    """

    import duckdb  # heavy: duckdb, loaded only where TPC-DS data is touched

    say = _say(progress)
    mapping = schema_mapping()
    source = duckdb.connect(duckdb_path, read_only=True)
    try:
        sizes = dict(
            source.execute("SELECT table_name, estimated_size FROM duckdb_tables()").fetchall()
        )
        order = sorted(mapping, key=lambda table: -sizes.get(table, 0))
        with ThreadPoolExecutor(LOAD_THREADS) as pool:
            futures = {
                table: pool.submit(_load_table, admin_url, database, source.cursor(), table)
                for table in order
            }
            tables = {}
            for table in order:
                tables[table] = futures[table].result()
                say(f"  {table}: {tables[table]['rows']:,} rows in {tables[table]['load_s']:.1f} s")
    finally:
        source.close()
    return {table: tables[table] for table in mapping}


def _load_table(admin_url: str, database: str, source, table: str) -> dict:
    """One table: create, COPY, check against DuckDB, primary key, ANALYZE."""

    import pyarrow.csv  # optional: pyarrow (the postgres extra)

    started = time.monotonic()
    columns = schema_mapping()[table]
    keys = primary_keys().get(table)
    options = pyarrow.csv.WriteOptions(include_header=False)
    try:
        with _admin(admin_url, database) as conn:
            with conn.transaction():
                conn.execute(create_table_statements()[table])
                with conn.cursor() as cursor:
                    statement = f"COPY {table} FROM STDIN (FORMAT csv, FREEZE)"
                    with cursor.copy(statement) as copy:
                        reader = source.execute(f"SELECT * FROM {table}").to_arrow_reader(
                            COPY_BATCH_ROWS
                        )
                        for batch in reader:
                            buffer = io.BytesIO()
                            pyarrow.csv.write_csv(batch, buffer, options)
                            copy.write(buffer.getbuffer())
            check = column_check_sql(table, columns)
            expected = _numbers(source.execute(check).fetchone())
            loaded = _numbers(conn.execute(check).fetchone())
            if loaded != expected:
                raise UserError(
                    f"table {table}: PostgreSQL's counts and sums {loaded} differ from DuckDB's "
                    f"{expected}"
                )
            if keys:
                conn.execute(f"ALTER TABLE {table} ADD PRIMARY KEY ({', '.join(keys)})")
            conn.execute(f"ANALYZE {table}")
    finally:
        source.close()
    return {"rows": int(expected[0]), "load_s": round(time.monotonic() - started, 3)}


# ---------------------------------------------------------------------------------------------
# The read-only role and its password file
# ---------------------------------------------------------------------------------------------


def passfile_path(cache_dir, database: str) -> Path:

    return cache_root(cache_dir) / "tpcds" / f"postgres-{database}.pgpass"


def local_manifest_path(cache_dir, database: str) -> Path:

    return cache_root(cache_dir) / "tpcds" / f"postgres-{database}.json"


def ensure_reader(
    admin_url: str, database: str, passfile: Path, *, rotate: bool, tables: list[str]
) -> str:
    """Create or update the reader of ``database``; returns its URL (password in ``passfile``).

    A new role, or ``rotate``, gets a new random password; an existing role keeps the one in
    ``passfile``, and without one there (another machine prepared it) ``rotate`` is needed."""
    # optional: psycopg (the postgres extra)
    from sqlbench_lmeval.execution import postgres_admin as admin

    role = reader_role(database)
    password = None if rotate else admin.read_passfile(passfile, role)
    if admin.role_exists(admin_url, role):
        if password is None and not rotate:
            raise UserError(
                f"the role {role} exists but this cache has no password for it ({passfile}): "
                "copy that file from the machine that prepared the server, or run prepare with "
                "--rotate-reader (other machines then need the new file)"
            )
    else:
        password = None
    password = password or admin.new_password()
    admin.grant_reader(admin_url, database, role, password, tables)
    admin.write_passfile(passfile, database, role, password)
    return admin.reader_url(admin_url, database, role, passfile)


def prove_reader(reader_url: str, tables: list[str]) -> None:
    """Log in as the reader, check its rights, read one row of every table; a UserError that
    names the cause (and the usual fix) otherwise."""
    from sqlbench_lmeval.execution.postgres import (
        check_rights,
        open_connection,
        redact,
    )  # optional: psycopg (the postgres extra)

    try:
        conn = open_connection(reader_url)
    except Exception as error:
        raise UserError(
            f"the read-only role cannot log in ({redact(reader_url)}): {error}. The server's "
            "pg_hba.conf must allow it a password login (scram-sha-256 or md5) from this "
            "machine; nothing was scored"
        ) from error
    with conn:
        try:
            check_rights(conn, reader_url)
        except EvaluationUnavailable as error:
            raise UserError(str(error)) from error
        for table in tables:
            conn.execute(f"SELECT 1 FROM {SCHEMA}.{_quote(table)} LIMIT 1").fetchall()


# ---------------------------------------------------------------------------------------------
# Gold: run on the server as the reader, compared with DuckDB
# ---------------------------------------------------------------------------------------------


def gold_limits():

    return Limits(timeout_s=GOLD_TIMEOUT_S)


def judge_gold(reader_url: str, duckdb_path: str, cache_dir, *, workers=None) -> dict:
    """Gold on the server vs on DuckDB, per query: ``{nr: {"sql", "status", "rows",
    "seconds", "duckdb_status", "duckdb_seconds", "equal"}}``. Both sides go through the gold
    cache: the server's key names this load (``execution.postgres.database_fingerprint``), so
    a new load runs fresh, and the results it stores are the gold that ``score`` and the
    lm-eval filter on this machine then need not run again (same limits: the engine's default
    time limit is gold's)."""

    limits = gold_limits()
    duck = gold_queries()
    numbers = sorted(duck)
    cache = GoldCache(gold_cache_dir(cache_dir))
    pg_database = Database(ENGINE, reader_url)
    pg_outcomes = cache.run(
        [Job(pg_database, postgres_gold()[n]) for n in numbers], limits, workers=workers
    )
    duck_database = Database("duckdb", duckdb_path)
    duck_outcomes = cache.run(
        [Job(duck_database, duck[n]) for n in numbers], limits, workers=workers
    )
    judged = {}
    for number, pg, dd in zip(numbers, pg_outcomes, duck_outcomes, strict=True):
        both_ran = pg.ok and dd.ok
        ordered = gold_order_matters(duck[number], "duckdb")
        judged[str(number)] = {
            "sql": postgres_gold()[number],
            "status": gold_health(pg),
            "error": pg.error,
            "rows": len(pg.rows) if pg.ok else None,
            "seconds": round(pg.elapsed_s, 3),
            "duckdb_status": gold_health(dd),
            "duckdb_seconds": round(dd.elapsed_s, 3),
            "equal": bool(both_ran and compare(pg, dd, ordered=ordered).ex),
        }
    return judged


# ---------------------------------------------------------------------------------------------
# The manifest (the database's COMMENT, and a copy in the cache)
# ---------------------------------------------------------------------------------------------


def dataset_key(scale_factor: float) -> dict:
    """What makes two loads the same data."""
    import duckdb  # heavy: duckdb, loaded only where TPC-DS data is touched

    return {
        "kind": LABEL_KIND,
        "loader_version": LOADER_VERSION,
        "builder_version": BUILDER_VERSION,
        "scale_factor": float(scale_factor),
        "duckdb_version": duckdb.__version__,
    }


def write_label(admin_url: str, database: str, manifest: dict) -> None:
    """The manifest as the database's comment (a comment takes no query parameter)."""
    from psycopg import sql  # optional: psycopg (the postgres extra)

    text = json.dumps(manifest, sort_keys=True)
    with _admin(admin_url, database) as conn:
        conn.execute(
            sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                sql.Identifier(database), sql.Literal(text)
            )
        )


def read_label(url: str) -> dict | None:
    """The manifest a prepare left on the database ``url`` names (None: not prepared)."""
    from sqlbench_lmeval.execution.postgres import (
        load_label,
        open_connection,
    )  # optional: psycopg (the postgres extra)

    with open_connection(url) as conn:
        label = load_label(conn)
    return label if label and label.get("kind") == LABEL_KIND else None


# ---------------------------------------------------------------------------------------------
# prepare
# ---------------------------------------------------------------------------------------------


def prepare(
    admin_url: str,
    cache_dir=None,
    scale_factor: float = 1.0,
    *,
    reload: bool = False,
    rotate_reader: bool = False,
    workers: int | None = None,
    progress: bool = True,
) -> dict:
    """Load (or verify) the TPC-DS database on the server; returns the manifest."""
    from sqlbench_lmeval.execution.postgres import (
        check_url,
        redact,
        server_version,
        with_database,
    )  # optional: psycopg (the postgres extra)

    require_driver()
    try:
        check_url(admin_url)
    except ValueError as error:
        raise UserError(str(error)) from error
    say = _say(progress)
    scale_factor = check_scale_factor(scale_factor)
    database = database_name(scale_factor)
    tables = list(schema_mapping())
    duck = ensure_database(cache_dir, scale_factor, progress=progress, rebuild_damaged=True)
    key = dataset_key(scale_factor)
    with _admin(admin_url) as conn:
        version = server_version(conn)
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (database,)
        ).fetchone()
    label = read_label(with_database(admin_url, database)) if exists else None
    same = label is not None and all(label.get(k) == v for k, v in key.items())
    started = time.monotonic()
    if same and not reload:
        say(f"{database} on {redact(admin_url)} holds this dataset: verifying, not reloading")
        _verify_tables(admin_url, database, label)
        manifest = dict(label)
        action = "verified"
    else:
        action = "loaded"
        say(f"loading TPC-DS sf{scale_factor:g} into {database} on {version} ...")
        from sqlbench_lmeval.execution.postgres_admin import (
            create_database,
        )  # optional: psycopg (the postgres extra)

        create_database(admin_url, database)
        loaded = load_tables(admin_url, database, duck["database"], progress=progress)
        manifest = {
            **key,
            "load_id": uuid.uuid4().hex,
            "database": database,
            "tables": {t: v["rows"] for t, v in loaded.items()},
            "table_load_s": {t: v["load_s"] for t, v in loaded.items()},
            "load_s": round(time.monotonic() - started, 3),
        }
    manifest["server_version"] = version
    manifest["reader_role"] = reader_role(database)
    from sqlbench_lmeval.execution.postgres_admin import (
        set_database_settings,
    )  # optional: psycopg (the postgres extra)

    set_database_settings(admin_url, database, DATABASE_SETTINGS)
    if manifest.get("settings") != DATABASE_SETTINGS:
        manifest["settings"] = DATABASE_SETTINGS
        manifest.pop("gold", None)  # judged under other settings
    passfile = passfile_path(cache_dir, database)
    reader_url = ensure_reader(admin_url, database, passfile, rotate=rotate_reader, tables=tables)
    prove_reader(reader_url, tables)
    if (
        manifest.get("gold_version") != GOLD_VERSION
        or manifest.get("gold_timeout_s") != (GOLD_TIMEOUT_S)
        or "gold" not in manifest
    ):
        # The label first names the load without gold: gold's cache keys name the load
        # (``database_fingerprint``), and no reader takes the database for prepared until the
        # label holds gold again (``server_manifest``).
        manifest.pop("gold", None)
        write_label(admin_url, database, manifest)
        say("running the 99 gold queries on the server as the reader and on DuckDB ...")
        gold_started = time.monotonic()
        manifest["gold"] = judge_gold(reader_url, duck["database"], cache_dir, workers=workers)
        manifest["gold_version"] = GOLD_VERSION
        manifest["gold_timeout_s"] = GOLD_TIMEOUT_S
        manifest["gold_s"] = round(time.monotonic() - gold_started, 3)
    gold = manifest["gold"]
    failed = [n for n, g in gold.items() if g["status"] not in ("ok", "empty")]
    if len(failed) > len(gold) // 2:
        raise UserError(
            f"{len(failed)} of {len(gold)} gold queries did not run on the server as the reader "
            f"(e.g. query {failed[0]}: {gold[failed[0]]['error']}); the database is not usable"
        )
    write_label(admin_url, database, manifest)
    local = {**manifest, "server": redact(admin_url), "reader_url": reader_url, "action": action}
    from sqlbench_lmeval.execution.postgres_admin import (
        write_private_file,
    )  # optional: psycopg (the postgres extra)

    write_private_file(
        local_manifest_path(cache_dir, database), json.dumps(local, indent=1, sort_keys=True)
    )
    return local


def _verify_tables(admin_url: str, database: str, label: dict) -> None:
    with _admin(admin_url, database) as conn:
        for table, rows in label["tables"].items():
            try:
                (count,) = conn.execute(f"SELECT count(*) FROM {SCHEMA}.{_quote(table)}").fetchone()
            except Exception as error:
                raise UserError(
                    f"{database}: table {table} cannot be read ({error}); run prepare with --reload"
                ) from error
            if count != rows:
                raise UserError(
                    f"{database}: table {table} holds {count} rows, the load recorded {rows}; "
                    "run prepare with --reload"
                )


def prepare_command(url: str | None, cache_dir, scale_factor: float, **options) -> dict:
    """``prepare tpcds --engine postgres``: ``url`` (admin) or ``$SQLBENCH_LMEVAL_POSTGRES_URL``."""
    url = url or os.environ.get(URL_ENV)
    if not url:
        raise UserError(
            "--engine postgres needs --url postgresql://admin:pass@host:port/postgres or "
            f"${URL_ENV}"
        )
    return prepare(url, cache_dir, scale_factor, **options)


# ---------------------------------------------------------------------------------------------
# Items on the server
# ---------------------------------------------------------------------------------------------


def reader_url(url: str | None, cache_dir, scale_factor: float) -> str:
    """The URL predictions run under.

    ``url`` (else ``$SQLBENCH_LMEVAL_POSTGRES_URL``) names the server; its database becomes the
    TPC-DS one. When its role holds only SELECT it is used as given. When it holds more (e.g.
    the admin URL prepare took) and it reaches the very database this cache prepared (the same
    ``load_id``), the reader this cache holds the password of is used instead; otherwise
    ``EvaluationUnavailable`` names the extra rights. No URL: this cache's reader.
    """
    from sqlbench_lmeval.execution.postgres import (  # optional: psycopg (the postgres extra)
        check_url,
        open_connection,
        privileges_beyond_select,
        unavailable,
        with_database,
    )

    database = database_name(scale_factor)
    local = _local_manifest(cache_dir, database)
    url = url or os.environ.get(URL_ENV)
    if not url:
        if local is None:
            raise UserError(
                f"no PostgreSQL server prepared for this cache "
                f"({local_manifest_path(cache_dir, database)} is missing): run `sqlbench-lmeval "
                "prepare tpcds --engine postgres --url postgresql://admin:pass@host:port/postgres`"
                f", or give the reader's URL (--url, ${URL_ENV})"
            )
        return local["reader_url"]
    try:
        url = with_database(check_url(url), database)
    except ValueError as error:
        raise UserError(str(error)) from error
    try:
        conn = open_connection(url)
    except Exception as error:
        raise unavailable(url, error) from error
    with conn:
        if not privileges_beyond_select(conn):
            return url
        from sqlbench_lmeval.execution.postgres import (
            load_label,
        )  # optional: psycopg (the postgres extra)

        label = load_label(conn)
    if local is not None and label is not None and label.get("load_id") == local.get("load_id"):
        return local["reader_url"]
    # The same refusal the engine gives, with the rights named.
    with open_connection(url) as conn:
        from sqlbench_lmeval.execution.postgres import (
            check_rights,
        )  # optional: psycopg (the postgres extra)

        check_rights(conn, url)
    return url  # not reached


def _local_manifest(cache_dir, database: str) -> dict | None:
    try:
        return json.loads(local_manifest_path(cache_dir, database).read_text("utf-8"))
    except (OSError, ValueError):
        return None


@lru_cache(maxsize=8)
def server_manifest(url: str) -> dict:
    """The manifest on the database ``url`` names, read as that (read-only) role, after the
    checks every run needs: login, rights, every table present. EvaluationUnavailable
    otherwise (nothing would be scored)."""
    from sqlbench_lmeval.execution.postgres import (  # optional: psycopg (the postgres extra)
        check_rights,
        load_label,
        open_connection,
        redact,
        unavailable,
    )

    try:
        conn = open_connection(url)
    except Exception as error:
        raise unavailable(url, error) from error
    with conn:
        check_rights(conn, url)
        label = load_label(conn)
        if label is None or label.get("kind") != LABEL_KIND:
            raise EvaluationUnavailable(
                f"{redact(url)} is not a TPC-DS database prepared by sqlbench-lmeval: run "
                "`sqlbench-lmeval prepare tpcds --engine postgres --url <admin URL>`"
            )
        if "gold" not in label:
            raise EvaluationUnavailable(
                f"{redact(url)}: prepare loaded this database but has not judged its gold (it "
                "is running, or it stopped): wait for it, or run `sqlbench-lmeval prepare tpcds "
                "--engine postgres` again"
            )
        present = {
            name
            for (name,) in conn.execute(
                "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r' "
                "AND has_table_privilege(c.oid, 'SELECT')",
                (SCHEMA,),
            ).fetchall()
        }
    missing = sorted(set(label["tables"]) - present)
    if missing:
        raise EvaluationUnavailable(
            f"{redact(url)}: tables {', '.join(missing)} are missing or not readable: run "
            "`sqlbench-lmeval prepare tpcds --engine postgres --reload`"
        )
    return label


def server_items(
    url: str | None, cache_dir, scale_factor: float, questions: Mapping[int, str], prompted: str
) -> list:
    """The 99 items on the server: gold as prepare translated and judged it, PostgreSQL's
    dialect, item ids and questions as on DuckDB."""

    require_driver()
    url = reader_url(url, cache_dir, scale_factor)
    manifest = server_manifest(url)
    database = Database(ENGINE, url)
    gold = manifest["gold"]
    return [
        Item(
            id=int(number),
            question=questions[int(number)],
            database=database,
            gold_sql=gold[number]["sql"],
            dialect=DIALECT,
            gold_status=gold[number]["status"],
            prediction_dialect=None if prompted == DIALECT else prompted,
        )
        for number in sorted(gold, key=int)
    ]


def dataset_version_part(url: str | None, cache_dir, scale_factor: float) -> str:
    """``postgres15.18-load<id>-gold<version>``: what the server adds to the dataset version."""
    manifest = server_manifest(reader_url(url, cache_dir, scale_factor))
    release = manifest["server_version"].removeprefix("PostgreSQL ")
    return f"postgres{release}-loader{manifest['loader_version']}-gold{manifest['gold_version']}"


def reader_passfile(url: str) -> str | None:
    """The password file a reader's URL names (``passfile=``), or None."""

    return urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("passfile", [None])[0]


def summary(manifest: Mapping) -> str:
    """What ``prepare`` did, for the terminal: the load, the reader, gold against DuckDB."""
    from sqlbench_lmeval.execution.postgres import (
        public_url,
    )  # optional: psycopg (the postgres extra)

    gold = manifest["gold"]
    equal = sorted((int(n) for n, g in gold.items() if g["equal"]))
    differ = sorted(int(n) for n, g in gold.items() if not g["equal"])
    empty = sorted(int(n) for n, g in gold.items() if g["status"] == "empty")
    failed = {int(n): g["status"] for n, g in gold.items() if g["status"] not in ("ok", "empty")}
    slowest = sorted(gold.items(), key=lambda pair: -pair[1]["seconds"])[:3]
    done = (
        "verified (already loaded, not reloaded)"
        if manifest.get("action") == "verified"
        else f"loaded in {manifest['load_s']:.1f} s"
    )
    lines = [
        f"tpcds: sf{manifest['scale_factor']:g} in {manifest['database']} on "
        f"{manifest['server_version']} at {manifest['server']}: {done}; row counts and column "
        "sums equal to DuckDB's",
        f"read-only role {manifest['reader_role']} logged in and read every table; evaluate as "
        f"it: {public_url(manifest['reader_url'])} (here: no --url needed; elsewhere: with its "
        f"password file {reader_passfile(manifest['reader_url'])}, see "
        "docs/postgres.md)",
        f"gold on PostgreSQL: {len(equal)} of {len(gold)} results equal to DuckDB's"
        + (f"; differing: {', '.join(map(str, differ))}" if differ else ""),
        f"gold queries with no rows at this scale: {', '.join(map(str, empty)) or 'none'}",
        "slowest gold queries: " + ", ".join(f"query {n} {g['seconds']:.1f} s" for n, g in slowest),
    ]
    if failed:
        shown = ", ".join(f"query {n} {status}" for n, status in sorted(failed.items()))
        lines.append(f"gold that did not run: {shown}")
    return "\n".join(lines)
