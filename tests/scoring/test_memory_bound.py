"""The main process's memory is bounded per answer and per run (docs/failures.md#memory): every
value of a result counts against the per-answer budget, numbers too, and 100 maximal answers
score within the bound the docs state, measured as the peak RSS of a real
``sqlbench-lmeval score`` process (and of ``verify`` rescoring such a run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sqlbench_lmeval.execution import Database, Job, Limits, Status, execute
from sqlbench_lmeval.execution.fetch import MIB, VALUE_BYTES, result_budget

#: The bound docs/failures.md#memory states for the main process at the default limits.
BOUND_MIB = 1024
#: 100 maximal answers: 2 sampled answers to each of 50 TPC-DS items.
ITEMS, SAMPLES = 50, 2
#: The maximal answers of the verified run: more than the run holds in memory, three times over.
MAXIMAL_IN_VERIFY = 24

#: Runs ``sqlbench-lmeval ARGS...`` in this process and writes its peak RSS (KiB) to stderr:
#: the high-water mark of its own memory (``VmHWM``). Not ``getrusage``'s ``ru_maxrss``: Linux
#: keeps that across ``execve``, so a process started by a large pytest-xdist worker (1.5 GiB
#: late in the suite) reports the worker's size at the fork.
PEAK = """
import re, sys
from sqlbench_lmeval.cli import main
try:
    code = main(sys.argv[1:])
finally:
    with open("/proc/self/status", encoding="ascii") as status:
        peak = re.search(r"^VmHWM:\\s+(\\d+) kB", status.read(), re.M).group(1)
    print("peak-rss-kib", peak, file=sys.stderr)
sys.exit(code)
"""


def maximal_sql(limits: Limits, tag: str) -> str:
    """A DuckDB answer of ``limits.max_rows`` rows whose result weighs just under the budget."""
    per_row = result_budget(limits) // limits.max_rows - VALUE_BYTES - len(tag) - 8
    return f"SELECT repeat('x', {per_row}) || '{tag}' || i AS t FROM range({limits.max_rows}) r(i)"


def test_numbers_count_against_the_budget(tmp_path):
    database = Database("duckdb", str(tmp_path / "empty.duckdb"))
    import duckdb

    duckdb.connect(database.path).close()
    columns = ", ".join(f"i * 1.5 AS c{n}" for n in range(120))
    # The default budget, under a time limit no loaded machine reaches: what is tested is the
    # size of the result, never how fast it came (a loaded run once hit the 10 s default).
    limits = Limits(timeout_s=600)
    wide = execute(Job(database, f"SELECT {columns} FROM range(10000) r(i)"), limits)
    # 1.2 million numbers: 38 MB against the budget of 32 MiB, with no text at all.
    assert wide.status is Status.TOO_MANY_ROWS
    assert wide.error == f"result larger than {result_budget(Limits()) // MIB} MiB"
    assert result_budget(limits) == result_budget(Limits())
    narrow = execute(Job(database, f"SELECT {columns} FROM range(8000) r(i)"), limits)
    assert narrow.status is Status.OK and len(narrow.rows) == 8000


@pytest.mark.slow
def test_a_hundred_maximal_answers_score_within_the_bound(tpcds_cache, tmp_path):
    limits = Limits()
    predictions = tmp_path / "maximal.jsonl"
    with predictions.open("w") as out:
        for item_id in range(1, ITEMS + 1):
            answers = [maximal_sql(limits, f"{item_id}-{n}") for n in range(SAMPLES)]
            out.write(json.dumps({"id": item_id, "prediction": answers}) + "\n")
    scores = tmp_path / "scores.json"
    peak = _peak_mib(
        "score", "tpcds", str(predictions), "--samples", "--scale-factor", "0.01",
        "--cache-dir", str(tpcds_cache), "--workers", "2", "--no-progress", "-o", str(scores),
    )  # fmt: skip
    result = json.loads(scores.read_text())
    statuses = [sample["status"] for item in result["items"][:ITEMS] for sample in item["samples"]]
    # Each answer is held whole (maximal, not cut off), and the run stays within the bound.
    assert statuses == ["ok"] * (ITEMS * SAMPLES)
    assert peak < BOUND_MIB, f"peak RSS of score: {peak:.0f} MiB"


@pytest.mark.slow
def test_verify_of_maximal_answers_stays_within_the_bound(tpcds_cache, tpcds_items, tmp_path):
    """A real lm_eval run with 24 maximal answers, verified: rescoring holds as little. 24 x 32
    MiB is three times what a run keeps in memory (docs/failures.md#memory), so verify must spill
    as score does; the other items' answers are one-row constants (cheap: the suite's time)."""
    from support.verify_runs import run_tpcds

    limits = Limits()
    maximal = {item.id for item in tpcds_items[:MAXIMAL_IN_VERIFY]}
    sql = {item.id: maximal_sql(limits, str(item.id)) for item in tpcds_items if item.id in maximal}
    answers = {item.id: f"```sql\n{sql.get(item.id, 'SELECT 1')}\n```" for item in tpcds_items}
    folder = run_tpcds(tmp_path / "lm", tpcds_cache, tpcds_items, answers)
    peak = _peak_mib(
        "verify", str(folder), "--cache-dir", str(tpcds_cache), "--workers", "2",
        # Exit 0: verified, with findings or without (the answers are constants).
        "--no-progress", "-o", str(tmp_path / "verification.json"),
    )  # fmt: skip
    assert peak < BOUND_MIB, f"peak RSS of verify: {peak:.0f} MiB"


def _peak_mib(*args: str, codes=(0,)) -> float:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *args], capture_output=True, text=True, env=env, timeout=1800
    )
    assert done.returncode in codes, done.stderr[-3000:]
    line = next(line for line in done.stderr.splitlines() if line.startswith("peak-rss-kib"))
    return int(line.split()[1]) / 1024
