"""LogicCat as a benchmark: the built bundle's records as scorable items, run on SQLite or, with
``engine="mysql"``, on a MySQL-protocol server ``prepare logiccat --engine mysql`` loaded (gold
there is LogicCat's own MySQL gold), answers asked in another ``dialect`` translated to the
engine's first (:func:`transpile_prediction`; docs/logiccat.md#dialects, docs/mysql.md)."""

from __future__ import annotations

from functools import lru_cache

from sqlbench_lmeval.benchmarks import Benchmark, ReferencePoint
from sqlbench_lmeval.data.damage import DataMissing
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.execution import Database, engines
from sqlbench_lmeval.logiccat import bundle as bundle_module
from sqlbench_lmeval.logiccat.board import BOARD
from sqlbench_lmeval.logiccat.bundle import BUILDER_VERSION, ensure_bundle
from sqlbench_lmeval.logiccat.gold import CONNECTION_SETUP, column_types
from sqlbench_lmeval.logiccat.split import official_split
from sqlbench_lmeval.logiccat.transpile import mysql_to_sqlite
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.sql.dialects import check_dialect, sqlglot_transpile

#: The official LogicCat mini set is the first 500 questions (``idx`` 1-500).
MINI_SET_IDS = range(1, 501)

CATEGORIES = ("physical", "mathematical", "commonsense", "hypothetical")

#: The sqlglot dialect of the engine (and of the gold we execute).
DIALECT = "sqlite"


def load_items(
    cache_dir=None,
    source=None,
    dialect: str | None = None,
    engine: str | None = None,
    url: str | None = None,
    **_options,
) -> list[Item]:
    """All 4,036 LogicCat items, building the bundle first if it is not in the cache.

    ``dialect`` is the sqlglot dialect answers are asked in (default: the engine's).
    ``engine`` ``mysql`` runs them on a server ``prepare logiccat --engine mysql`` loaded,
    under a read-only account (``url``, else ``$SQLBENCH_LMEVAL_MYSQL_URL``, else the reader
    of the server this cache prepared; see ``logiccat.server``); default ``sqlite``.
    """
    engine = check_engine(engine)  # before the bundle's build: a missing driver stops it
    bundle = ensure_bundle(source=source, cache_dir=cache_dir)
    return items_from_bundle(bundle, dialect, engine=engine, url=url, cache_dir=cache_dir)


def items_from_bundle(
    bundle, dialect: str | None = None, *, engine: str | None = None, url=None, cache_dir=None
) -> list[Item]:
    """One item per record of a loaded ``logiccat.bundle.Bundle``, answers asked in
    ``dialect`` (default: the engine's); item ids are the upstream ``idx`` on every engine."""
    if check_engine(engine) == "mysql":
        # heavy: the server's loading and accounts (~10-20 ms), only for the MySQL engine
        from sqlbench_lmeval.logiccat.server import ENGINE_DIALECT, server_items

        return server_items(bundle, check_dialect(dialect, ENGINE_DIALECT), url, cache_dir)
    prompted = check_dialect(dialect, DIALECT)
    return [
        Item(
            id=record.id,
            question=record.question,
            database=Database(
                engine="sqlite",
                path=str(bundle.database_path(record.db_id)),
                setup=CONNECTION_SETUP,
            ),
            gold_sql=record.gold_sql,
            dialect=DIALECT,
            category=record.category,
            gold_status=record.gold_status,
            flags=tuple(record.flags),
            prediction_dialect=None if prompted == DIALECT else prompted,
        )
        for record in bundle.records
    ]


def transpile_prediction(item: Item, sql: str) -> str:
    """A prediction written in ``item.prediction_dialect`` as SQLite.

    MySQL takes the path LogicCat's MySQL gold takes (``transpile.mysql_to_sqlite``: sqlglot
    plus the tree rewrites for MySQL's functions, division, casts and implicit coercions,
    against the database's column types), so a prediction and the gold it is compared with
    get the same MySQL semantics. Other dialects are translated by sqlglot alone: the MySQL
    rewrites encode MySQL's meaning (e.g. population STDDEV), not theirs.
    """
    if item.prompted_dialect == "mysql" and item.dialect == DIALECT:
        return mysql_to_sqlite(sql, _column_types(item.database.path))
    return sqlglot_transpile(sql, read=item.prompted_dialect, write=item.dialect)


@lru_cache(maxsize=64)  # LogicCat has 44 databases
def _column_types(db_path: str):
    return column_types(db_path)


ENGINES = ("sqlite", "mysql")


