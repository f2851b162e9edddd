"""GoldCache: warm runs execute nothing; keys follow everything that can change a result."""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest

from sqlbench_lmeval.execution import Database, GoldCache, Job, Limits, Outcome, Status
from sqlbench_lmeval.execution import cache as cache_module
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable


@pytest.fixture
def spy(monkeypatch):
    """Records the jobs that really reach execute_many."""
    calls: list[list[Job]] = []
    real = cache_module.execute_many

    def recording(jobs, *args, **kwargs):
        calls.append(list(jobs))
        return real(jobs, *args, **kwargs)

    monkeypatch.setattr(cache_module, "execute_many", recording)
    return calls


@pytest.fixture
def db(tmp_path) -> Database:
    path = tmp_path / "gold.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (a INTEGER, r REAL, d TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", [(1, 0.1, "x"), (2, 2.5, None)])
    conn.commit()
    conn.close()
    return Database("sqlite", str(path))


def _jobs(db: Database) -> list[Job]:
    return [
        Job(db, "SELECT * FROM t ORDER BY a"),
        Job(db, "SELECT nope FROM t"),  # errors are deterministic: cached
        Job(db, "SELECT * FROM t ORDER BY a"),  # duplicate: run once
        Job(db, None),
    ]


def test_warm_run_executes_nothing_and_returns_equal_outcomes(tmp_path, db, spy):
    cache = GoldCache(tmp_path / "cache")
    cold = cache.run(_jobs(db), workers=1)
    assert [len(c) for c in spy] == [3]  # the duplicate ran once
    warm = GoldCache(tmp_path / "cache").run(_jobs(db), workers=1)
    assert [len(c) for c in spy] == [3, 0]
    assert warm == cold
    assert cold[0].rows == ((1, 0.1, "x"), (2, 2.5, None))
    assert cold[1].status is Status.ERROR


@pytest.mark.parametrize(
    "change",
    ["sql_text", "limits", "work_not_counted", "database_content", "setup"],
)
def test_key_changes_with_everything_that_can_change_a_result(tmp_path, db, change, hooks_dir):
    cache = GoldCache(tmp_path / "cache")
    job, limits = Job(db, "SELECT a FROM t"), Limits()
    before = cache.key(job, limits)
    if change == "sql_text":
        job = Job(db, "SELECT a FROM t ")
    elif change == "limits":
        limits = Limits(max_rows=5)
    elif change == "work_not_counted":  # an outcome without work must not answer one with
        limits = Limits(count_work=False)
    elif change == "database_content":
        conn = sqlite3.connect(db.path)
        conn.execute("INSERT INTO t VALUES (3, 3.0, 'z')")
        conn.commit()
        conn.close()
    else:
        job = Job(Database("sqlite", db.path, setup="sqlbench_test_hooks:register"), job.sql)
    assert GoldCache(tmp_path / "cache").key(job, limits) != before


def test_key_is_the_sha256_of_its_parts_for_every_job_of_a_batch(tmp_path, db):
    # Pins the key format (existing caches stay valid) and the per-database prefix shortcut.
    import hashlib
    import json

    from sqlbench_lmeval.execution.outcome import EXECUTION_VERSION

    cache, limits = GoldCache(tmp_path / "cache"), Limits(timeout_s=3.5)
    other = Database("sqlite", str(tmp_path / "missing.sqlite"))
    jobs = [Job(db, "SELECT 1"), Job(db, None), Job(other, "SELECT 1"), Job(db, 'SELECT "é"')]
    file_hash = cache_module._sha256_file(db.path)

    def expected(job: Job) -> str:
        parts = [
            cache_module.CACHE_FORMAT,
            EXECUTION_VERSION,
            "sqlite",
            sqlite3.sqlite_version,
            file_hash,
            "",
            "",
            [3.5, 10_000, 1024],
            job.sql,
        ]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()

    keys = cache._keys(jobs, limits)
    assert keys == [expected(jobs[0]), expected(jobs[1]), None, expected(jobs[3])]
    assert [cache.key(job, limits) for job in jobs] == keys


