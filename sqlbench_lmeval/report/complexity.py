"""Workload complexity: per-workload means of the complexity counts of
:mod:`sqlbench_lmeval.sql.complexity` (a workload is a task's gold set or a file of SQL queries)
and their charts, the paper's Fig. 2 radar and Fig. 4-style histograms
(docs/structure.md#gold-complexity).

>>> workloads = {
...     "gold": [{"join_count": 2}, {"join_count": 4}],
...     "model": [{"join_count": 6}, {"join_count": float("nan")}],
... }
>>> workload_means(workloads), normalised_means(workloads)["model"]
({'gold': {'join_count': 3.0}, 'model': {'join_count': 6.0}}, {'join_count': 2.0})"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from sqlbench_lmeval import benchmarks
from sqlbench_lmeval.benchmarks import NAMES
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.jsonl import read_lines
from sqlbench_lmeval.report.plots import new_figure, save
from sqlbench_lmeval.sql.complexity import COMPLEXITY
from sqlbench_lmeval.sql.workloads import workload_complexity

#: Counts in chart order when they are present (others follow by name): the paper's Table 1.
PREFERRED_ORDER = COMPLEXITY

#: A histogram's last bar pools the values above this quantile of the count (all workloads).
TAIL_QUANTILE = 0.95

Workloads = Mapping[str, Sequence[Mapping[str, float]]]  # workload -> per-query counts


def read_sql_workload(spec: str) -> tuple[str, list[tuple[int, str]]]:
    """``(name, [(id, sql), ...])`` from a file of SQL queries; ``NAME=PATH`` names it.

    The file holds one query per line (blank lines and ``--`` comment lines skipped; ids are
    line numbers), or JSON lines with a ``sql`` field (and optionally an integer ``id``).
    """
    name, path = _split_spec(spec)
    if not path.is_file():
        raise UserError(
            f"{path}: no such file (a workload is a benchmark name or a file of SQL queries)"
        )
    lines = read_lines(path, "SQL workload")
    queries: list[tuple[int, str]] = []
    content = [(number, line.strip()) for number, line in enumerate(lines, start=1)]
    content = [(number, line) for number, line in content if line and not line.startswith("--")]
    as_json = bool(content) and content[0][1].startswith("{")
    for number, line in content:
        if not as_json:
            queries.append((number, line))
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise UserError(f"{path}:{number}: not valid JSON ({error.msg})") from error
        if not isinstance(record, dict) or not isinstance(record.get("sql"), str):
            raise UserError(f'{path}:{number}: expected an object with a "sql" string')
        query_id = record.get("id", number)
        if isinstance(query_id, bool) or not isinstance(query_id, int):
            raise UserError(f"{path}:{number}: id must be an integer, got {query_id!r}")
        queries.append((query_id, record["sql"]))
    if not queries:
        raise UserError(f"{path}: no SQL queries")
    return name or path.stem, queries


def workloads_complexity(specs: Sequence[str], *, cache_dir=None, dialect: str = "") -> list:
    """``workloads.WorkloadComplexity`` of each workload: a benchmark name (its gold SQL) or a
    file of SQL queries in ``dialect`` (see :func:`read_sql_workload`)."""

    workloads = []
    for spec in specs:
        if spec not in NAMES:
            label, queries = read_sql_workload(spec)
            workloads.append(workload_complexity(label, queries, dialect))
            continue
        benchmark = benchmarks.get(spec)
        if benchmark.gold_complexity is not None:  # without building any database
            workloads.append(benchmark.gold_complexity(cache_dir=cache_dir))
        else:
            items = benchmark.load_items(cache_dir=cache_dir)
            queries = [(item.id, item.gold_sql) for item in items]
            workloads.append(workload_complexity(spec, queries, items[0].dialect))
    return workloads


def _split_spec(spec: str) -> tuple[str | None, Path]:
    if Path(spec).exists() or "=" not in spec:
        return None, Path(spec)
    name, _, path = spec.partition("=")
    return (name or None), Path(path)


def from_workload_complexity(workloads) -> dict[str, list[Mapping[str, float]]]:
    """Our input form from ``workloads.WorkloadComplexity`` objects (parseable queries only)."""
    return {workload.name: list(workload.per_query.values()) for workload in workloads}


def count_names(workloads: Workloads) -> list[str]:
    """The counts every query of every workload has, in chart order."""
    sets = [set(counts) for queries in workloads.values() for counts in queries]
    if not sets:
        return []
    common = set.intersection(*sets)
    known = [name for name in PREFERRED_ORDER if name in common]
    return known + sorted(common - set(known))


def workload_means(workloads: Workloads) -> dict[str, dict[str, float]]:
    """``{workload: {count: mean over its queries}}``; NaN counts (unparseable) left out."""
    names = count_names(workloads)
    return {
        workload: {name: _mean([counts[name] for counts in queries]) for name in names}
        for workload, queries in workloads.items()
    }


def normalised_means(workloads: Workloads) -> dict[str, dict[str, float]]:
    """Means divided by the first workload's (Fig. 2). 0/0 is 1 (as complex); x/0 is NaN."""
    means = workload_means(workloads)
    if not means:
        return {}
    reference = next(iter(means.values()))
    return {
        workload: {name: _ratio(value, reference[name]) for name, value in workload_means_.items()}
        for workload, workload_means_ in means.items()
    }


