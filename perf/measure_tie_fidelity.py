"""LogicCat gold on SQLite vs on MariaDB with tie-aware agreement: the effect of tie-aware EX.

Runs every comparable gold (outside the Spider-derived databases) and its tie probe on both
engines (the frozen clock on both), then, per item, whether one engine's result is one of the
right answers of the other's gold (``tie_compare.accepts``), in both directions, beside the
literal multiset agreement ``sqlbench-lmeval fidelity`` measures. Values of the server are read
as ``fidelity`` reads them (DECIMAL as float, temporal values as text), and two rules compare
them: the ``ex`` rules, and ``fidelity``'s cross-engine tolerance (relative 1e-4). Also checks
the given items (default: railway_station's ORDER BY-a-constant items) against the MariaDB
reference runs and against random picks of k rows from the server's own full result.

    python perf/measure_tie_fidelity.py --workers 2
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import sys
import time
from collections import Counter

from measure_ties import logiccat_golds

from sqlbench_lmeval.execution import Job, Limits, execute_many
from sqlbench_lmeval.logiccat import fidelity, gold
from sqlbench_lmeval.logiccat.cross_engine import reference_form
from sqlbench_lmeval.logiccat.fidelity import tolerant_within
from sqlbench_lmeval.scoring.tie_compare import TieGold, accepts, tie_gold
from sqlbench_lmeval.scoring.tie_probe import plan_ties

RAILWAY_ITEMS = (3229, 3233, 3237, 3241)


def comparable(value: object) -> object:
    """A server value as ``fidelity`` compares it with SQLite's."""
    return fidelity.reference_value(reference_form(value))


def run(golds, workers):
    """Per gold: (plan, gold outcome, answers or reason)."""
    plans = [plan_ties(g.sql, g.dialect) for g in golds]
    limits = Limits()
    outcomes = execute_many([Job(g.database, g.sql) for g in golds], limits, workers=workers)
    probed = [i for i, p in enumerate(plans) if p.handled and p.probe_sql and outcomes[i].ok]
    probe_outcomes = execute_many(
        [Job(golds[i].database, plans[i].probe_sql) for i in probed], limits, workers=workers
    )
    probes = dict(zip(probed, probe_outcomes, strict=True))
    results = {}
    for i, (g, plan, outcome) in enumerate(zip(golds, plans, outcomes, strict=True)):
        answers = None
        if plan.handled and plan.has_order_or_cut and outcome.ok:
            answers = tie_gold(plan, outcome, probes.get(i))
        results[g.id] = (plan, outcome, answers, probes.get(i))
    return results


