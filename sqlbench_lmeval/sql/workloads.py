"""Complexity of whole workloads: the six counts of :mod:`sqlbench_lmeval.sql.complexity` for every
query of a set (a benchmark's gold SQL, a run's predictions), their means and a table; each query
is parsed and normalised once by :func:`sqlbench_lmeval.sql.structure.structure_of`, which
computes the counts beside its feature bags (docs/structure.md#complexity-counts).

>>> complexity_of("WITH t AS (SELECT 1 AS x) SELECT x FROM t", "duckdb")["cte_count"]
1
>>> complexity_of("not sql at all", "duckdb") is None
True"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

from sqlbench_lmeval.sql.complexity import COMPLEXITY
from sqlbench_lmeval.sql.structure import structure_of


def complexity_of(sql: str | None, dialect: str, schema: Mapping | None = None) -> dict | None:
    """The six complexity counts of ``sql``, or None when it is unparseable."""
    structure = structure_of(sql, dialect, schema)
    return None if structure is None else dict(structure.complexity)


@dataclass(frozen=True)
class WorkloadComplexity:
    """Complexity counts of a set of queries (e.g. one benchmark's gold SQL)."""

    name: str
    per_query: Mapping[int, Mapping[str, int]]  # id -> counts, parseable queries only
    unparseable: tuple[int, ...]

    @property
    def means(self) -> dict[str, float]:
        rows = list(self.per_query.values())
        return {c: fmean(r[c] for r in rows) if rows else 0.0 for c in COMPLEXITY}

    @property
    def share_without_cte(self) -> float:
        rows = list(self.per_query.values())
        return fmean(r["cte_count"] == 0 for r in rows) if rows else 0.0


def workload_complexity(
    name: str,
    queries: Iterable[tuple[int, str]],
    dialect: str,
    schema: Mapping | None = None,
) -> WorkloadComplexity:
    """Complexity counts of every ``(id, sql)`` of a workload."""
    per_query: dict[int, dict[str, int]] = {}
    unparseable = []
    for query_id, sql in queries:
        counts = complexity_of(sql, dialect, schema)
        if counts is None:
            unparseable.append(query_id)
        else:
            per_query[query_id] = counts
    return WorkloadComplexity(name, per_query, tuple(unparseable))


def format_complexity_table(workloads: Sequence[WorkloadComplexity]) -> str:
    """Per-workload means of the six complexity counts as a plain-text table."""
    header = ["workload", "queries", *COMPLEXITY, "no_cte_share"]
    rows = [header]
    for w in workloads:
        queries = str(len(w.per_query))
        if w.unparseable:
            queries += f" (+{len(w.unparseable)} unparseable)"
        means = w.means
        rows.append(
            [
                w.name,
                queries,
                *(f"{means[c]:.2f}" for c in COMPLEXITY),
                f"{w.share_without_cte:.2f}",
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    )