def format_means(workloads: Workloads) -> str:
    """A plain-text table of the means (one row per workload), for the terminal."""
    means = workload_means(workloads)
    names = count_names(workloads)
    width = max([len("workload"), *(len(name) for name in means)])
    header = "workload".ljust(width) + "  queries  " + "  ".join(names)
    lines = [header]
    for workload, values in means.items():
        cells = "  ".join(f"{values[name]:>{len(name)}.2f}" for name in names)
        lines.append(f"{workload.ljust(width)}  {len(workloads[workload]):>7}  {cells}")
    return "\n".join(lines)


def plot_radar(workloads: Workloads, path: str | Path) -> Path:
    """Radar chart of every workload's means relative to the first workload's (Fig. 2); a
    single workload is drawn with its plain means."""
    names = count_names(workloads)
    if len(names) < 3:
        raise UserError("a radar chart needs at least three complexity counts")
    # One workload is its own unit polygon: show its plain means instead.
    relative = len(workloads) > 1
    ratios = normalised_means(workloads) if relative else workload_means(workloads)
    angles = [2 * math.pi * index / len(names) for index in range(len(names))]
    figure = new_figure(6.0, 5.2)
    axes = figure.add_subplot(projection="polar")
    largest = 1.0
    for workload, values in ratios.items():
        radii = [0.0 if math.isnan(values[name]) else values[name] for name in names]
        largest = max(largest, *radii)
        axes.plot([*angles, angles[0]], [*radii, radii[0]], linewidth=1.6, label=workload)
        axes.fill([*angles, angles[0]], [*radii, radii[0]], alpha=0.12)
    axes.set_xticks(angles, [name.removesuffix("_count").replace("_", " ") for name in names])
    axes.set_ylim(0, largest * 1.1)
    axes.set_rlabel_position(180 / len(names))  # radial labels between the first two spokes
    first = next(iter(ratios))
    title = f"Mean complexity relative to {first}" if relative else f"Mean complexity: {first}"
    axes.set_title(title, pad=18)
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.08, 1.05))
    return save(figure, Path(path))


def plot_histograms(workloads: Workloads, path: str | Path) -> Path:
    """One panel per count: share of each workload's queries at each value (Fig. 4 style).

    Values above a panel's ``TAIL_QUANTILE`` (over all workloads) share one last bar, so a few
    extreme queries do not squeeze the rest.
    """
    from matplotlib.ticker import MaxNLocator  # heavy: matplotlib, loaded only to draw

    names = count_names(workloads)
    if not names:
        raise UserError("no complexity counts to plot")
    columns = min(3, len(names))
    rows = math.ceil(len(names) / columns)
    figure = new_figure(4.2 * columns, 3.0 * rows)
    panels = figure.subplots(rows, columns, squeeze=False).ravel()
    width = 0.8 / max(len(workloads), 1)
    for panel, name in zip(panels, names, strict=False):
        values = {
            workload: [counts[name] for counts in queries]
            for workload, queries in workloads.items()
        }
        cap = tail_cap([value for series in values.values() for value in series])
        pooled = False
        for index, (workload, series) in enumerate(values.items()):
            shares = histogram(series, cap)
            pooled = pooled or any(value > cap for value in series if not math.isnan(value))
            positions = [value - 0.4 + width * (index + 0.5) for value in shares]
            panel.bar(positions, list(shares.values()), width, label=workload)
        panel.set_title(name.replace("_", " "))
        panel.set_xlabel(f"count ({cap} = {cap} or more)" if pooled else "count")
        panel.set_ylabel("share of queries")
        panel.xaxis.set_major_locator(MaxNLocator(integer=True))
        panel.grid(axis="y", alpha=0.3)
        panel.set_axisbelow(True)
    for panel in panels[len(names) :]:
        panel.set_visible(False)
    if len(workloads) > 1:
        panels[0].legend(fontsize="small")
    return save(figure, Path(path))


def tail_cap(values: Sequence[float]) -> int:
    """The ``TAIL_QUANTILE`` of ``values`` rounded up (at least 1): the last histogram bar."""
    known = sorted(value for value in values if not math.isnan(value))
    if not known:
        return 1
    return max(1, math.ceil(known[math.ceil(TAIL_QUANTILE * len(known)) - 1]))


def histogram(values: Sequence[float], cap: int | None = None) -> dict[int, float]:
    """Share of (non-NaN) values at each integer 0..max; values above ``cap`` count as ``cap``."""
    known = [int(round(value)) for value in values if not math.isnan(value)]
    if cap is not None:
        known = [min(value, cap) for value in known]
    if not known:
        return {}
    top = max(known)
    return {value: known.count(value) / len(known) for value in range(top + 1)}


def write_complexity_plots(workloads: Workloads, output: str | Path) -> list[Path]:
    """``complexity-radar.png`` (with three or more counts) and ``complexity-histograms.png``."""
    folder = Path(output)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    if len(count_names(workloads)) >= 3:
        written.append(plot_radar(workloads, folder / "complexity-radar.png"))
    written.append(plot_histograms(workloads, folder / "complexity-histograms.png"))
    return written


def _mean(values: Sequence[float]) -> float:
    known = [float(value) for value in values if not math.isnan(value)]
    return sum(known) / len(known) if known else math.nan


def _ratio(value: float, reference: float) -> float:
    if reference == 0:
        return 1.0 if value == 0 else math.nan
    return value / reference


__all__ = [
    "TAIL_QUANTILE",
    "PREFERRED_ORDER",
    "workloads_complexity",
    "count_names",
    "format_means",
    "from_workload_complexity",
    "histogram",
    "normalised_means",
    "plot_histograms",
    "plot_radar",
    "read_sql_workload",
    "tail_cap",
    "workload_means",
    "write_complexity_plots",
]
