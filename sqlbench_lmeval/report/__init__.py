"""Reports comparing model runs: ``read_runs`` turns lm-eval output folders and ``sqlbench-lmeval
score`` files into :class:`~sqlbench_lmeval.report.runs.Run` objects, ``write_report`` writes
``report.md``, ``report.html`` and PNG charts (tables with confidence intervals, paired tests),
``report.explorer`` the item-by-item page and ``report.complexity`` the workload charts (paper
Figs. 2 and 4). Importing this package (or ``report.runs``, as ``score`` and ``verify`` do)
imports neither matplotlib nor numpy: ``write_report`` and ``ReportFiles`` load
``report.build`` when first named (docs/reports.md)."""

from typing import Any

from sqlbench_lmeval.report.runs import Run, TaskResult, read_run, read_runs
from sqlbench_lmeval.scoring.scored import ScoredItem

_FROM_BUILD = frozenset({"ReportFiles", "write_report"})


def __getattr__(name: str) -> Any:
    if name in _FROM_BUILD:
        # heavy: report.build pulls the statistics (numpy) and the charts; a command that
        # only reads runs must not pay for them
        from sqlbench_lmeval.report import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ReportFiles",
    "Run",
    "ScoredItem",
    "TaskResult",
    "read_run",
    "read_runs",
    "write_report",
]
