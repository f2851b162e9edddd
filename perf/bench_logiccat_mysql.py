"""LogicCat on a MySQL-protocol server: load time of all 44 databases, and the whole-process
time of ``score logiccat --engine mysql`` with the upstream gold as predictions.

Issue 11 targets on 2 cores: the load of all 44 databases in <= 60 s; 4,036 gold-as-prediction
items scored on a local MariaDB in <= 30 s warm. ``--url`` is an admin account (default
``$SQLBENCH_LMEVAL_MYSQL_URL``); the cache (``--cache-dir``, default a temporary folder) gets
the SQLite bundle (needed for the questions; not timed) and the server manifest.

    python perf/bench_logiccat_mysql.py --url mysql://root:pass@127.0.0.1:3306 --workers 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def score_once(predictions: Path, cache: Path, workers: int) -> float:
    start = time.monotonic()
    subprocess.run(
        [
            sys.executable, "-m", "sqlbench_lmeval", "score", "logiccat", str(predictions),
            "--engine", "mysql", "--dialect", "mysql", "--cache-dir", str(cache),
            "--workers", str(workers), "--no-progress", "--output", str(cache / "scores.json"),
        ],
        check=True,
    )  # fmt: skip
    return time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("SQLBENCH_LMEVAL_MYSQL_URL"))
    parser.add_argument("--source", help="LogicCat source folder (default: the usual lookup)")
    parser.add_argument("--cache-dir", help="cache root (default: a temporary folder)")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    args = parser.parse_args()
    if not args.url:
        parser.error("--url or $SQLBENCH_LMEVAL_MYSQL_URL is required")

    from sqlbench_lmeval.logiccat.bundle import ensure_bundle
    from sqlbench_lmeval.logiccat.server import prepare_command

    cache = Path(args.cache_dir or tempfile.mkdtemp(prefix="bench-logiccat-mysql-"))
    bundle = ensure_bundle(source=args.source, cache_dir=cache, progress=False)
    start = time.monotonic()
    manifest = prepare_command(args.url, args.source, cache)
    prepare_s = time.monotonic() - start
    print(f"server: {manifest['server_version']}")
    print(f"load of {len(manifest['databases'])} databases: {manifest['load_s']:.2f} s")
    print(f"prepare in all (load, row checks, account, gold health): {prepare_s:.2f} s")

    predictions = cache / "gold-predictions.jsonl"
    with predictions.open("w", encoding="utf-8") as out:
        for record in bundle.records:
            line = {"id": record.id, "prediction": f"```sql\n{record.gold_sql_mysql}\n```"}
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    cold = score_once(predictions, cache, args.workers)
    warm = score_once(predictions, cache, args.workers)
    ex = json.loads((cache / "scores.json").read_text())["metrics"]["ex"]
    count = len(bundle.records)
    print(f"score {count} gold-as-prediction items: cold {cold:.2f} s, warm {warm:.2f} s")
    print(f"EX {ex}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
