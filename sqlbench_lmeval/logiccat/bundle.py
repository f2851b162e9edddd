"""The built LogicCat bundle: SQLite databases + records with transpiled, judged gold, built as a
folder of the data layer (``data.built``: written into a temporary folder and renamed into place
under the build lock, loaded with every file's checksum checked; the layout and the rules:
docs/logiccat.md#how-the-copy-is-made, "The bundle")."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import sqlite3
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
from pathlib import Path

import sqlglot

from sqlbench_lmeval.data.built import MANIFEST, build_folder, load_folder
from sqlbench_lmeval.data.checksums import checksum_table
from sqlbench_lmeval.data.damage import DataDamaged, DataMissing, damaged
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.logiccat import gold as gold_module
from sqlbench_lmeval.logiccat import health as health_module
from sqlbench_lmeval.logiccat import mysqldump, transpile
from sqlbench_lmeval.logiccat import source as source_module
from sqlbench_lmeval.logiccat.mysql_functions import FROZEN_NOW_TEXT
from sqlbench_lmeval.paths import cache_dir as cache_root

# 4: rows written with sqlite-utils' insert_all: same content, other SQLite header counters.
# 5: ``nondeterministic_order`` flags ties inside subqueries only (health's tie probe edits
#    gold's text; the outermost query's ties are tie-aware EX's).
BUILDER_VERSION = "5"

CATEGORIES = {1: "physical", 2: "mathematical", 3: "commonsense", 4: "hypothetical"}
RECORDS = "records.jsonl"
DATABASES = "databases"


@dataclass(frozen=True)
class Record:
    """One LogicCat question with its gold in both dialects and the judged gold health."""

    id: int  # upstream idx
    db_id: str
    type: int  # 1-4
    category: str  # physical / mathematical / commonsense / hypothetical
    question: str
    step: str  # upstream chain-of-thought annotation
    gold_sql_mysql: str  # upstream gold as written
    gold_sql: str  # what we execute on SQLite
    gold_status: str  # ok / empty / all_null / error / non_select
    flags: tuple[str, ...]  # clock_dependent / random / nondeterministic_order / mysql_specific

    @classmethod
    def from_json(cls, data: dict) -> Record:
        return cls(**{**data, "flags": tuple(data["flags"])})


class Bundle:
    """A loaded bundle: its folder, manifest and records."""

    def __init__(self, root: Path, manifest: dict, records: list[Record]):
        self.root = root
        self.manifest = manifest
        self.records = records
        self._schemas: dict[str, str] = {}
        self._paths: dict[str, Path] = {}

    def __repr__(self) -> str:
        return f"Bundle({str(self.root)!r}, {len(self.records)} records)"

    def database_path(self, db_id: str) -> Path:
        """The SQLite file of ``db_id``."""
        # Asked once per record: a file found once is remembered for this loaded bundle.
        path = self._paths.get(db_id)
        if path is None:
            path = self.root / DATABASES / f"{db_id}.sqlite"
            if db_id not in self.manifest.get("databases", {}) or not path.is_file():
                raise KeyError(f"no LogicCat database {db_id!r} in {self.root}")
            self._paths[db_id] = path
        return path

    def schema(self, db_id: str) -> str:
        """The CREATE TABLE (and CREATE VIEW) statements exactly as stored in the database,
        upstream column comments included, separated by ``;`` and a blank line."""
        if db_id not in self._schemas:
            uri = f"file:{self.database_path(db_id)}?mode=ro"
            with sqlite3.connect(uri, uri=True) as conn:
                rows = conn.execute(
                    "SELECT sql FROM sqlite_master WHERE type IN ('table', 'view') "
                    "AND sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
                    "ORDER BY type = 'view', rowid"
                ).fetchall()
            self._schemas[db_id] = ";\n\n".join(row[0].strip() for row in rows) + ";"
        return self._schemas[db_id]


def bundle_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """Where the bundle of this builder version lives."""

    return cache_root(cache_dir) / "logiccat" / f"v{BUILDER_VERSION}"


def load_bundle(cache_dir: str | os.PathLike | None = None) -> Bundle:
    """The bundle in the cache, every file checked against its checksum (``data.built``:
    once per process while the files are unchanged); raises DataMissing (a UserError) if absent
    or by another builder version, DataDamaged if a file is since gone or changed."""
    root = bundle_dir(cache_dir)

    def read(manifest: dict) -> Bundle:
        with open(root / RECORDS, encoding="utf-8") as handle:
            records = [Record.from_json(json.loads(line)) for line in handle if line.strip()]
        return Bundle(root, manifest, records)

    return load_folder(
        root,
        read,
        version=("builder_version", BUILDER_VERSION),
        what="LogicCat bundle",
        hint="build it with `sqlbench-lmeval prepare logiccat`",
        damaged=_damaged,
    )


def _damaged(path: Path, reason: str) -> DataDamaged:
    rebuild = (
        "`sqlbench-lmeval prepare logiccat` (from --source or "
        f"${source_module.SOURCE_ENV} where the archive cannot be downloaded)"
    )
    return damaged(
        "LogicCat bundle file",
        path,
        reason,
        rebuild,
        subject="the bundle",
        detail=" (missing or changed)",
    )


def ensure_bundle(
    source=None, cache_dir: str | os.PathLike | None = None, *, progress: bool = True
) -> Bundle:
    """The cached bundle, built first if it was never built.

    A bundle damaged since it was prepared raises DataDamaged naming the file and the
    command that rebuilds it (``data.damage``).
    """
    try:
        return load_bundle(cache_dir)
    except DataDamaged:
        raise
    except DataMissing:
        return build_bundle(source, cache_dir, progress=progress)


# ---------------------------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------------------------


def _category(value: object) -> tuple[int, str]:
    try:
        number = int(str(value).strip())
        return number, CATEGORIES[number]
    except (ValueError, KeyError):
        raise UserError(f"unknown LogicCat question type {value!r}") from None


def build_database(source, db_id: str, target: Path) -> None:
    """One SQLite database: the authors' file (Spider-derived) or converted from the dump."""
    if db_id in gold_module.SPIDER_DERIVED:
        shutil.copyfile(source_module.spider_sqlite_file(source, db_id), target)
        return
    text = source_module.dump_file(source, db_id).read_text("utf-8")
    conn = sqlite3.connect(target)
    try:
        conn.execute("PRAGMA journal_mode = OFF")
        with conn:
            mysqldump.load_dump(text, conn, view_to_sqlite=transpile.tree_to_sqlite)
        conn.execute("VACUUM")
    except mysqldump.DumpError as error:
        raise UserError(f"cannot convert the dump of {db_id}: {error}") from None
    finally:
        conn.close()


