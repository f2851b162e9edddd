"""Fetching a result under the row cap and the per-answer budget (every value counted), and the
outcome of a query that ran out of memory (shared by every engine)."""

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


#: What one value of a result costs against the budget beyond its text or bytes: a number (or
#: NULL, a date) in the main process is a Python object of 24-32 bytes plus its place in the
#: row, so 10,000 rows of 1,500 numbers weigh about 480 MB there, as much as their text would.
VALUE_BYTES = 32
#: The per-answer budget is this part of the worker's memory limit (32 MiB at the default
#: 1,024 MiB): what the main process may hold of one result (docs/failures.md#memory).
BUDGET_SHARE = 32


def result_budget(limits: Limits) -> int:
    """The bytes one result may weigh (``result_size``) before it is ``too_many_rows``.

    >>> result_budget(Limits()) // MIB
    32
    """
    return limits.memory_mb * MIB // BUDGET_SHARE


def result_size(rows) -> int:
    """What ``rows`` weigh against the budget: :data:`VALUE_BYTES` per value, plus the length
    of each text or bytes value.

    >>> result_size([(1, "abc"), (None, b"xy")])
    133
    """
    size = 0
    for row in rows:
        size += VALUE_BYTES * len(row)
        for value in row:
            if isinstance(value, (str, bytes)):
                size += len(value)
    return size


def fetch_limited(fetchmany, columns: tuple[str, ...], limits: Limits, start: float) -> Outcome:
    """Fetch up to ``max_rows`` rows within the per-answer budget (``result_budget``).

    Every value counts (``result_size``), numbers too: the budget bounds what the main process
    holds of each answer (and keeps 10,000 rows of 16 MiB blobs from exhausting the worker's
    Python heap, which the engine limit cannot see).
    """
    budget = result_budget(limits)
    rows: list[tuple] = []
    size = 0
    while True:
        chunk = fetchmany(min(FETCH_CHUNK, limits.max_rows + 1 - len(rows)))
        if not chunk:
            break
        rows.extend(chunk)
        size += result_size(chunk)
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