def converted(answers: TieGold) -> TieGold:
    from sqlbench_lmeval.scoring.tie_compare import TieGroup

    groups = tuple(
        TieGroup(tuple(tuple(map(comparable, row)) for row in g.rows), g.need)
        for g in answers.groups
    )
    return TieGold(groups, answers.ordered)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", default=os.environ.get("SQLBENCH_LMEVAL_CACHE"))
    parser.add_argument("--url", help="the prepared server (default: its read-only account)")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--listing", help="`sqlbench-lmeval fidelity logiccat -o` JSONL")
    parser.add_argument("--keep", help="a file to keep both engines' results in (and reuse)")
    parser.add_argument("--items", type=int, nargs="*", default=list(RAILWAY_ITEMS))
    args = parser.parse_args()

    from sqlbench_lmeval.logiccat.bundle import ensure_bundle

    bundle = ensure_bundle(cache_dir=args.cache_dir, progress=False)
    records = {r.id: r for r in bundle.records}
    started = time.perf_counter()
    if args.keep and os.path.isfile(args.keep):
        with open(args.keep, "rb") as kept:
            lite, server = pickle.load(kept)
    else:
        lite = run(logiccat_golds(args.cache_dir, "sqlite", None), args.workers)
        server = run(logiccat_golds(args.cache_dir, "mysql", args.url), args.workers)
        if args.keep:
            with open(args.keep, "wb") as kept:
                pickle.dump((lite, server), kept)
    print(f"gold and probes on both engines in {time.perf_counter() - started:.1f} s")

    ids = [
        i
        for i in lite
        if i in server
        and records[i].db_id not in gold.SPIDER_DERIVED
        and lite[i][1].ok
        and server[i][1].ok
    ]
    tally: Counter = Counter()
    changed = []
    for i in ids:
        _, lite_gold, lite_answers, _ = lite[i]
        _, server_gold, server_answers, _ = server[i]
        lite_rows = list(lite_gold.rows)
        server_rows = [tuple(map(comparable, row)) for row in server_gold.rows]
        literal = fidelity.rows_agree(lite_rows, server_rows)
        tally["comparable"] += 1
        tally["literal_agree"] += literal
        usable = isinstance(lite_answers, TieGold) and isinstance(server_answers, TieGold)
        if not usable:
            tally["tie_agree_ex"] += literal
            tally["tie_agree_tolerant"] += literal
            continue
        tally["both_probed"] += 1
        mirrored = converted(server_answers)
        ex_rule = accepts(server_rows, lite_answers) and accepts(lite_rows, mirrored)
        tolerant = accepts(server_rows, lite_answers, within=tolerant_within) and accepts(
            lite_rows, mirrored, within=tolerant_within
        )
        tally["tie_agree_ex"] += ex_rule or literal
        tally["tie_agree_tolerant"] += tolerant or literal
        if tolerant and not literal:
            changed.append(i)
    print(dict(tally))
    print(f"items that agree only tie-aware (tolerant rule): {len(changed)}: {changed}")
    if args.listing:
        import json

        with open(args.listing, encoding="utf-8") as lines:
            verdicts = {line["id"]: line for line in map(json.loads, lines)}
        classes = Counter(verdicts[i]["sqlite_vs_server"] for i in ids if i in verdicts)
        now = Counter(verdicts[i]["sqlite_vs_server"] for i in changed if i in verdicts)
        print(f"fidelity's sqlite_vs_server classes of the items: {dict(classes)}")
        print(f"  of which agree tie-aware now: {dict(now)}")
        verdict = {i: verdicts.get(i, {}).get("sqlite_vs_server") for i in ids}
        left = [i for i in ids if verdict[i] == fidelity.SUBQUERY_TIES and i not in changed]
        print(f"  subquery_ties items still disagreeing: {left}")

    for reference_path in (
        os.environ.get(fidelity.REFERENCE_ENV),
        "/".join(
            [
                os.path.dirname(os.environ.get(fidelity.REFERENCE_ENV, "")),
                "mariadb-10.11-gold-results-deterministic.json",
            ]
        ),
    ):
        if not reference_path or not os.path.isfile(reference_path):
            continue
        reference = fidelity.load_reference(reference_path)
        agree = Counter()
        for i in ids:
            theirs = reference.get(i)
            if not theirs or theirs.get("status") != "ok":
                continue
            rows = [tuple(fidelity.reference_value(v) for v in row) for row in theirs["rows"]]
            agree["n"] += 1
            agree["literal"] += fidelity.rows_agree(list(lite[i][1].rows), rows)
            answers = lite[i][2]
            if isinstance(answers, TieGold):
                agree["tie_aware"] += accepts(rows, answers, within=tolerant_within)
            else:
                agree["tie_aware"] += fidelity.rows_agree(list(lite[i][1].rows), rows)
        print(f"SQLite gold vs {os.path.basename(reference_path)}: {dict(agree)}")

    rng = random.Random(21)
    for i in args.items:
        plan, lite_gold, answers, lite_probe = lite[i]
        _, server_gold, server_answers, server_probe = server[i]
        if not isinstance(answers, TieGold):
            print(f"item {i}: no tie answers ({answers})")
            continue
        server_rows = [tuple(map(comparable, row)) for row in server_gold.rows]
        width = len(server_gold.columns)
        full = [tuple(map(comparable, row[:width])) for row in server_probe.rows]
        same_full = fidelity.rows_agree([row[:width] for row in lite_probe.rows], full)
        k = answers.size
        picks = [rng.sample(full, k) for _ in range(200)]
        ok = sum(accepts(pick, answers, within=tolerant_within) for pick in picks)
        print(
            f"item {i}: ORDER BY keys {plan.keys}, LIMIT {plan.limit}: full result "
            f"{len(lite_probe.rows)} rows on SQLite, {len(full)} on MariaDB (same multiset: "
            f"{same_full}); server's pick accepted: "
            f"{accepts(server_rows, answers, within=tolerant_within)}; SQLite's pick equals "
            f"the server's literally: {fidelity.rows_agree(list(lite_gold.rows), server_rows)}; "
            f"200 random picks of {k} rows from the server's full result accepted: {ok}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
