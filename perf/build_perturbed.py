"""Time the build of the perturbed copies (``execution.perturbed``) of database files.

Each file given (SQLite ``.sqlite`` or DuckDB ``.duckdb``) gets its copies built afresh
(existing copies are removed first); the build's wall time and CPU time (this process and its
children: the DuckDB build runs in a child) and the sizes of the original and of each copy are
printed, then the totals.

    python perf/build_perturbed.py ~/.cache/sqlbench_lmeval/logiccat/v5/databases/*.sqlite
    python perf/build_perturbed.py ~/.cache/sqlbench_lmeval/tpcds/v1/sf1/tpcds.duckdb
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

from sqlbench_lmeval.execution import Database
from sqlbench_lmeval.execution.perturbed import COPIES, FOLDER, perturbed_databases

ENGINES = {".sqlite": "sqlite", ".duckdb": "duckdb"}


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(paths: list[str]) -> int:
    total = total_cpu = 0.0
    for name in paths:
        path = Path(name).resolve()
        for copy in COPIES:
            folder = path.parent / FOLDER / copy
            for old in (folder / path.name, folder / f"{path.name}.json"):
                old.unlink(missing_ok=True)
        start, cpu = time.monotonic(), cpu_seconds()
        copies = perturbed_databases(Database(ENGINES[path.suffix], str(path)))
        seconds, cpu = time.monotonic() - start, cpu_seconds() - cpu
        total += seconds
        total_cpu += cpu
        sizes = " + ".join(f"{Path(copy.path).stat().st_size:,}" for copy in copies)
        print(
            f"{path.name}: {seconds:6.2f} s ({cpu:6.2f} s CPU), "
            f"{path.stat().st_size:,} -> {sizes} bytes"
        )
    print(f"{len(paths)} databases in {total:.2f} s ({total_cpu:.2f} s CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