def _build_and_prepare(
    source, db_id: str, target: Path, queries: list[str]
) -> list[gold_module.PreparedGold]:
    """Build one database, then transpile its gold queries against its column types."""
    build_database(source, db_id, target)
    types = gold_module.column_types(str(target))
    return [gold_module.prepare_gold(db_id, query, types) for query in queries]


def _build_databases(
    source, raw_records: list[dict], directory: Path, workers: int | None
) -> tuple[dict[str, Path], list[gold_module.PreparedGold]]:
    """Every database plus every prepared gold, one task per database over ``workers``
    processes (0: in this process)."""

    by_db: dict[str, list[int]] = {}
    for position, record in enumerate(raw_records):
        by_db.setdefault(record["db_id"], []).append(position)
    paths = {db_id: directory / f"{db_id}.sqlite" for db_id in sorted(by_db)}
    # Largest first, so the slowest tasks do not start last.
    order = sorted(by_db, key=lambda db_id: -len(by_db[db_id]))
    tasks = [
        (source, db_id, paths[db_id], [raw_records[i]["query"] for i in by_db[db_id]])
        for db_id in order
    ]
    count = (os.cpu_count() or 1) if workers is None else workers
    results = None
    if count > 1:
        context = multiprocessing.get_context("spawn")
        try:
            with ProcessPoolExecutor(min(count, len(tasks)), mp_context=context) as pool:
                results = list(pool.map(_build_and_prepare, *zip(*tasks, strict=False)))
        except BrokenProcessPool:
            # Spawned workers cannot start when __main__ is not importable (code piped to
            # python's stdin, some notebooks): build in this process instead.
            results = None
    if results is None:
        results = [_build_and_prepare(*task) for task in tasks]
    prepared: list = [None] * len(raw_records)
    for db_id, golds in zip(order, results, strict=False):
        for position, prep in zip(by_db[db_id], golds, strict=False):
            prepared[position] = prep
    return paths, prepared


