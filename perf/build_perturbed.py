"""Time the build of the perturbed copies (``execution.perturbed``) of database files.

Each file given (SQLite ``.sqlite`` or DuckDB ``.duckdb``) gets its copy built afresh (an
existing copy is removed first); the build's wall time and the sizes of the original and of the
copy are printed, then the total.

    python perf/build_perturbed.py ~/.cache/sqlbench_lmeval/logiccat/v5/databases/*.sqlite
    python perf/build_perturbed.py ~/.cache/sqlbench_lmeval/tpcds/v1/sf1/tpcds.duckdb
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from sqlbench_lmeval.execution import Database
from sqlbench_lmeval.execution.perturbed import FOLDER, perturbed_database

ENGINES = {".sqlite": "sqlite", ".duckdb": "duckdb"}


def main(paths: list[str]) -> int:
    total = 0.0
    for name in paths:
        path = Path(name).resolve()
        for old in (path.parent / FOLDER / path.name, path.parent / FOLDER / f"{path.name}.json"):
            old.unlink(missing_ok=True)
        start = time.monotonic()
        copy = perturbed_database(Database(ENGINES[path.suffix], str(path)))
        seconds = time.monotonic() - start
        total += seconds
        size = Path(copy.path).stat().st_size
        print(f"{path.name}: {seconds:6.2f} s, {path.stat().st_size:>11,} -> {size:>11,} bytes")
    print(f"{len(paths)} copies in {total:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
