"""The two prediction files the scoring-speed measurements score: gold as every answer, and a mix.

Writes ``OUT/gold.jsonl`` (each item's gold SQL as its prediction) and ``OUT/mix.jsonl`` (one
answer per item, its kind drawn with a fixed seed from ``bench_sampled_score.MIX``: gold in a
fence 40 %, gold with other whitespace 10 %, ``SELECT COUNT(*) FROM (<gold>)`` 25 %, a failing
query 15 %, prose 10 %; about half match gold), for every item of the benchmark's task, and
prints how many of each kind and which items' wrong answer counts rows of an endless gold (their
``COUNT(*)`` never ends: the looping answers). Same data, same files, on any machine.

    python perf/predictions.py logiccat /tmp/predictions
"""

from __future__ import annotations

import argparse
import collections
import json
import random
from pathlib import Path

from bench_sampled_score import MIX, sample_text

#: The seed of the mix's draw (``bench_sampled_score``'s).
SEED = 12


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmark", help="logiccat or tpcds")
    parser.add_argument("out", type=Path, help="folder to write gold.jsonl and mix.jsonl into")
    args = parser.parse_args()
    from sqlbench_lmeval.offline import task_items

    items = task_items(args.benchmark)
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    kinds, weights = zip(*MIX, strict=True)
    drawn = collections.Counter()
    loops = []
    with (
        (args.out / "gold.jsonl").open("w", encoding="utf-8") as gold,
        (args.out / "mix.jsonl").open("w", encoding="utf-8") as mix,
    ):
        for item in items:
            gold.write(json.dumps({"id": item.id, "prediction": item.gold_sql}) + "\n")
            (kind,) = rng.choices(kinds, weights=weights, k=1)
            drawn[kind] += 1
            if kind == "wrong" and "RECURSIVE" in item.gold_sql.upper():
                loops.append(item.id)
            prediction = sample_text(kind, item.gold_sql)
            mix.write(json.dumps({"id": item.id, "prediction": prediction}) + "\n")
    print(f"{len(items)} items; mix: {dict(drawn)}; wrong answers over recursive gold: {loops}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
