"""Speed and memory of scoring: extraction + sandboxed execution + comparison.

Builds ``--dbs`` small SQLite files (LogicCat-sized: a few tables of a few hundred rows), makes
``--items`` synthetic (prediction, gold) pairs on them - half the predictions equal to the gold
query, the rest a different but valid query, all wrapped the way chat models answer - and
scores them twice through a fresh GoldCache: cold (gold executed) and warm (gold read from the
cache). Prints items/second for each phase, the split into extract/execute/compare, and peak
RSS of this process and of its worker processes.

    python perf/bench_scoring.py --items 4036 --workers 2
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

from sqlbench_lmeval.execution import Database, GoldCache, Job, Limits, Status
from sqlbench_lmeval.scoring.compare import compare, gold_order_matters
from sqlbench_lmeval.sql.extract import extract_sql

QUERIES = [
    "SELECT count(*) FROM orders",
    "SELECT name, city FROM customers WHERE id < {k}",
    "SELECT city, count(*) FROM customers GROUP BY city ORDER BY count(*) DESC, city",
    "SELECT c.name, sum(o.amount) FROM customers c JOIN orders o ON o.customer_id = c.id "
    "GROUP BY c.name",
    "SELECT avg(amount) FROM orders WHERE status = 'paid'",
    "SELECT product, max(amount) - min(amount) FROM orders GROUP BY product",
    "SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE amount > {k})",
    "SELECT strftime('%Y', day) AS y, round(sum(amount), 2) FROM orders GROUP BY y ORDER BY y",
    "SELECT * FROM orders ORDER BY amount DESC LIMIT {k}",
    "WITH big AS (SELECT customer_id, sum(amount) AS s FROM orders GROUP BY customer_id) "
    "SELECT count(*) FROM big WHERE s > {k}",
]
WRAPPERS = [
    "```sql\n{sql};\n```",
    "<think>\nThe question asks for a total.\n</think>\n\n```sql\n{sql}\n```",
    "Here is the query:\n\n{sql}\n\nIt answers the question.",
    "{sql}",
]


def build_databases(folder: Path, count: int, rng: random.Random) -> list[Database]:
    databases = []
    cities = ["Oslo", "Lima", "Pune", "Kyiv", "Doha", "Nice"]
    for n in range(count):
        path = folder / f"db_{n:02d}.sqlite"
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, city TEXT)")
        conn.execute(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, product TEXT, "
            "amount REAL, status TEXT, day TEXT)"
        )
        conn.executemany(
            "INSERT INTO customers VALUES (?, ?, ?)",
            [(i, f"customer {i}", rng.choice(cities)) for i in range(200)],
        )
        conn.executemany(
            "INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    i,
                    rng.randrange(200),
                    f"p{rng.randrange(20)}",
                    round(rng.uniform(1, 500), 2),
                    rng.choice(["paid", "open", "void"]),
                    f"{rng.randrange(2015, 2024)}-0{rng.randrange(1, 10)}-1{rng.randrange(10)}",
                )
                for i in range(600)
            ],
        )
        conn.commit()
        conn.close()
        databases.append(Database("sqlite", str(path)))
    return databases


def make_items(databases, count: int, rng: random.Random):
    items = []
    for _ in range(count):
        database = rng.choice(databases)
        gold = rng.choice(QUERIES).format(k=rng.randrange(5, 150))
        pred = gold if rng.random() < 0.5 else rng.choice(QUERIES).format(k=rng.randrange(5, 150))
        items.append((database, gold, rng.choice(WRAPPERS).format(sql=pred)))
    return items


class WorkerMemory:
    """Samples the peak RSS (VmHWM) of this process's worker children from /proc (Linux).

    ``RUSAGE_CHILDREN.ru_maxrss`` cannot be used: it keeps the parent's RSS at fork time.
    """

    def __init__(self) -> None:
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> WorkerMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        parent = str(os.getpid())
        while not self._stop.wait(0.2):
            for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
                if not pid.isdigit():
                    continue
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as handle:
                        if b"sqlbench_lmeval.execution.worker" not in handle.read():
                            continue  # not a worker, or a fork not yet turned into one
                    with open(f"/proc/{pid}/status") as handle:
                        fields = dict(line.split(":", 1) for line in handle if ":" in line)
                except OSError:
                    continue
                if fields.get("PPid", "").strip() == parent and "VmHWM" in fields:
                    self.peak_kib = max(self.peak_kib, int(fields["VmHWM"].split()[0]))


def cpu_seconds() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def score(items, cache: GoldCache, limits: Limits, workers: int | None) -> dict[str, float]:
    cpu_start = cpu_seconds()
    start = time.perf_counter()
    extractions = [extract_sql(output) for _, _, output in items]
    t_extract = time.perf_counter()
    gold_jobs = [Job(db, gold) for db, gold, _ in items]
    pred_jobs = [Job(db, ex.sql) for (db, _, _), ex in zip(items, extractions, strict=True)]
    gold, pred = cache.run_together(gold_jobs, pred_jobs, limits, workers=workers)
    t_execute = time.perf_counter()
    ex = 0
    for (_, gold_sql, _), p, g in zip(items, pred, gold, strict=True):
        ex += compare(p, g, ordered=gold_order_matters(gold_sql, "sqlite")).ex
    end = time.perf_counter()
    cpu_end = cpu_seconds()
    return {
        "parent_cpu_s": cpu_end[0] - cpu_start[0],
        "workers_cpu_s": cpu_end[1] - cpu_start[1],
        "total_s": end - start,
        "extract_s": t_extract - start,
        "execute_s": t_execute - t_extract,
        "compare_s": end - t_execute,
        "ex": ex / len(items),
        "ok": sum(o.status is Status.OK for o in pred) / len(items),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=4036)
    parser.add_argument("--dbs", type=int, default=45)
    parser.add_argument("--workers", type=int, default=None, help="default: CPU count")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    limits = Limits()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        databases = build_databases(folder, args.dbs, rng)
        items = make_items(databases, args.items, rng)
        cache = GoldCache(folder / "cache")
        print(f"{len(items)} items on {len(databases)} SQLite files, workers={args.workers}")
        with WorkerMemory() as memory:
            for phase in ("cold", "warm"):
                result = score(items, cache, limits, args.workers)
                print(
                    f"{phase}: {len(items) / result['total_s']:8.0f} items/s  "
                    f"wall {result['total_s']:.2f} s (extract {result['extract_s']:.2f}, "
                    f"execute {result['execute_s']:.2f}, compare {result['compare_s']:.2f})  "
                    f"cpu: parent {result['parent_cpu_s']:.2f} s, workers "
                    f"{result['workers_cpu_s']:.2f} s  ex={result['ex']:.3f} "
                    f"pred_ok={result['ok']:.3f}"
                )
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20
    print(
        f"peak RSS: this process {own:.0f} MiB, largest worker {memory.peak_kib / 1024:.0f} MiB"
        " (sampled)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
