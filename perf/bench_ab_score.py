"""A/B of warm ``sqlbench-lmeval score logiccat`` with the gold SQL as predictions: this checkout
against another commit of the project, alternating, in one run.

A shared machine's load drifts over minutes, so timing A then B apart compares loads as much as
code. Here each pair runs A and B back to back (in alternating order), each from its own
source tree (``PYTHONPATH``), on one cache whose gold entries each side filled by an untimed
cold run first (gold cache keys hold the execution version, so a side whose results differ
keeps its own entries); printed are every pair and the medians of wall and CPU time (user +
system of the scoring process and its workers), and B's median relative to A's.

    git archive COMMIT | tar -x -C /tmp/baseline          # the A side, e.g. main
    python perf/bench_ab_score.py --baseline /tmp/baseline --pairs 5 --workers 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from _common import timed

HERE = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="source tree of the A side")
    parser.add_argument("--source", help="LogicCat source folder (default: the usual lookup)")
    parser.add_argument("--cache-dir", help="a cache holding a built bundle (default: a new one)")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    args = parser.parse_args()

    from sqlbench_lmeval.logiccat.bundle import ensure_bundle

    work = Path(tempfile.mkdtemp(prefix="bench_ab_"))
    cache = Path(args.cache_dir) if args.cache_dir else work / "cache"
    bundle = ensure_bundle(source=args.source, cache_dir=cache, progress=False)
    predictions = work / "gold-as-predictions.jsonl"
    with predictions.open("w", encoding="utf-8") as out:
        for record in bundle.records:
            out.write(json.dumps({"id": record.id, "prediction": record.gold_sql}) + "\n")
    sides = {"A": Path(args.baseline).resolve(), "B": HERE}

    def score(name: str, output: Path) -> tuple[float, float]:
        command = [
            sys.executable, "-m", "sqlbench_lmeval", "score", "logiccat", str(predictions),
            "--cache-dir", str(cache), "--workers", str(args.workers), "--no-progress",
            "--output", str(output),
        ]  # fmt: skip
        os.environ["PYTHONPATH"] = str(sides[name])
        seconds, cpu, _ = timed(command)
        return seconds, cpu

    for name in sides:  # cold, untimed: fills each side's gold cache
        score(name, work / f"cold-{name}.json")
    times: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
    for pair in range(args.pairs):
        order = ("A", "B") if pair % 2 == 0 else ("B", "A")
        for name in order:
            times[name].append(score(name, work / f"warm-{name}-{pair}.json"))
        print(
            f"pair {pair + 1} ({'-'.join(order)}): "
            + ", ".join(f"{n} {times[n][-1][0]:.2f} s (CPU {times[n][-1][1]:.2f} s)" for n in "AB"),
            flush=True,
        )
    wall = {n: statistics.median(t[0] for t in times[n]) for n in "AB"}
    cpu = {n: statistics.median(t[1] for t in times[n]) for n in "AB"}
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(
        f"median wall: A {wall['A']:.2f} s, B {wall['B']:.2f} s (B/A {wall['B'] / wall['A']:.3f}); "
        f"median CPU: A {cpu['A']:.2f} s, B {cpu['B']:.2f} s (B/A {cpu['B'] / cpu['A']:.3f}); "
        f"load average now {load}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
