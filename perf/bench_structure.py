"""Speed of the TPC-DS structure metrics: 99 predictions against gold, and the parse fallback.

1. Structure of 99 predictions against gold: every gold query rewritten with sqlglot's
   PostgreSQL writer (so no prediction text equals a gold text and nothing is cached), read
   with :func:`structure_of` and compared with the gold structure (computed once beforehand, as
   ``tpcds.benchmark`` caches it). Target: under 1 s for the 99.
2. Parse fallback: predictions no dialect reads cost the item's own parse plus seven fallback
   parses; the extra time is ``structure_of`` minus one parse in the item's dialect. Two kinds:
   the error early (each gold query's first ``FROM`` misspelled ``FORM``) and the error at the
   very end (a stray ``)`` after the query: every dialect reads the whole query before it fails,
   the worst case). Target: under 50 ms per prediction.
   Also timed: a prediction that only the sixth fallback reads (T-SQL's square brackets).

Prints numbers, asserts nothing; best of ``--repeat`` runs (the machine is shared).

    python perf/bench_structure.py --repeat 3
"""

from __future__ import annotations

import argparse
import time
from statistics import median

import sqlglot

from sqlbench_lmeval.sql.normalization import parse_one
from sqlbench_lmeval.sql.structure import similarity, structure_of
from sqlbench_lmeval.tpcds.data import gold_queries, schema_mapping

DIALECT = "duckdb"


def best_of(repeat: int, run) -> float:
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        timings.append(time.perf_counter() - started)
    return min(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()

    schema = schema_mapping()
    queries = gold_queries()
    gold = {n: structure_of(sql, DIALECT, schema) for n, sql in queries.items()}
    predictions = {
        n: sqlglot.transpile(sql, read=DIALECT, write="postgres")[0] for n, sql in queries.items()
    }

    def score_all() -> None:
        for n, text in predictions.items():
            similarity(structure_of(text, "postgres", schema), gold[n])

    total = best_of(options.repeat, score_all)
    per_query = {}
    for n, text in predictions.items():
        per_query[n] = best_of(
            options.repeat,
            lambda t=text, n=n: similarity(structure_of(t, "postgres", schema), gold[n]),
        )
    slowest = max(per_query, key=per_query.get)
    print(f"99 predictions against gold: {total:.3f} s (target < 1 s)")
    print(
        f"  per prediction: median {median(per_query.values()) * 1000:.1f} ms, "
        f"slowest query {slowest} {per_query[slowest] * 1000:.1f} ms"
    )

    for kind, broken in {
        "error early": {n: sql.replace("FROM", "FORM", 1) for n, sql in queries.items()},
        "error at the end": {n: sql.rstrip().rstrip(";") + " )" for n, sql in queries.items()},
    }.items():
        extra = []
        for text in broken.values():
            if structure_of(text, DIALECT, schema) is not None:
                continue  # some dialect reads it after all (``FORM`` taken for an alias)
            with_fallback = best_of(options.repeat, lambda t=text: structure_of(t, DIALECT, schema))
            one_parse = best_of(options.repeat, lambda t=text: parse_one(t, DIALECT))
            extra.append(with_fallback - one_parse)
        print(
            f"parse fallback, {len(extra)} unparseable predictions, {kind}: extra per prediction "
            f"median "
            f"{median(extra) * 1000:.1f} ms, max {max(extra) * 1000:.1f} ms (target < 50 ms)"
        )

    brackets = "SELECT TOP 100 [i_item_id], [i_brand] FROM [item] WHERE [i_category] = 'Books'"
    read = structure_of(brackets, DIALECT, schema)
    seconds = best_of(options.repeat, lambda: structure_of(brackets, DIALECT, schema))
    print(f"a prediction read by the {read.dialect} fallback: {seconds * 1000:.1f} ms in all")


if __name__ == "__main__":
    main()
