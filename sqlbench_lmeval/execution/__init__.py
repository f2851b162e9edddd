"""Hostile SQL in, outcome out: sandboxed engines, worker pool, gold-result cache.

Public API: :class:`Database`, :class:`Limits`, :class:`Job`, :class:`Outcome`,
:class:`Status`, :func:`execute` (in this process), :func:`execute_many` (worker processes,
input order), :class:`GoldCache` and the engine registry :mod:`engines` (one module per
engine, each declaring its :class:`~sqlbench_lmeval.execution.engines.Engine`).
"""

from sqlbench_lmeval.execution.cache import GoldCache
from sqlbench_lmeval.execution.job import Database, Job, Limits
from sqlbench_lmeval.execution.outcome import Outcome, Status
from sqlbench_lmeval.execution.pool import execute_many
from sqlbench_lmeval.execution.runner import execute

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
