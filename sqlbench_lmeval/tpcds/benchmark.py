"""TPC-DS as a benchmark: the 99 gold queries with our questions as scorable items, each scored on
execution and, through :func:`item_metrics`, on structure (similarity to gold, the complexity
counts of both: docs/structure.md); run on DuckDB or, with ``engine="postgres"``, on the server
``prepare tpcds --engine postgres`` loaded, answers in another ``dialect`` translated first
(:func:`transpile_prediction`; docs/tpcds.md#dialects, docs/tpcds.md#postgresql)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from statistics import fmean

from sqlbench_lmeval.benchmarks import Benchmark
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.execution import GoldCache, engines
from sqlbench_lmeval.paths import gold_cache_dir
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.sql.complexity import COMPLEXITY
from sqlbench_lmeval.sql.dialects import check_dialect, sqlglot_transpile
from sqlbench_lmeval.sql.structure import SIMILARITY_METRICS, Structure, similarity, structure_of
from sqlbench_lmeval.sql.workloads import WorkloadComplexity, workload_complexity
from sqlbench_lmeval.tpcds import postgres
from sqlbench_lmeval.tpcds.data import (
    BUILDER_VERSION,
    DATABASE_ENGINE,
    GOLD_LIMITS,
    check_scale_factor,
    empty_gold_queries,
    empty_gold_summary,
    ensure_database,
    gold_queries,
    scale_factor_label,
    schema_mapping,
)
from sqlbench_lmeval.tpcds.data import database as tpcds_database
from sqlbench_lmeval.tpcds.questions import load_questions, questions_fingerprint
from sqlbench_lmeval.vocabulary import GoldStatus

#: Scale factor of the database the queries run on. At 1 every gold query but query 17 returns
#: rows (17 needs a store return and a later catalog purchase of the same item by the same
#: customer within three quarters, which sf 1 does not generate); the build takes about 30 s.
#: At 0.1, 18 gold queries return nothing; at 0.5, 9.
DEFAULT_SCALE_FACTOR = 1.0

DIALECT = "duckdb"
ENGINE = DATABASE_ENGINE  # the default engine
ENGINES = ("duckdb", "postgres")


def check_engine(engine: str | None) -> str:
    """``engine`` when TPC-DS runs on it (default DuckDB), else a UserError: an ``--engine
    mysql`` or ``{"engine": ...}`` meant for LogicCat must not be silently ignored here."""
    try:
        return engines.choose(engine, ENGINES)
    except ValueError as error:
        raise UserError(
            f"TPC-DS runs on {' or '.join(ENGINES)}, not on engine {engine!r} (the sqlite and "
            "mysql engines are LogicCat's): leave --engine / the engine option out, or choose "
            "postgres"
        ) from error


def load_items(
    cache_dir=None,
    scale_factor: float = DEFAULT_SCALE_FACTOR,
    questions_file=None,
    dialect: str | None = None,
    engine: str | None = None,
    url: str | None = None,
    **_options,
) -> list[Item]:
    """The 99 TPC-DS items, building the database at ``scale_factor`` on first use.

    ``questions_file`` replaces our questions (JSONL with ``query_nr`` and ``question``);
    ``dialect`` is the sqlglot dialect answers are asked in (default: the engine's own).
    ``engine="postgres"`` runs them on the server ``prepare tpcds --engine postgres`` loaded
    (``url``, else ``$SQLBENCH_LMEVAL_POSTGRES_URL``, else this cache's read-only role).
    """
    questions = load_questions(questions_file)
    if check_engine(engine) == "postgres":
        prompted = check_dialect(dialect, postgres.DIALECT)
        scale = check_scale_factor(scale_factor)
        return postgres.server_items(url, cache_dir, scale, questions, prompted)
    prompted = check_dialect(dialect, DIALECT)
    manifest = ensure_database(cache_dir, scale_factor)
    database = tpcds_database(manifest["database"])
    rows = manifest["gold_row_counts"]
    return [
        Item(
            id=number,
            question=questions[number],
            database=database,
            gold_sql=sql,
            dialect=DIALECT,
            gold_status=GoldStatus.EMPTY if rows.get(str(number)) == 0 else GoldStatus.OK,
            prediction_dialect=None if prompted == DIALECT else prompted,
        )
        for number, sql in sorted(gold_queries().items())
    ]


def prepare(
    cache_dir=None,
    *,
    scale_factor: float | None = None,
    engine: str | None = None,
    url: str | None = None,
    reload: bool = False,
    rotate_reader: bool = False,
    workers: int | None = None,
    **_options,
) -> str:
    """Build the TPC-DS database at ``scale_factor`` into the cache (``sqlbench-lmeval prepare
    tpcds``), or with ``engine="postgres"`` load it into the server ``url`` (an admin account)
    and set up its read-only role (``tpcds.postgres.prepare_command``: ``reload``,
    ``rotate_reader``, ``workers`` for its gold). Returns the summary to show."""
    scale = DEFAULT_SCALE_FACTOR if scale_factor is None else scale_factor
    if check_engine(engine) == "postgres":
        manifest = postgres.prepare_command(
            url, cache_dir, scale, reload=reload, rotate_reader=rotate_reader, workers=workers
        )
        return postgres.summary(manifest)
    if reload or rotate_reader:
        raise UserError("--reload and --rotate-reader are for a server: tpcds --engine postgres")
    manifest = ensure_database(
        cache_dir, scale, progress=True, rebuild_damaged=True, workers=workers
    )
    # Gold as scoring runs it, in a pass without answers: its results (already there after a
    # fresh build) and its tie probes go into the gold cache and the tie store, so that the
    # first score runs only the answers, also on a database built before its gold was cached.
    items = load_items(cache_dir, scale_factor=scale)
    cache = GoldCache(gold_cache_dir(cache_dir))
    scorer = Scorer(limits=GOLD_LIMITS, workers=workers, gold_cache=cache, progress=False)
    scorer.score(items, [None] * len(items))
    return (
        f"tpcds: scale factor {manifest['scale_factor']:g} database at {manifest['database']} "
        f"(built in {manifest['build_seconds']:.0f} s); its gold results are in the gold cache "
        f"{cache.root}\n" + empty_gold_summary(empty_gold_queries(manifest))
    )


def gold_complexity(**_options) -> WorkloadComplexity:
    """Complexity counts of the 99 gold queries (no database needed)."""
    return workload_complexity("tpcds", sorted(gold_queries().items()), DIALECT, _schema())


def dataset_version(
    cache_dir=None,
    scale_factor: float = DEFAULT_SCALE_FACTOR,
    questions_file=None,
    engine: str | None = None,
    url: str | None = None,
    **_options,
) -> str:
    """Names the data scored: scale factor, DuckDB (and extension) version, builder, questions;
    on PostgreSQL also the server's release, the loader and the gold translation."""
    import duckdb  # heavy: loaded only where TPC-DS data is touched

    scale = check_scale_factor(scale_factor)
    server = ""
    if check_engine(engine) == "postgres":
        server = "-" + postgres.dataset_version_part(url, cache_dir, scale)
    return (
        f"tpcds-sf{scale_factor_label(scale)}-duckdb{duckdb.__version__}-builder{BUILDER_VERSION}"
        f"{server}-questions{questions_fingerprint(questions_file)}"
    )


def transpile_prediction(item: Item, sql: str) -> str:
    """A prediction written in ``item.prediction_dialect`` in the engine's dialect
    ``item.dialect`` (DuckDB's or PostgreSQL's; sqlglot alone)."""
    return sqlglot_transpile(sql, read=item.prompted_dialect, write=item.dialect)


# ---------------------------------------------------------------- structure metrics


@lru_cache(maxsize=1)
def _schema() -> Mapping:
    return schema_mapping()


@lru_cache(maxsize=256)
def _structure(sql: str | None, dialect: str) -> Structure | None:
    return structure_of(sql, dialect, _schema())


def item_metrics(item: Item, sql: str | None) -> dict[str, float | str | None]:
    """Structure metrics of the predicted ``sql`` (None: nothing extracted) against gold.

    The prediction is read as written, in the dialect the prompt asked for (not as translated
    for the engine); gold is DuckDB's text on every engine (what the PostgreSQL engine runs is
    sqlglot's translation of it, which spells some expressions differently). ``parsed`` is 1.0
    when the prediction is one parseable statement, and ``parsed_dialect`` names the dialect
    that parsed it: the prompted one, or
    the fallback ``structure_of`` needed (None when none did).
    An unparseable prediction scores 0.0 on every similarity and every complexity count;
    ``gold_<count>`` are gold's counts.
    """
    gold = _structure(*_structure_gold(item))
    prediction = _structure(sql, item.prompted_dialect) if sql else None
    metrics: dict[str, float | str | None] = {"parsed": float(prediction is not None)}
    metrics["parsed_dialect"] = prediction.dialect if prediction is not None else None
    if gold is None:  # never for our gold; a custom gold query might not parse
        metrics.update(dict.fromkeys(SIMILARITY_METRICS, 0.0))
    else:
        metrics.update(similarity(prediction, gold))
    for name in COMPLEXITY:
        metrics[name] = float(prediction.complexity[name]) if prediction is not None else 0.0
    for name in COMPLEXITY:
        metrics[f"gold_{name}"] = float(gold.complexity[name]) if gold is not None else 0.0
    return metrics


def _structure_gold(item: Item) -> tuple[str, str]:
    """The gold text and dialect structure is read from: DuckDB's own gold for every engine."""
    if item.dialect == DIALECT:
        return item.gold_sql, DIALECT
    return gold_queries()[item.id], DIALECT


def aggregate_metrics(scores: Sequence[Mapping]) -> dict[str, float]:
    """Numbers beyond the per-item means, for the score output of a whole run.

    - ``<similarity>_on_parsed``: the similarity means over parseable predictions only (the
      per-item means count an unparseable prediction as 0);
    - ``<count>_ratio``: the paper's Table 1 ratio, mean over parseable predictions of the count
      divided by gold's mean over the same items (0.0 when gold's mean is 0).
    """
    parsed = [s for s in scores if s.get("parsed")]
    extras: dict[str, float] = {"n_parsed": float(len(parsed))}
    for name in SIMILARITY_METRICS:
        extras[f"{name}_on_parsed"] = fmean(s[name] for s in parsed) if parsed else 0.0
    for name in COMPLEXITY:
        model = fmean(s[name] for s in parsed) if parsed else 0.0
        gold = fmean(s[f"gold_{name}"] for s in parsed) if parsed else 0.0
        extras[f"{name}_ratio"] = model / gold if gold else 0.0
    return extras


BENCHMARK = Benchmark(
    name="tpcds",
    load_items=load_items,
    dataset_version=dataset_version,
    prepare=prepare,
    check_engine=check_engine,
    engines=ENGINES,
    transpile_prediction=transpile_prediction,
    item_metrics=item_metrics,
    aggregate_metrics=aggregate_metrics,
    gold_complexity=gold_complexity,
)
