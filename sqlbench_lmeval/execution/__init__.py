"""Hostile SQL in, outcome out: :class:`Database`, :class:`Limits`, :class:`Job`,
:class:`Outcome` and :class:`Status`, :func:`execute` (in this process), :func:`execute_many`
(worker processes, input order), :class:`WorkerPool` (workers shared by several batches),
:class:`GoldCache` and the engine registry :mod:`engines` (one module per engine, each
declaring its :class:`~sqlbench_lmeval.execution.engines.Engine`; how SQL runs and each
engine's sandbox: docs/engines.md).
"""

from sqlbench_lmeval.execution.job import Database, Job, Limits
from sqlbench_lmeval.execution.outcome import Outcome, Status
from sqlbench_lmeval.execution.runner import execute


def __getattr__(name: str):
    """:class:`GoldCache`, :func:`execute_many` and :class:`WorkerPool`, imported on first use:
    every worker process imports this package (its modules live here) and needs none, and the
    pool's and the cache's imports (tqdm, asyncio, hashing) were half of the start-up of each
    worker."""
    if name == "GoldCache":
        # heavy: the gold cache, on first use (see above)
        from sqlbench_lmeval.execution.cache import GoldCache

        return GoldCache
    if name in ("execute_many", "WorkerPool"):
        # heavy: the worker pool, on first use (see above)
        from sqlbench_lmeval.execution import pool

        return getattr(pool, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Database",
    "GoldCache",
    "Job",
    "Limits",
    "Outcome",
    "Status",
    "WorkerPool",
    "execute",
    "execute_many",
]
