"""A score is the same on a quiet machine and under deliberate CPU stress (docs/failures.md#an-
answer-that-runs-out-of-time): TPC-DS's gold as the answers (q67 among them) and a LogicCat mix
of right, wrong, failing and looping answers are scored quietly, then again while busy processes
(three per core) load every CPU, and their per-item score files are byte-identical.

The time limit is small on purpose, so that under the stress many answers run past it on their
first run: what keeps their verdicts is the rule for an answer that runs out of time, not a limit
so generous that load never reaches it. The work budget of the SQLite answers is small too
(:data:`WORK_BUDGET_STEPS`), so that the looping answers reach it within the test's time: quietly
before the time limit, under the stress after it, in the run again alone."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sqlbench_lmeval.execution import Limits
from sqlbench_lmeval.offline import score_predictions, task_items

#: The answers' limit of both runs: TPC-DS's gold at scale factor 0.01 takes a few to a few
#: hundred milliseconds quietly, several times that under the stress.
TIMEOUT_S = 0.2
#: The SQLite answers' work budget in both runs: a looping answer takes about 0.05 s quietly to
#: spend it, the first 12 LogicCat gold queries fewer steps than this.
WORK_BUDGET_STEPS = 1 << 21
#: Busy processes per CPU while the second run scores (at least 3, as the issue asks).
STRESS_PER_CPU = 3
#: A busy process ends by itself after this long, if the test could not stop it.
STRESS_MAX_S = 1800
#: The TPC-DS items whose gold is the answer: q67 (timed out under load at 10 s) and the
#: heaviest at scale factor 0.01, kept few so that the test stays small enough for CI.
TPCDS_IDS = frozenset({4, 11, 14, 23, 64, 67, 72, 74, 78, 95})
LOOP = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"


def _logiccat_mix(items) -> dict[int, str]:
    """12 LogicCat answers: gold, wrong (a count of gold's rows), failing, looping, constant."""
    answers = {}
    for n, item in enumerate(items[:12]):
        kind = n % 6
        if kind in (0, 1):
            answers[item.id] = item.gold_sql
        elif kind == 2:
            answers[item.id] = f"SELECT COUNT(*) FROM ({item.gold_sql}) AS t"
        elif kind == 3:
            answers[item.id] = "SELECT no_such_column FROM no_such_table"
        elif kind == 4:
            answers[item.id] = LOOP
        else:
            answers[item.id] = "SELECT 1"
    return answers


def _score_files(folder: Path, tpcds_cache: Path, logiccat_cache: Path) -> dict[str, Path]:
    folder.mkdir()
    limits = Limits(timeout_s=TIMEOUT_S, work_budget=WORK_BUDGET_STEPS)
    tpcds = [
        item
        for item in task_items("tpcds", cache_dir=tpcds_cache, scale_factor=0.01)
        if item.id in TPCDS_IDS
    ]
    logiccat = task_items("logiccat", cache_dir=logiccat_cache)
    runs = {
        "tpcds": score_predictions(
            "tpcds", {item.id: item.gold_sql for item in tpcds}, ids=TPCDS_IDS,
            cache_dir=tpcds_cache, scale_factor=0.01, limits=limits, workers=2, progress=False,
        ),
        "logiccat": score_predictions(
            "logiccat", _logiccat_mix(logiccat), ids=[item.id for item in logiccat[:12]],
            cache_dir=logiccat_cache, limits=limits, workers=2, progress=False,
        ),
    }  # fmt: skip
    files = {}
    for name, result in runs.items():
        files[name] = folder / f"{name}.json"
        files[name].write_text(json.dumps(result["items"], sort_keys=True, indent=1))
    return files


@contextlib.contextmanager
def _cpu_stress():
    """Three busy processes per CPU, each ending by itself after ``STRESS_MAX_S`` at most, and
    killed when the block ends, however it ends."""
    cpus = len(os.sched_getaffinity(0))
    spin = (
        "import time\n"
        f"end = time.monotonic() + {STRESS_MAX_S}\n"
        "while time.monotonic() < end:\n"
        "    pass"
    )
    busy = []
    try:
        for _ in range(STRESS_PER_CPU * cpus):
            busy.append(subprocess.Popen([sys.executable, "-c", spin]))
        yield len(busy)
    finally:
        for process in busy:
            process.kill()
        for process in busy:
            process.wait()


@pytest.mark.slow
def test_scores_are_the_same_under_cpu_stress(tpcds_cache, logiccat_cache, tmp_path):
    quiet = _score_files(tmp_path / "quiet", tpcds_cache, logiccat_cache)
    with _cpu_stress() as busy:
        assert busy >= 3 * len(os.sched_getaffinity(0))
        loaded = _score_files(tmp_path / "loaded", tpcds_cache, logiccat_cache)
    for name in quiet:
        scores = json.loads(quiet[name].read_text())
        assert quiet[name].read_bytes() == loaded[name].read_bytes(), _differences(
            scores, json.loads(loaded[name].read_text())
        )
    tpcds = {score["id"]: score for score in json.loads(quiet["tpcds"].read_text())}
    # Gold as the answer, q67 included, is right on both runs; each looping answer stops at its
    # work budget (so its error names the budget, not a time), and no other answer times out.
    assert tpcds[67]["status"] == "ok" and tpcds[67]["ex"] == 1
    logiccat = json.loads(quiet["logiccat"].read_text())
    loops = [score for score in logiccat if "RECURSIVE" in (score["extracted_sql"] or "")]
    assert len(loops) == 2 and {score["status"] for score in loops} == {"timeout"}
    assert {score["error"] for score in loops} == {
        f"stopped at its work budget of {WORK_BUDGET_STEPS:,} VM steps"
    }
    assert [s for s in logiccat if s["status"] == "timeout" and s not in loops] == []


def _differences(quiet: list[dict], loaded: list[dict]) -> str:
    shown = []
    for before, after in zip(quiet, loaded, strict=True):
        keys = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        if keys:
            changes = {key: (before.get(key), after.get(key)) for key in keys}
            shown.append(f"item {before['id']}: {changes}")
    return "; ".join(shown[:10])
