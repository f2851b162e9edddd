"""Fetching a result under the row cap and a byte budget, and the outcome of a query that ran
out of memory (shared by every engine)."""

from __future__ import annotations

import time

from sqlbench_lmeval.execution.job import Limits
from sqlbench_lmeval.execution.outcome import Outcome, Status

MIB = 1024 * 1024
FETCH_CHUNK = 1024  # rows per fetchmany call


def out_of_memory(limits: Limits, start: float) -> Outcome:
    """The outcome of a query that ran out of the worker's memory (``start``:
    ``time.monotonic()`` when it began)."""
    return Outcome(
        Status.ERROR,
        error=f"out of memory (limit {limits.memory_mb} MiB)",
        elapsed_s=time.monotonic() - start,
    )


def fetch_limited(fetchmany, columns: tuple[str, ...], limits: Limits, start: float) -> Outcome:
    """Fetch up to ``max_rows`` rows within a byte budget.

    The byte budget (a quarter of ``memory_mb`` of text/blob payload) keeps 10,000 rows of
    16 MiB blobs from exhausting the worker's Python heap, which the engine limit cannot see.
    """
    budget = limits.memory_mb * MIB // 4
    rows: list[tuple] = []
    size = 0
    while True:
        chunk = fetchmany(min(FETCH_CHUNK, limits.max_rows + 1 - len(rows)))
        if not chunk:
            break
        rows.extend(chunk)
        for row in chunk:
            for value in row:
                if isinstance(value, (str, bytes)):
                    size += len(value)
        if size > budget:
            return Outcome(
                Status.TOO_MANY_ROWS,
                columns=columns,
                error=f"result larger than {budget // MIB} MiB",
                elapsed_s=time.monotonic() - start,
            )
        if len(rows) > limits.max_rows:
            return Outcome(
                Status.TOO_MANY_ROWS,
                columns=columns,
                error=f"more than {limits.max_rows} rows",
                elapsed_s=time.monotonic() - start,
            )
    return Outcome(
        Status.OK,
        columns=columns,
        rows=tuple(rows),
        elapsed_s=time.monotonic() - start,
    )
