"""How many gold queries have ties, what the tie probe costs, and whether tie-aware EX holds.

For every gold query of a workload (LogicCat on SQLite, LogicCat's MySQL gold on a prepared
MariaDB, or TPC-DS on DuckDB) it plans the tie probe (``tie_probe``), runs gold and then the
probes in two timed batches through the execution engine, builds the right answers
(``tie_compare.tie_gold``) and checks, per item with ties, that other tie resolutions of gold's
own full result are accepted and that a row from outside the tied groups is not. Prints counts
and timings; ``--output`` writes one JSON line per item (plan, answers) for cross-engine use.

    python perf/measure_ties.py logiccat --workers 2 --output ties-sqlite.jsonl
    python perf/measure_ties.py logiccat --engine mysql --url mysql://... --output m.jsonl
    python perf/measure_ties.py tpcds --workers 2
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass

from sqlbench_lmeval.execution import Database, Job, Limits, Outcome, Status, execute_many
from sqlbench_lmeval.scoring.tie_compare import TieGold, acceptable_count, accepts, tie_gold
from sqlbench_lmeval.scoring.tie_probe import plan_ties

COUNTS = ("ordered", "cut", "cut_without_order", "extra_key_columns", "probed", "ties",
          "ties_at_cut", "ties_in_middle", "inner_cuts", "outsider_checked")  # fmt: skip


@dataclass(frozen=True)
class Gold:
    id: int
    database: Database
    sql: str
    dialect: str
    table_columns: frozenset[str] | None


def logiccat_golds(cache_dir, engine: str, url: str | None) -> list[Gold]:
    from sqlbench_lmeval.logiccat import gold
    from sqlbench_lmeval.logiccat.benchmark import CONNECTION_SETUP
    from sqlbench_lmeval.logiccat.bundle import ensure_bundle

    bundle = ensure_bundle(cache_dir=cache_dir, progress=False)
    columns = {}
    golds = []
    for record in bundle.records:
        if record.gold_status == gold.NON_SELECT:
            continue
        path = str(bundle.database_path(record.db_id))
        if path not in columns:
            columns[path] = frozenset(gold.column_types(path))
        if engine == "mysql":
            from sqlbench_lmeval.logiccat.server import read_manifest, run_url, server_database

            server = run_url(url, read_manifest(cache_dir))
            database = server_database(server, record.db_id)
            golds.append(Gold(record.id, database, record.gold_sql_mysql, "mysql", columns[path]))
        else:
            database = Database("sqlite", path, CONNECTION_SETUP)
            golds.append(Gold(record.id, database, record.gold_sql, "sqlite", columns[path]))
    return golds


def tpcds_golds(cache_dir) -> list[Gold]:
    from sqlbench_lmeval.tpcds.benchmark import load_items
    from sqlbench_lmeval.tpcds.data import schema_mapping

    columns = frozenset(c.lower() for table in schema_mapping().values() for c in table)
    return [
        Gold(item.id, item.database, item.gold_sql, item.dialect, columns)
        for item in load_items(cache_dir=cache_dir)
    ]


def other_resolutions(answers: TieGold, rng: random.Random, count: int = 3) -> list[list[tuple]]:
    """Tie resolutions of gold's full result: per group, a random choice of its rows in a random
    order (the first: each group reversed, with the last rows of cut groups)."""
    resolutions = [[row for g in answers.groups for row in list(g.rows)[::-1][: g.need]]]
    for _ in range(count):
        resolutions.append([row for g in answers.groups for row in rng.sample(g.rows, g.need)])
    return resolutions


def outsider_swap(
    answers: TieGold, full: tuple[tuple, ...], width: int, rng: random.Random
) -> list[tuple] | None:
    """Gold's answer with one row replaced by a row of the full result outside the groups it
    draws from and unequal to all their rows (None if there is none)."""
    inside = {repr(row) for g in answers.groups for row in g.rows}
    outsiders = [row for row in full if repr(row[:width]) not in inside]
    answer = [row for g in answers.groups for row in g.rows[: g.need]]
    if not outsiders or not answer:
        return None
    swapped = list(answer)
    swapped[rng.randrange(len(swapped))] = tuple(rng.choice(outsiders)[:width])
    return swapped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=["logiccat", "tpcds"])
    parser.add_argument("--engine", choices=["sqlite", "mysql"], default="sqlite")
    parser.add_argument("--url", help="logiccat --engine mysql: the prepared server")
    parser.add_argument("--cache-dir", default=os.environ.get("SQLBENCH_LMEVAL_CACHE"))
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--output", help="JSONL, one line per item")
    args = parser.parse_args()

    if args.workload == "tpcds":
        golds = tpcds_golds(args.cache_dir)
    else:
        golds = logiccat_golds(args.cache_dir, args.engine, args.url)
    limits = Limits()
    started = time.perf_counter()
    plans = [plan_ties(g.sql, g.dialect) for g in golds]
    plan_s = time.perf_counter() - started

    started = time.perf_counter()
    outcomes = execute_many([Job(g.database, g.sql) for g in golds], limits, workers=args.workers)
    gold_s = time.perf_counter() - started
    probed = [i for i, p in enumerate(plans) if p.handled and p.probe_sql and outcomes[i].ok]
    started = time.perf_counter()
    probe_outcomes = execute_many(
        [Job(golds[i].database, plans[i].probe_sql) for i in probed], limits, workers=args.workers
    )
    probe_s = time.perf_counter() - started
    probes: dict[int, Outcome] = dict(zip(probed, probe_outcomes, strict=True))
    # A probe with a fallback (a key reading an alias or a table column of its name) that
    # failed: the fallback, as scoring uses it (``gold_ties.TieBatch.finish``).
    retry = [i for i in probed if plans[i].fallback_sql and probes[i].status is Status.ERROR]
    fallbacks = execute_many(
        [Job(golds[i].database, plans[i].fallback_sql) for i in retry], limits, workers=args.workers
    )
    probes.update(zip(retry, fallbacks, strict=True))

    counts: Counter = Counter()
    unusable: Counter = Counter()
    not_handled: Counter = Counter()
    acceptable: dict[int, int] = {}
    property_failures = []
    lines = []
    rng = random.Random(21)
    started = time.perf_counter()
    for index, (g, plan, outcome) in enumerate(zip(golds, plans, outcomes, strict=True)):
        line = {"id": g.id, "handled": plan.handled, "reason": plan.reason,
                "inner_cuts": plan.inner_cuts, "gold_ok": outcome.ok}  # fmt: skip
        counts["items"] += 1
        counts["inner_cuts"] += plan.inner_cuts
        if not plan.handled:
            not_handled[plan.reason] += 1
            lines.append(line)
            continue
        counts["ordered"] += plan.ordered
        counts["cut"] += plan.has_cut
        counts["cut_without_order"] += plan.has_cut and not plan.ordered
        counts["extra_key_columns"] += plan.extra_columns > 0
        counts["probed"] += bool(plan.probe_sql)
        if not plan.has_order_or_cut or not outcome.ok:
            lines.append(line)
            continue
        answers = tie_gold(plan, outcome, probes.get(index))
        if isinstance(answers, str):
            unusable[answers] += 1
            line["unusable"] = answers
            lines.append(line)
            continue
        count = acceptable_count(answers)
        acceptable[g.id] = count
        cut_ties = any(group.cut for group in answers.groups)
        middle_ties = any(not group.cut and len(set(map(repr, group.rows))) > 1
                          for group in answers.groups)  # fmt: skip
        counts["ties"] += count > 1
        counts["ties_at_cut"] += cut_ties and count > 1
        counts["ties_in_middle"] += middle_ties
        line.update(acceptable=str(count), cut_ties=cut_ties, middle_ties=middle_ties,
                    answers=answers.to_json())  # fmt: skip
        if count > 1:
            for resolution in other_resolutions(answers, rng):
                if not accepts(resolution, answers):
                    property_failures.append((g.id, "resolution rejected"))
            source = probes.get(index, outcome)
            swapped = outsider_swap(answers, source.rows, len(outcome.columns), rng)
            if swapped is not None and accepts(swapped, answers):
                property_failures.append((g.id, "outsider accepted"))
            counts["outsider_checked"] += swapped is not None
        lines.append(line)
    compare_s = time.perf_counter() - started

    print(f"{args.workload} ({args.engine if args.workload == 'logiccat' else 'duckdb'}): "
          f"{counts['items']} gold queries")  # fmt: skip
    for name in COUNTS:
        print(f"  {name:20} {counts[name]}")
    print(f"  not handled: {dict(not_handled)}")
    print(f"  probe result unusable: {dict(unusable)}")
    big = sorted(acceptable.values())
    if big:
        print(f"  acceptable answers: max {max(big):.3g}, items with > 1: "
              f"{sum(v > 1 for v in big)}, > 1e6: {sum(v > 10**6 for v in big)}")  # fmt: skip
    print(f"  property failures: {len(property_failures)} {property_failures[:10]}")
    print(f"  time: plan {plan_s:.2f} s, gold batch {gold_s:.2f} s, probe batch "
          f"({len(probed)} probes) {probe_s:.2f} s, answers+checks {compare_s:.2f} s "
          f"(workers {args.workers}, load {os.getloadavg()[0]:.2f})")  # fmt: skip
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            for line in lines:
                out.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
    return 1 if property_failures else 0


if __name__ == "__main__":
    sys.exit(main())
