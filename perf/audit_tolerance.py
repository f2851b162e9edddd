"""Which wrong numbers does ``ex`` accept? An audit of the numeric tolerance on real gold results.

Reads the output of ``sqlbench-lmeval gold logiccat -o gold.jsonl`` and, for every healthy item
(gold status ``ok``, not flagged ``random``), scores mutated copies of its gold result against
the gold result with :func:`sqlbench_lmeval.scoring.compare.compare` (order as the scorer
decides it):

- ``gold``: the gold result itself (must score EX 1 everywhere);
- ``round<d>``: every non-integral float rounded to ``d`` decimals (only items where that
  changes a value count): a model that rounds its answer is wrong and must score 0;
- ``x1000`` / ``zero``: every nonzero float below 1e-9 in magnitude times 1000 / replaced by 0.0.

Prints, per mutation, how many items it changed and how many of those still scored EX 1, with
up to five example ids, plus how many healthy items hold a nonzero value below 1e-9. A rounding
that moves no value by more than 16 units in the last place only strips float noise
(-9.999999999999996 -> -10.0): such items are counted apart (``noise``), as accepting them is
right.

    sqlbench-lmeval gold logiccat -o /tmp/gold.jsonl
    python perf/audit_tolerance.py /tmp/gold.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable

from sqlbench_lmeval.execution import Outcome, Status
from sqlbench_lmeval.scoring.answer import UNREPEATABLE_FLAGS
from sqlbench_lmeval.scoring.compare import compare, gold_order_matters

TINY = 1e-9
NOISE_ULPS = 16


def _map_floats(rows: list, change: Callable[[float], float]) -> list[tuple]:
    def value(v):
        return change(v) if isinstance(v, float) and math.isfinite(v) else v

    return [tuple(value(v) for v in row) for row in rows]


def _beyond_noise(before: list[tuple], after: list[tuple]) -> bool:
    return any(
        isinstance(a, float) and abs(a - b) > NOISE_ULPS * math.ulp(b)
        for old, new in zip(before, after, strict=True)
        for a, b in zip(new, old, strict=True)
    )


def _rounding(decimals: int) -> Callable[[float], float]:
    return lambda v: round(v, decimals)


def _tiny(change: Callable[[float], float]) -> Callable[[float], float]:
    return lambda v: change(v) if 0 < abs(v) < TINY else v


MUTATIONS: dict[str, Callable[[float], float]] = {
    "gold": lambda v: v,
    **{f"round{d}": _rounding(d) for d in range(7)},
    "x1000": _tiny(lambda v: v * 1000),
    "zero": _tiny(lambda v: 0.0),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gold", help="JSONL written by `sqlbench-lmeval gold logiccat -o`")
    args = parser.parse_args()
    with open(args.gold, encoding="utf-8") as handle:
        items = [json.loads(line) for line in handle if line.strip()]
    healthy = [
        item
        for item in items
        if item["gold_status"] == "ok"
        and item["status"] == "ok"
        and not UNREPEATABLE_FLAGS & set(item["flags"])
    ]
    tiny = [
        item["id"]
        for item in healthy
        if any(isinstance(v, float) and 0 < abs(v) < TINY for row in item["rows"] for v in row)
    ]
    print(f"healthy items: {len(healthy)}; with a nonzero value below {TINY:g}: {len(tiny)}")
    print(f"  ids: {tiny}")
    print(f"{'mutation':<8} {'noise':>6} {'changed':>8} {'ex=1':>6}  examples")
    for name, change in MUTATIONS.items():
        noise, changed, accepted = 0, 0, []
        for item in healthy:
            gold_rows = [tuple(row) for row in item["rows"]]
            pred_rows = _map_floats(gold_rows, change)
            if name != "gold" and not _beyond_noise(gold_rows, pred_rows):
                noise += pred_rows != gold_rows
                continue
            changed += 1
            columns = tuple(item["columns"])
            verdict = compare(
                Outcome(Status.OK, columns=columns, rows=tuple(pred_rows)),
                Outcome(Status.OK, columns=columns, rows=tuple(gold_rows)),
                ordered=gold_order_matters(item["gold_sql"], "sqlite"),
            )
            if verdict.ex:
                accepted.append(item["id"])
        print(f"{name:<8} {noise:>6} {changed:>8} {len(accepted):>6}  {accepted[:5]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