def check_engine(engine: str | None) -> str:
    """``engine`` (default ``sqlite``) as the engine registry names it, or a UserError naming
    the choices."""
    try:
        return engines.choose(engine, ENGINES)
    except ValueError as error:
        raise UserError(
            f"unknown LogicCat engine {engine!r}; choose one of {', '.join(ENGINES)}"
        ) from error


def dataset_version(
    cache_dir=None, source=None, engine: str | None = None, url: str | None = None, **_options
) -> str:
    if check_engine(engine) == "mysql":
        # heavy: the server's loading and accounts (~10-20 ms), only for the MySQL engine
        from sqlbench_lmeval.logiccat.server import server_run

        return server_run(url, cache_dir).document["dataset_version"]

    return version_of_bundle(ensure_bundle(source=source, cache_dir=cache_dir))


def prepare(
    cache_dir=None,
    *,
    source=None,
    engine: str | None = None,
    url: str | None = None,
    force: bool = False,
    reload: bool = False,
    rotate_reader: bool = False,
    workers: int | None = None,
    **_options,
) -> str:
    """Build the LogicCat bundle into the cache (``sqlbench-lmeval prepare logiccat``; ``force``
    rebuilds it, ``workers`` processes judge gold health), or with ``engine="mysql"`` load it into
    the server ``url`` (an admin account) and set up its read-only account
    (``logiccat.server.prepare_command``: ``reload``, ``rotate_reader``). Returns the summary to
    show."""
    if check_engine(engine) == "mysql":
        # optional: PyMySQL (the mysql extra); heavy: the server's module, only for this engine
        from sqlbench_lmeval.execution.mysql import public_url
        from sqlbench_lmeval.logiccat.server import prepare_command

        manifest = prepare_command(
            url, source, cache_dir, reload=reload, rotate_reader=rotate_reader
        )
        return "\n".join(
            [
                f"logiccat: {manifest['server_version']} at {manifest['server']}:",
                *(f"  - {action}" for action in manifest["actions"]),
                f"logiccat: prepared {manifest['dataset_version']}; evaluate as the reader: "
                f"{public_url(manifest['reader_url'])} (here: no --url needed; elsewhere: its "
                "option file, see docs/many-machines.md)",
                f"logiccat: {official_split().describe()} (tasks logiccat_dev, logiccat_test)",
            ]
        )
    if reload or rotate_reader:
        raise UserError("--reload and --rotate-reader are for a server: logiccat --engine mysql")
    lines = []
    try:
        if force:
            raise DataMissing("rebuild requested")
        bundle = bundle_module.load_bundle(cache_dir)
        lines.append(bundle_module.format_summary(bundle.manifest["health"], len(bundle.records)))
    except DataMissing:  # build_bundle prints the health summary itself
        bundle = bundle_module.build_bundle(
            source, cache_dir, force=force, progress=True, workers=workers
        )
    lines.append(
        f"logiccat: bundle at {bundle.root} (source {bundle.manifest['source_commit'][:12]})"
    )
    lines.append(f"logiccat: {official_split().describe()} (tasks logiccat_dev, logiccat_test)")
    return "\n".join(lines)


def version_of_bundle(bundle) -> str:
    """Names the exact data: upstream commit and the builder that made the bundle."""
    commit = bundle.manifest.get("source_commit", "unknown")
    return f"logiccat-{commit[:12]}-builder{BUILDER_VERSION}"


def published_gold(cache_dir=None, source=None, **_options) -> dict[int, str]:
    """LogicCat's gold as upstream publishes it: each record's MySQL ``query``, word for word."""
    bundle = ensure_bundle(source=source, cache_dir=cache_dir)
    return {record.id: record.gold_sql_mysql for record in bundle.records}


#: What LogicCat's authors publish to place a score beside (the gold card shows it).
REFERENCE_POINTS = (
    ReferencePoint(
        label="human",
        metric="ex",
        value=0.9505,
        items="not named there (the board's test set: logiccat_test, docs/which-number.md)",
        source="the LogicCat leaderboard, as upstream's README of 2026-03-09 (bc4bf08) states",
    ),
)


BENCHMARK = Benchmark(
    name="logiccat",
    load_items=load_items,
    dataset_version=dataset_version,
    prepare=prepare,
    check_engine=check_engine,
    engines=ENGINES,
    transpile_prediction=transpile_prediction,
    published_gold=published_gold,
    published_dialect="mysql",
    reference_points=REFERENCE_POINTS,
    board=BOARD,
)
