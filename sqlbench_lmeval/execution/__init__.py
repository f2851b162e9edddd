"""Hostile SQL in, outcome out: sandboxed engines, worker pool, gold-result cache.

Public API: :class:`Database`, :class:`Limits`, :class:`Job`, :class:`Outcome`,
:class:`Status`, :func:`execute` (in this process), :func:`execute_many` (worker processes,
input order), :class:`GoldCache` and the engine registry :mod:`engines` (one module per
engine, each declaring its :class:`~sqlbench_lmeval.execution.engines.Engine`).
"""

from sqlbench_lmeval.execution.job import Database, Job, Limits
from sqlbench_lmeval.execution.outcome import Outcome, Status
from sqlbench_lmeval.execution.runner import execute


def __getattr__(name: str):
    """:class:`GoldCache` and :func:`execute_many`, imported on first use: every worker process
    imports this package (its modules live here) and needs neither, and the pool's and the
    cache's imports (tqdm, asyncio, hashing) were half of the start-up of each worker."""
    if name == "GoldCache":
        # heavy: the gold cache, on first use (see above)
        from sqlbench_lmeval.execution.cache import GoldCache

        return GoldCache
    if name == "execute_many":
        # heavy: the worker pool, on first use (see above)
        from sqlbench_lmeval.execution.pool import execute_many

        return execute_many
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Database",
    "GoldCache",
    "Job",
    "Limits",
    "Outcome",
    "Status",
    "execute",
    "execute_many",
]
