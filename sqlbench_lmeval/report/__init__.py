"""Reports comparing model runs: tables with confidence intervals, paired tests, charts.

``read_runs`` turns lm-eval output folders and ``sqlbench-lmeval score`` files into
:class:`~sqlbench_lmeval.report.runs.Run` objects; ``write_report`` writes ``report.md``,
``report.html`` and PNG charts, one section per module of ``report.sections`` (the numbers of
each are public functions there: ``scores.score_rows``, ``pairs.pair_rows``, ...).
``report.explorer`` writes the item-by-item page; ``report.complexity`` charts workload
complexity (paper Figs. 2 and 4). Importing this package does not import matplotlib.
"""

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
