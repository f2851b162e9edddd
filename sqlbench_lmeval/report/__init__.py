"""Reports comparing model runs: ``read_runs`` turns lm-eval output folders and ``sqlbench-lmeval
score`` files into :class:`~sqlbench_lmeval.report.runs.Run` objects, ``write_report`` writes
``report.md``, ``report.html`` and PNG charts (tables with confidence intervals, paired tests),
``report.explorer`` the item-by-item page and ``report.complexity`` the workload charts (paper
Figs. 2 and 4). Importing this package does not import matplotlib (docs/reports.md)."""

from sqlbench_lmeval.report.build import ReportFiles, write_report
from sqlbench_lmeval.report.runs import Run, ScoredItem, TaskResult, read_run, read_runs

__all__ = [
    "ReportFiles",
    "Run",
    "ScoredItem",
    "TaskResult",
    "read_run",
    "read_runs",
    "write_report",
]