def test_the_key_does_not_depend_on_how_results_are_compared(tmp_path, db, monkeypatch):
    # The cache holds what the engine returned; a new comparison rule must not empty it.
    from sqlbench_lmeval.scoring import compare

    job = Job(db, "SELECT 1")
    before = GoldCache(tmp_path / "cache").key(job)
    monkeypatch.setattr(compare, "COMPARISON_VERSION", compare.COMPARISON_VERSION + "-changed")
    assert GoldCache(tmp_path / "cache").key(job) == before
    tree = ast.parse(Path(cache_module.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in imported if m and not m.startswith("sqlbench_lmeval.execution")} <= {
        "ast", "hashlib", "importlib.util", "itertools", "json", "os", "sqlite3", "time",
        "collections.abc", "pathlib", "__future__",
    }  # fmt: skip


HOOK = "def setup(conn):\n    conn.create_function('f', 0, lambda: 1)\n"


@pytest.mark.parametrize(
    ("edited", "same_key"),
    [
        ("def setup(conn):\n    conn.create_function('f', 0, lambda: 20)\n", False),
        # Docstrings, comments and layout: the code is the same, so are its gold results.
        (
            '"""Hooks."""\n\n\ndef setup(conn):\n    """Register f."""\n'
            "    conn.create_function(  # f() is 1\n        'f', 0, lambda: 1\n    )\n",
            True,
        ),
    ],
)
def test_the_key_follows_the_setup_hooks_code(tmp_path, db, monkeypatch, edited, same_key):
    module = tmp_path / "hook_fingerprint_mod.py"
    module.write_text(HOOK)
    monkeypatch.syspath_prepend(str(tmp_path))
    job = Job(Database("sqlite", db.path, setup="hook_fingerprint_mod:setup"), "SELECT 1")
    before = GoldCache(tmp_path / "c").key(job)
    module.write_text(edited)
    assert (GoldCache(tmp_path / "c").key(job) == before) is same_key


def test_the_setup_hooks_fingerprint_is_remembered_until_its_file_changes(
    tmp_path, db, monkeypatch
):
    module = tmp_path / "hook_memo_mod.py"
    module.write_text(HOOK)
    monkeypatch.syspath_prepend(str(tmp_path))
    job = Job(Database("sqlite", db.path, setup="hook_memo_mod:setup"), "SELECT 1")
    first = GoldCache(tmp_path / "c").key(job)
    parsed = []
    real = cache_module._code_fingerprint
    monkeypatch.setattr(cache_module, "_code_fingerprint", lambda p: parsed.append(p) or real(p))
    assert GoldCache(tmp_path / "c").key(job) == first and parsed == []  # read, not parsed
    module.write_text(HOOK + "\n")  # another size: parsed again, the same code
    assert GoldCache(tmp_path / "c").key(job) == first and len(parsed) == 1


def test_corrupt_entry_is_recomputed(tmp_path, db, spy):
    cache = GoldCache(tmp_path / "cache")
    (first,) = cache.run([Job(db, "SELECT a FROM t")], workers=1)
    conn = sqlite3.connect(cache.path)
    conn.execute("UPDATE entries SET payload = replace(payload, '1', '7')")
    conn.commit()
    conn.close()
    (again,) = GoldCache(tmp_path / "cache").run([Job(db, "SELECT a FROM t")], workers=1)
    assert [len(c) for c in spy] == [1, 1]
    assert again.rows == first.rows == ((1,), (2,))


def test_cache_file_that_is_not_a_database_is_replaced(tmp_path, db):
    cache = GoldCache(tmp_path / "cache")
    cache.run([Job(db, "SELECT a FROM t")], workers=1)
    cache.path.write_bytes(b"garbage" * 100)
    (outcome,) = GoldCache(tmp_path / "cache").run([Job(db, "SELECT a FROM t")], workers=1)
    assert outcome.rows == ((1,), (2,))
    assert list(cache.path.parent.glob("*.corrupt-*"))


def test_timeouts_are_not_cached(tmp_path, db, spy):
    slow = Job(
        db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"
    )
    limits = Limits(timeout_s=0.2)
    for _ in range(2):
        outcomes = GoldCache(tmp_path / "cache").run([slow, Job(db, "SELECT 1")], limits, workers=1)
        assert [o.status for o in outcomes] == [Status.TIMEOUT, Status.OK]
    assert [len(c) for c in spy] == [2, 1]


def test_stored_outcomes_are_read_as_if_run_under_their_limits_only(tmp_path, db, spy):
    """``store`` keeps what a fresh run outside the cache gave (prepare's gold): a later run
    under the same limits reads it, other limits run; a timeout is never kept."""
    from sqlbench_lmeval.execution import execute_many

    jobs = _jobs(db)
    fresh = execute_many(jobs, Limits(), workers=1)
    timed_out = Outcome(Status.TIMEOUT, error="stopped")
    slow = Job(db, "SELECT count(*) FROM t")
    GoldCache(tmp_path / "cache").store([*jobs, slow], [*fresh, timed_out])
    read = GoldCache(tmp_path / "cache").run(jobs, workers=1)
    assert spy == [[]]

    def result(outcome: Outcome) -> tuple:  # what ran, not how long it took
        return (outcome.status, outcome.columns, outcome.rows, outcome.error, outcome.work)

    assert [result(o) for o in read] == [result(o) for o in fresh]
    GoldCache(tmp_path / "cache").run([slow], workers=1)
    GoldCache(tmp_path / "cache").run(jobs[:1], Limits(timeout_s=3), workers=1)
    assert spy[1:] == [[slow], jobs[:1]]


def test_a_missing_file_stops_the_batch_and_nothing_of_it_is_cached(tmp_path, db, spy):
    missing = Job(Database("sqlite", str(tmp_path / "nope.sqlite")), "SELECT 1")
    for _ in range(2):
        with pytest.raises(EvaluationUnavailable, match="nope.sqlite: no such file"):
            GoldCache(tmp_path / "cache").run([Job(db, "SELECT 1"), missing], workers=1)
    assert [len(c) for c in spy] == [2, 2]  # the good job was not stored either


def test_run_together_runs_other_jobs_in_the_same_batch_uncached(tmp_path, db, spy):
    cache = GoldCache(tmp_path / "cache")
    gold, other = cache.run_together([Job(db, "SELECT 1")], [Job(db, "SELECT 2")], workers=1)
    assert (gold[0].rows, other[0].rows) == (((1,),), ((2,),))
    gold, other = cache.run_together([Job(db, "SELECT 1")], [Job(db, "SELECT 2")], workers=1)
    assert [len(c) for c in spy] == [2, 1]
    assert isinstance(gold[0], Outcome) and other[0].rows == ((2,),)