def _write_json_line(handle, data: dict) -> None:
    handle.write(json.dumps(data, ensure_ascii=False) + "\n")


def build_bundle(
    source=None,
    cache_dir: str | os.PathLike | None = None,
    *,
    force: bool = False,
    progress: bool = True,
    workers: int | None = None,
) -> Bundle:
    """Build the bundle from ``source`` (see ``source.resolve_source``) and load it.

    An existing complete bundle is returned as is unless ``force``.
    """

    if not force:
        try:
            return load_bundle(cache_dir)
        except DataMissing:
            pass
    started = time.monotonic()
    upstream = source_module.resolve_source(source, cache_root(cache_dir), progress=progress)
    raw_records = source_module.load_records(upstream)

    def built() -> Bundle | None:
        try:
            return None if force else load_bundle(cache_dir)  # made by the build waited for
        except DataMissing:
            return None

    target = bundle_dir(cache_dir)
    waiting = f"waiting for another build of the LogicCat bundle in {target.parent} ..."
    made = build_folder(
        target,
        lambda work: _build_into(work, upstream, raw_records, workers, progress, started),
        built=built,
        waiting=waiting if progress else None,
    )
    if isinstance(made, Bundle):  # the build this one waited for made it
        return made
    if progress:
        print(format_summary(made["health"], made["records"], made["build_seconds"]))
    return load_bundle(cache_dir)


def _build_into(
    work: Path, upstream, raw_records: list[dict], workers: int | None, progress: bool, started
) -> dict:
    """Databases, records and manifest of a bundle written into ``work``; the manifest."""

    (work / DATABASES).mkdir()
    db_paths, prepared = _build_databases(upstream, raw_records, work / DATABASES, workers)
    db_ids = sorted(db_paths)
    health = health_module.judge_health(
        prepared,
        [str(db_paths[r["db_id"]]) for r in raw_records],
        workers=workers,
        progress=progress,
    )
    records = []
    for raw, prep, judged in zip(raw_records, prepared, health, strict=False):
        number, category = _category(raw["type"])
        records.append(
            Record(
                id=int(raw["idx"]),
                db_id=raw["db_id"],
                type=number,
                category=category,
                question=raw["question"],
                step=raw.get("step") or "",
                gold_sql_mysql=raw["query"],
                gold_sql=prep.sql,
                gold_status=judged.status,
                flags=judged.flags,
            )
        )
    with open(work / RECORDS, "w", encoding="utf-8") as handle:
        for record in records:
            _write_json_line(handle, asdict(record))

    files = checksum_table(work)
    manifest = {
        "benchmark": "logiccat",
        "builder_version": BUILDER_VERSION,
        "source_repository": source_module.REPOSITORY,
        "source_commit": upstream.commit,
        "sqlglot_version": sqlglot.__version__,
        "sqlite_version": sqlite3.sqlite_version,
        "frozen_now": FROZEN_NOW_TEXT,
        "records": len(records),
        "databases": {db_id: f"{DATABASES}/{db_id}.sqlite" for db_id in db_ids},
        "health": health_module.health_summary(health),
        "files": files,
        "build_seconds": round(time.monotonic() - started, 1),
    }
    (work / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False), "utf-8")
    return manifest


def format_summary(summary: dict, count: int, seconds: float | None = None) -> str:
    """The health summary printed after a build."""
    statuses = ", ".join(f"{name} {n}" for name, n in summary["status"].items())
    flags = ", ".join(f"{name} {n}" for name, n in summary["flags"].items()) or "none"
    took = f" in {seconds:.0f} s" if seconds is not None else ""
    return f"LogicCat bundle: {count} questions{took}\n  gold status: {statuses}\n  flags: {flags}"
