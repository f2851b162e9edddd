"""The report's "Scores by database" section: per view, EX of each run on each database's
items, so a model that fails on one schema shows apart from one that fails everywhere."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

import numpy as np

from sqlbench_lmeval.report.analysis import runs_by_view
from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.report.sections import Context, paragraph
from sqlbench_lmeval.report.stats import RESAMPLES, SEED, Interval, bootstrap_cis
from sqlbench_lmeval.report.tables import Section, Table, fmt_ci
from sqlbench_lmeval.scoring.scored import ScoredItem

TITLE = "Scores by database"
EXPLANATION = paragraph(
    """
    EX of each run on the items of each database (LogicCat's ``db_id``; otherwise the database
    file's name), with 95% bootstrap intervals over those items; n counts the items. Shown for
    views whose items use more than one database.
    """
)


@dataclass(frozen=True)
class DatabaseRow:
    view: str
    database: str
    run: str
    n: int
    ex: Interval


def database_of(item: ScoredItem) -> str | None:
    """The database an item asks about: its id, else the stem of its (shared) path."""
    named = item.details.get("db_id")
    if isinstance(named, str) and named:
        return named
    path = item.details.get("db_path")
    if isinstance(path, str) and path and "://" not in path:
        return PurePosixPath(path.replace("\\", "/")).stem
    return None


def database_rows(
    runs: Sequence[Run], *, resamples: int = RESAMPLES, seed: int = SEED
) -> list[DatabaseRow]:
    rows = []
    for view, results in runs_by_view(runs):
        databases = sorted(
            {database_of(item) for _, result in results for item in result.items} - {None}
        )
        if len(databases) < 2:
            continue
        for database in databases:
            for run, result in results:
                values = [item.ex for item in result.items if database_of(item) == database]
                if not values:
                    continue
                (interval,) = bootstrap_cis(
                    np.array(values, dtype=float).reshape(-1, 1), resamples=resamples, seed=seed
                )
                rows.append(DatabaseRow(view, database, run.name, len(values), interval))
    return rows


def sections(runs: Sequence[Run], context: Context) -> list[Section]:
    rows = database_rows(runs, resamples=context.resamples, seed=context.seed)
    if not rows:
        return []
    found = [Section(TITLE, (EXPLANATION,))]
    for view in context.views:
        view_rows = [row for row in rows if row.view == view]
        if not view_rows:
            continue
        names = list(dict.fromkeys(row.run for row in view_rows))
        at = {(row.database, row.run): row for row in view_rows}
        databases = list(dict.fromkeys(row.database for row in view_rows))
        table = Table(
            ("Database", "n", *(f"EX {name}" for name in names)),
            tuple(
                (
                    database,
                    str(max(row.n for row in view_rows if row.database == database)),
                    *(
                        fmt_ci(at[database, name].ex) if (database, name) in at else "–"
                        for name in names
                    ),
                )
                for database in databases
            ),
            (False, True, *(True for _ in names)),
        )
        found.append(Section(view, (table,), level=3))
    return found
