"""What the whole-process LogicCat scoring benchmarks share (``bench_logiccat_score.py``,
``bench_sampled_score.py``): their options, the bundle (built first, not timed) and timed
``sqlbench-lmeval score`` runs through the real CLI in a subprocess - one cold (empty gold
cache) then ``--warm-runs`` warm ones (gold cache filled by the cold run), each with its wall
time, CPU time (user + system of the scoring process and its workers: steadier than wall time
on a shared box) and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Run:
    """One timed ``score`` run: phase (``cold``/``warm``), times, and its output JSON."""

    phase: str
    seconds: float
    cpu: float
    peak_mib: float
    result: dict


def options(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--source", help="LogicCat source folder (default: the usual lookup)")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument(
        "--cache-dir", help="reuse a cache holding a built bundle (its gold cache is emptied)"
    )
    parser.add_argument(
        "--warm-runs", type=int, default=3, help="warm runs after the cold one (default: 3)"
    )
    return parser.parse_args()


def prepare(args: argparse.Namespace, prefix: str):
    """(work folder, cache root, LogicCat bundle): the bundle built or loaded, not timed."""
    from sqlbench_lmeval.logiccat.bundle import ensure_bundle

    work = Path(tempfile.mkdtemp(prefix=prefix))
    cache = Path(args.cache_dir) if args.cache_dir else work / "cache"
    started = time.perf_counter()
    bundle = ensure_bundle(source=args.source, cache_dir=cache, progress=False)
    print(f"bundle built in {time.perf_counter() - started:.1f} s (not part of the timings)")
    return work, cache, bundle


def score_runs(
    predictions: Path, cache: Path, work: Path, workers: int, warm_runs: int, *flags: str
) -> Iterator[Run]:
    """``score logiccat <predictions> <flags>``: once cold, then ``warm_runs`` times warm."""
    from sqlbench_lmeval.paths import gold_cache_dir

    command = [
        sys.executable, "-m", "sqlbench_lmeval", "score", "logiccat", str(predictions), *flags,
        "--cache-dir", str(cache), "--workers", str(workers), "--no-progress",
    ]  # fmt: skip
    # The cold run must execute every gold query: start from an empty gold cache.
    shutil.rmtree(gold_cache_dir(cache), ignore_errors=True)
    for number, phase in enumerate(["cold"] + ["warm"] * warm_runs):
        output = work / f"scores-{number}-{phase}.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([*command, "--output", str(output)], check=True, capture_output=True)
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        peak_mib = max(before.ru_maxrss, after.ru_maxrss) / 1024
        yield Run(phase, seconds, cpu, peak_mib, json.loads(output.read_text()))


def timed(
    command: list[str], ok: tuple[int, ...] = (0,)
) -> tuple[float, float, subprocess.CompletedProcess]:
    """Run ``command`` (it must succeed: exit with one of ``ok``); its wall time, CPU time (user
    + system of it and its children) and completed process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in ok:
        raise subprocess.CalledProcessError(done.returncode, command, done.stdout, done.stderr)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu, done


def print_times(times: list[float], what: str) -> None:
    """Best and median of ``times`` (seconds), with the load average beside them."""
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    median = sorted(times)[len(times) // 2]
    print(
        f"best of {len(times)}: {min(times):.2f} s, median {median:.2f} s {what} "
        f"(load average now {load})"
    )


def print_best_warm(runs: list[Run]) -> None:
    """The best warm wall time (the number a target is checked against) and the load."""
    warm = [run.seconds for run in runs if run.phase == "warm"]
    if warm:
        load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
        print(f"best of {len(warm)} warm: {min(warm):.2f} s (load average now {load})")
