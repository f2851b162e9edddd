"""A/B wall and CPU time of ``sqlbench-lmeval score`` between two source trees of the package.

Runs ``python -m sqlbench_lmeval score TASK PREDICTIONS`` alternately with ``PYTHONPATH=A`` and
``PYTHONPATH=B`` (worker processes inherit it), ``--pairs`` times after one untimed warm-up run
of each (which fills the gold cache, and on a tree with data dependence builds the perturbed
copies), all on the same cache (``$SQLBENCH_LMEVAL_CACHE``), and prints each run and the
medians. CPU is user + system of the scoring process and its workers (steadier than wall time
on a shared machine); "main" is the scoring process's own (extraction, comparison, the
table-read and data-dependence tests, imports: what the workers' SQL does not explain). Same
SQL, same gold cache: the difference is the code's.

    git archive main | tar -x -C /tmp/main-tree
    python perf/ab_score.py logiccat gold-as-predictions.jsonl --a /tmp/main-tree --b . --pairs 5

With ``--cold`` every timed run starts from an empty gold cache (``$SQLBENCH_LMEVAL_CACHE``'s
``gold-results`` folder is removed before it): gold and its tie probes run as on a first score.
The built data (bundles, perturbed copies) is kept.

With ``--bird`` (LogicCat only) each pair also runs ``perf/bird_style_score.py`` over the same
predictions and databases (a BIRD-style evaluator: a pool of one process per core, a fresh
connection per pair, both queries run), in turn with A and B, and the medians end with how many
times its CPU each tree's is. Every run prints the load average (1 minute) when it ended: on a
shared machine compare runs of similar load.

    python perf/ab_score.py logiccat mix.jsonl --a /tmp/d2bf4f7 --b . --pairs 5 --bird
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# ``python -m sqlbench_lmeval ARGS`` that also writes its own CPU seconds (not its workers')
# to the file named by its first argument.
_MAIN = """
import resource, runpy, sys
report, sys.argv = sys.argv[1], ["sqlbench_lmeval", *sys.argv[2:]]
try:
    runpy.run_module("sqlbench_lmeval", run_name="__main__")
finally:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    open(report, "w").write(str(usage.ru_utime + usage.ru_stime))
"""


BIRD = "BIRD"
_BIRD_SCRIPT = Path(__file__).resolve().with_name("bird_style_score.py")


def timed(tree: str, task: str, predictions: str, out: Path) -> tuple[float, float, float]:
    """Wall, CPU (with its workers) and the main process's CPU of one run of ``tree``'s
    ``score``, or (``tree`` :data:`BIRD`) of the BIRD-style evaluator."""
    main_cpu = out.with_suffix(".cpu")
    if tree == BIRD:
        env = dict(os.environ)
        command = [sys.executable, "-c", _MAIN_SCRIPT, str(main_cpu), str(_BIRD_SCRIPT)]
        command.append(predictions)
    else:
        env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
        command = [sys.executable, "-c", _MAIN, str(main_cpu), "score", task, predictions]
        command += ["-o", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(
        command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, float(main_cpu.read_text())


# The same for a script: ``python SCRIPT ARGS``.
_MAIN_SCRIPT = """
import resource, runpy, sys
report, sys.argv = sys.argv[1], sys.argv[2:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
finally:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    open(report, "w").write(str(usage.ru_utime + usage.ru_stime))
"""


def gold_results() -> Path:
    """The gold cache of ``$SQLBENCH_LMEVAL_CACHE`` (as ``paths.gold_cache_dir`` places it)."""
    root = os.environ.get("SQLBENCH_LMEVAL_CACHE")
    if not root:
        raise SystemExit("--cold needs $SQLBENCH_LMEVAL_CACHE: the cache it empties")
    return Path(root).expanduser() / "gold-results"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task")
    parser.add_argument("predictions")
    parser.add_argument("--a", required=True, help="source tree A (holds sqlbench_lmeval/)")
    parser.add_argument("--b", required=True, help="source tree B")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="an empty gold cache for every run")
    parser.add_argument(
        "--bird", action="store_true", help="also run perf/bird_style_score.py in every pair"
    )
    args = parser.parse_args()
    trees = {"A": args.a, "B": args.b}
    if args.bird:
        if args.task != "logiccat":
            raise SystemExit("--bird scores LogicCat only")
        trees[BIRD] = BIRD
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "scores.json"
        for tree in trees.values():  # warm-up: gold cache and perturbed copies
            timed(tree, args.task, args.predictions, out)
        times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in trees}
        names = list(trees)
        for pair in range(args.pairs):
            order = names if pair % 2 == 0 else names[::-1]
            for name in order:
                if args.cold and name != BIRD:
                    shutil.rmtree(gold_results(), ignore_errors=True)
                wall, cpu, main_cpu = timed(trees[name], args.task, args.predictions, out)
                times[name].append((wall, cpu, main_cpu))
                print(
                    f"pair {pair + 1} {name}: wall {wall:6.2f} s, CPU {cpu:6.2f} s, "
                    f"main {main_cpu:5.2f} s, load {os.getloadavg()[0]:5.2f}",
                    flush=True,
                )
    medians = {
        name: tuple(statistics.median(run[i] for run in runs) for i in range(3))
        for name, runs in times.items()
    }
    for name, (wall, cpu, main_cpu) in medians.items():
        print(
            f"median {name}: wall {wall:6.2f} s, CPU {cpu:6.2f} s, main {main_cpu:5.2f} s "
            f"({trees[name]})"
        )
    a, b = medians["A"], medians["B"]
    print(
        "B - A: "
        + ", ".join(
            f"{label} {b[i] - a[i]:+.2f} s ({b[i] / a[i] - 1:+.0%})"
            for i, label in enumerate(("wall", "CPU", "main"))
        )
        + f"; B / A: wall {b[0] / a[0]:.2f}x, CPU {b[1] / a[1]:.2f}x"
    )
    if BIRD in medians:
        bird = medians[BIRD]
        print(
            f"{BIRD} CPU / A CPU: {bird[1] / a[1]:.2f}x, {BIRD} CPU / B CPU: {bird[1] / b[1]:.2f}x"
            f" ({BIRD} wall / B wall: {bird[0] / b[0]:.2f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
