"""Time of ``extract_sql`` on the hostile outputs of the test suite (10 MB texts, 10,000
fences, 5,000 nested parentheses, ...): the slowest cases and the total, one pass each.

    python perf/bench_extract_hostile.py [--top 10]

Extraction work per output is bounded (``extract.MAX_STATEMENT_CHARS``, ``MAX_STARTS``,
``MAX_BLOCKS``, ``PARSE_BUDGET_CHARS``); this prints what those bounds cost in seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.hostile_outputs import hostile_outputs  # noqa: E402

from sqlbench_lmeval.sql.extract import extract_sql  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=10, help="slowest cases to list")
    args = parser.parse_args()
    timings = []
    for name, output in hostile_outputs():
        start = time.perf_counter()
        result = extract_sql(output)
        timings.append((time.perf_counter() - start, name, len(output), result.method))
    timings.sort(reverse=True)
    print(f"{'case':32s} {'chars':>10s} {'seconds':>8s}  method")
    for seconds, name, chars, method in timings[: args.top]:
        print(f"{name:32s} {chars:10,d} {seconds:8.3f}  {method}")
    total = sum(seconds for seconds, *_ in timings)
    print(f"{len(timings)} outputs, {total:.2f} s in all, slowest {timings[0][0]:.2f} s")


if __name__ == "__main__":
    main()
