"""Gold results on disk, so a re-run executes only the predictions: :class:`GoldCache`, one
SQLite file mapping a key over everything that can change a gold result, and nothing of how
results are compared, to its outcome, each entry checked by a checksum (the key and what is
stored: docs/engines.md#the-gold-cache; damaged entries and a cache that cannot be written:
docs/failures.md).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import itertools
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from sqlbench_lmeval.execution import engines
from sqlbench_lmeval.execution.held_results import from_index
from sqlbench_lmeval.execution.job import DEFAULT_LIMITS, Database, Job, Limits
from sqlbench_lmeval.execution.outcome import EXECUTION_VERSION, FINISHED, Outcome
from sqlbench_lmeval.execution.pool import WorkerPool, execute_many
from sqlbench_lmeval.execution.record_file import RecordFile, load_payloads, save_payloads
from sqlbench_lmeval.execution.unavailable import CacheUnwritable

CACHE_FORMAT = "2"  # 2: keys without the comparison version
CACHE_FILE = "gold-cache.sqlite"
CACHEABLE = FINISHED
_HASH_BLOCK = 1 << 20
# The file hashes the keys use, memoized beside the entries (docs/engines.md#the-gold-cache).
_FILES_TABLE = (
    "CREATE TABLE IF NOT EXISTS files "
    "(path TEXT PRIMARY KEY, signature TEXT NOT NULL, sha256 TEXT NOT NULL)"
)


class GoldCache:
    """Run gold jobs through an on-disk cache of their outcomes (docs/engines.md#the-gold-cache)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.path = self.root / CACHE_FILE
        self._file_hashes: dict[tuple, str] = {}
        self._setup_prints: dict[str, str] = {}
        # Keys made, by their text's parts (a key prefix, which holds the file's hash, and the
        # SQL): a run keys most gold jobs twice (the tie plan, then the batch; on the perturbed
        # copies, the runs started early, then the data-dependence test).
        self._made_keys: dict[tuple[str, str | None], str] = {}

    def run(
        self,
        jobs: Sequence[Job],
        limits: Limits = DEFAULT_LIMITS,
        *,
        workers: int | None = None,
        progress: str | None = None,
        pool: WorkerPool | None = None,
    ) -> list[Outcome]:
        """Outcomes of ``jobs`` in order: cached ones read, the rest executed and stored (in
        ``pool``'s workers if given, as ``pool.execute_many``)."""
        gold, _ = self.run_together(jobs, (), limits, workers=workers, progress=progress, pool=pool)
        return gold

    def run_together(
        self,
        gold_jobs: Sequence[Job],
        other_jobs: Iterable[Job],
        limits: Limits = DEFAULT_LIMITS,
        *,
        workers: int | None = None,
        progress: str | None = None,
        expected: int | None = None,
        pool: WorkerPool | None = None,
        keep: Callable[[int, Outcome], Outcome] | None = None,
        found: Callable[[list[Outcome | None]], object] | None = None,
        more: Callable[[], list[Job] | None] | None = None,
    ) -> tuple[list[Outcome], list[Outcome]]:
        """Like :meth:`run` for ``gold_jobs``, executing ``other_jobs`` (never cached) in the
        same parallel batch: one slow gold query then overlaps the predictions instead of
        running before them. Returns (gold outcomes, other outcomes), each in input order.

        ``other_jobs`` may be lazy (``pool.execute_many``): it is consumed while the missing
        gold and the first of them run; ``expected`` is about how many it yields. ``keep``: what
        is kept of each of their outcomes as it arrives, given its index among them
        (``HeldResults.keep``). ``found``, if given, is called before the batch starts with each
        gold job's cached outcome (None: it runs in the batch). ``more``: further other jobs,
        as ``execute_many`` asks for them; their outcomes follow the others'."""
        gold_jobs = list(gold_jobs)
        if isinstance(other_jobs, Sequence):
            other_jobs, expected = list(other_jobs), len(other_jobs)
        keys = self._keys(gold_jobs, limits)
        with self._open() as db:
            found_outcomes = self._load(db, {k for k in keys if k is not None})
        # Run each missing key once (duplicate gold queries are common); unkeyable jobs (e.g. a
        # server whose fingerprint cannot be read) always run, and their outcome is not stored.
        to_run: list[Job] = []
        slot_of_key: dict[str, int] = {}
        slot_of_job: list[int | None] = []
        for job, key in zip(gold_jobs, keys, strict=True):
            if key is not None and key in found_outcomes:
                slot_of_job.append(None)
            elif key is not None and key in slot_of_key:
                slot_of_job.append(slot_of_key[key])
            else:
                slot_of_job.append(len(to_run))
                if key is not None:
                    slot_of_key[key] = len(to_run)
                to_run.append(job)
        if found is not None:
            found([found_outcomes.get(key) for key in keys])
        outcomes = execute_many(
            to_run + other_jobs
            if isinstance(other_jobs, list)
            else itertools.chain(to_run, other_jobs),
            limits,
            workers=workers,
            progress=progress,
            expected=None if expected is None else len(to_run) + expected,
            pool=pool,
            keep=None if keep is None else from_index(len(to_run), keep),
            more=more,
        )
        fresh, others = outcomes[: len(to_run)], outcomes[len(to_run) :]
        storable = {
            key: fresh[slot] for key, slot in slot_of_key.items() if fresh[slot].status in CACHEABLE
        }
        if storable:
            with self._open() as db:
                self._store(db, storable)
        gold = [
            found_outcomes[key] if slot is None else fresh[slot]
            for key, slot in zip(keys, slot_of_job, strict=True)
        ]
        return gold, others

    def cached(self, jobs: Sequence[Job], limits: Limits = DEFAULT_LIMITS) -> list[Outcome | None]:
        """The stored outcome of each of ``jobs`` under ``limits``, None where there is none;
        runs nothing."""
        keys = self._keys(jobs, limits)
        with self._open() as db:
            stored = self._load(db, {key for key in keys if key is not None})
        return [None if key is None else stored.get(key) for key in keys]

    def store(
        self, jobs: Sequence[Job], outcomes: Sequence[Outcome], limits: Limits = DEFAULT_LIMITS
    ) -> None:
        """Keep ``outcomes[i]``, which ``jobs[i]`` gave when run under ``limits`` outside the
        cache, as later runs of that job read it (the kinds :meth:`run` keeps, under the same
        key): for a step that must run gold fresh, such as a server's ``prepare``, whose
        results are then the gold that scoring on this machine needs."""
        keys = self._keys(jobs, limits)
        entries = {
            key: outcome
            for key, outcome in zip(keys, outcomes, strict=True)
            if key is not None and outcome.status in CACHEABLE
        }
        if entries:
            with self._open() as db:
                self._store(db, entries)

    # -- keys ------------------------------------------------------------------------------

    def key(self, job: Job, limits: Limits = DEFAULT_LIMITS) -> str | None:
        """The cache key of ``job``, or None when it cannot be keyed (file missing)."""
        return self._keys([job], limits)[0]

    def keys(self, jobs: Sequence[Job], limits: Limits = DEFAULT_LIMITS) -> list[str | None]:
        """:meth:`key` of each job, in order (records derived from gold results, kept beside
        the cache by other layers, key on these)."""
        return self._keys(jobs, limits)

    def _keys(self, jobs: Sequence[Job], limits: Limits) -> list[str | None]:
        """``key`` of each job. Everything but the SQL is the same for every job on one
        database, so that part is hashed into a JSON prefix once per database, not per job."""
        prefixes: dict[Database, str | None] = {}
        keys: list[str | None] = []
        self._hash_files({job.database for job in jobs})
        for job in jobs:
            database = job.database
            if database not in prefixes:
                prefixes[database] = self._key_prefix(database, limits)
            prefix = prefixes[database]
            if prefix is None:
                keys.append(None)
                continue
            made = self._made_keys.get((prefix, job.sql))
            if made is None:
                # Exactly json.dumps(parts) of the one-job form: "[p1, ..., pN, <sql>]".
                text = prefix + json.dumps(job.sql) + "]"
                made = self._made_keys[prefix, job.sql] = hashlib.sha256(text.encode()).hexdigest()
            keys.append(made)
        return keys

    def _key_prefix(self, database: Database, limits: Limits) -> str | None:
        """``json.dumps`` of every key part but the SQL, open for the SQL to follow; None when
        the database file cannot be hashed."""
        try:
            engine = engines.get(database.engine)
            if engine.fingerprint is not None:  # a server database
                file_hash = engine.fingerprint(database.path)
            else:
                file_hash = self._file_hash(database.path)
        except CacheUnwritable:  # the cache itself cannot be used: stop, never run uncached
            raise
        except Exception:  # file gone, server unreachable, no such engine: run uncached
            return None
        parts = [
            CACHE_FORMAT,
            EXECUTION_VERSION,
            engine.name,
            _engine_version(engine),
            file_hash,
            database.setup or "",
            self._setup_print(database),
            [limits.timeout_s, limits.max_rows, limits.memory_mb],
        ]
        if not limits.count_work:  # an outcome without work must never answer a run that counts
            parts.append("work not counted")
        return json.dumps(parts)[:-1] + ", "

    def _file_hash(self, path: str) -> str:
        signature = _file_signature(path)
        if signature not in self._file_hashes:
            self._hash_signatures([signature])
        return self._file_hashes[signature]

    def _hash_files(self, databases) -> None:
        """Learn the hashes of the files of ``databases`` not yet known, with one opening of
        the record file for all of them (not one per database: ~2 ms each)."""
        signatures = []
        for database in databases:
            try:
                if engines.get(database.engine).fingerprint is not None:
                    continue  # a server: fingerprinted, not hashed
                signature = _file_signature(database.path)
            except Exception:  # as in _key_prefix: the job runs uncached, decided there
                continue
            if signature not in self._file_hashes:
                signatures.append(signature)
        if signatures:
            try:
                self._hash_signatures(signatures)
            except CacheUnwritable:
                raise
            except Exception:  # e.g. a file gone meanwhile: each is then hashed alone, as before
                pass

    def _hash_signatures(self, signatures) -> None:
        found = self._digests(signatures, _sha256_file)
        for signature, digest in zip(signatures, found, strict=True):
            self._file_hashes[signature] = digest

    def _digests(self, signatures, digest, kind: str = "") -> list[str]:
        """``digest`` of each file of ``signatures``, remembered in the cache file's ``files``
        table under ``kind`` + its path until the file's signature changes."""
        found = []
        with self._open() as db:
            for signature in signatures:
                path = kind + signature[0]
                stored_signature = json.dumps(signature[1:])
                row = db.execute(
                    "SELECT signature, sha256 FROM files WHERE path = ?", (path,)
                ).fetchone()
                if row is not None and row[0] == stored_signature:
                    found.append(row[1])
                    continue
                found.append(digest(signature[0]))
                db.execute(
                    "INSERT OR REPLACE INTO files (path, signature, sha256) VALUES (?, ?, ?)",
                    (path, stored_signature, found[-1]),
                )
        return found

    def _setup_print(self, database: Database) -> str:
        spec = database.setup
        if not spec:
            return ""
        if spec not in self._setup_prints:
            module = spec.partition(":")[0]
            try:
                origin = importlib.util.find_spec(module).origin  # type: ignore[union-attr]
                signature = _file_signature(origin)
            except Exception:  # no such module: opening the database says so
                self._setup_prints[spec] = "unavailable"
                return self._setup_prints[spec]
            # Parsing the module costs ~20 ms a run: remembered as the files' hashes are (and,
            # as there, a cache file that cannot be used stops the run).
            (self._setup_prints[spec],) = self._digests([signature], _code_fingerprint, "code:")
        return self._setup_prints[spec]

    # -- storage ---------------------------------------------------------------------------

    def _open(self) -> RecordFile:
        return RecordFile(self.path, extra_tables=(_FILES_TABLE,))

    def _load(self, db: sqlite3.Connection, keys: set[str]) -> dict[str, Outcome]:
        found: dict[str, Outcome] = {}
        for key, payload in load_payloads(db, keys).items():
            try:
                found[key] = Outcome.from_json(json.loads(payload))
            except Exception:
                continue  # does not decode: recomputed and overwritten
        return found

    def _store(self, db: sqlite3.Connection, entries: dict[str, Outcome]) -> None:
        save_payloads(
            db,
            {
                key: json.dumps(outcome.to_json(), separators=(",", ":"), allow_nan=False)
                for key, outcome in entries.items()
            },
        )


def _file_signature(path: str) -> tuple:
    """What says a file is unchanged since it was hashed: its real path, device, inode, size
    and modification time."""
    resolved = os.path.realpath(path)
    info = os.stat(resolved)
    return (resolved, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def _sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _code_fingerprint(path: str) -> str:
    r"""sha256 of a Python module's code without its docstrings and comments (``ast.unparse``):
    an edit to its documentation or layout keeps the gold results it made.

    >>> import tempfile
    >>> def fingerprint(text):
    ...     with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as module:
    ...         module.write(text)
    ...     return _code_fingerprint(module.name)
    >>> plain = fingerprint("def f(x):\n    return x * 2\n")
    >>> plain == fingerprint("def f(x):\n    'Double.'\n    return (x * 2)  # why\n")
    True
    >>> plain == fingerprint("def f(x):\n    return x * 3\n")
    False
    """
    tree = ast.parse(Path(path).read_bytes())
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    node.body = body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.unparse(tree).encode()).hexdigest()


_engine_versions: dict[str, str] = {}


def _engine_version(engine: engines.Engine) -> str:
    if engine.name not in _engine_versions:
        _engine_versions[engine.name] = engine.version()
    return _engine_versions[engine.name]
