"""``sqlbench-lmeval report``: runs in, ``report.md`` + ``report.html`` + PNG charts out."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.report import analysis, plots
from sqlbench_lmeval.report.analysis import (
    OUTCOMES,
    ComplexityRow,
    FailureRow,
    PairRow,
    ScoreRow,
    SimilarityRow,
)
from sqlbench_lmeval.report.engines import engine_sections
from sqlbench_lmeval.report.retries import retry_sections
from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.report.sampling import sampling_sections
from sqlbench_lmeval.report.stats import LEVEL, RESAMPLES, SEED
from sqlbench_lmeval.report.tables import (
    Block,
    Image,
    Section,
    Table,
    fmt,
    fmt_ci,
    fmt_p,
    fmt_signed_ci,
    to_html,
    to_markdown,
)
from sqlbench_lmeval.scoring import LOOP_ADVICE, TRUNCATION_ADVICE

#: Error kinds listed per row of the failure table.
TOP_ERROR_KINDS = 3


@dataclass(frozen=True)
class ReportFiles:
    markdown: Path
    html: Path
    images: tuple[Path, ...]


@dataclass(frozen=True)
class ReportData:
    """Every number of a report (what the tables show)."""

    runs: tuple[Run, ...]
    scores: tuple[ScoreRow, ...]
    pairs: tuple[PairRow, ...]
    failures: tuple[FailureRow, ...]
    similarity: tuple[SimilarityRow, ...]
    complexity: tuple[ComplexityRow, ...]
    resamples: int
    seed: int


def analyse(runs: Sequence[Run], *, resamples: int = RESAMPLES, seed: int = SEED) -> ReportData:
    """All report numbers; refuses runs that cannot be compared (``UserError``)."""
    if not runs:
        raise UserError("no runs to report on")
    analysis.check_comparable(runs)
    return ReportData(
        runs=tuple(runs),
        scores=tuple(analysis.score_rows(runs, resamples=resamples, seed=seed)),
        pairs=tuple(analysis.pair_rows(runs, resamples=resamples, seed=seed)),
        failures=tuple(analysis.failure_rows(runs)),
        similarity=tuple(analysis.similarity_rows(runs)),
        complexity=tuple(analysis.complexity_rows(runs)),
        resamples=resamples,
        seed=seed,
    )


def write_report(
    runs: Sequence[Run],
    output: str | Path,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> ReportFiles:
    """Write ``report.md``, ``report.html`` and the PNGs they show into ``output``."""
    data = analyse(runs, resamples=resamples, seed=seed)
    folder = Path(output)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(f"cannot create {folder}: {error}") from error
    images: list[Path] = []
    sections = _sections(data, folder, images)
    title = "sqlbench-lmeval report: " + ", ".join(run.name for run in data.runs)
    markdown = folder / "report.md"
    page = folder / "report.html"
    markdown.write_text(to_markdown(title, sections), encoding="utf-8")
    page.write_text(to_html(title, sections), encoding="utf-8")
    return ReportFiles(markdown=markdown, html=page, images=tuple(images))


# --- sections ----------------------------------------------------------------------------------


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "view"


@dataclass
class _Charts:
    """Draws the PNGs of a report into ``folder``; views inside a group get tables only (the
    group's chart and its category rows already show them)."""

    folder: Path
    skip: frozenset[str]
    images: list[Path]

    def draw(self, kind: str, view: str, plot, *args) -> tuple[Image, ...]:
        if view in self.skip:
            return ()
        path = self.folder / f"{kind}-{_slug(view)}.png"
        plot(*args, path)
        self.images.append(path)
        return (Image(path.name, f"{kind} for {view}"),)


def _sections(data: ReportData, folder: Path, images: list[Path]) -> list[Section]:
    views = analysis.view_names(data.runs)
    charts = _Charts(folder, frozenset(analysis.grouped_tasks(data.runs)), images)
    sections = [_runs_section(data)]
    sections += _score_sections(data, views, charts)
    if data.pairs:
        sections += _pair_sections(data, views, charts)
    sections += engine_sections(data.runs, views)
    sections += _failure_sections(data, views, charts)
    if data.similarity:
        sections += _similarity_sections(data, views, charts)
    if data.complexity:
        sections += _complexity_sections(data, views, charts)
    sections += sampling_sections(data.runs, views, charts)
    sections += retry_sections(data.runs, views, charts)
    return sections


def _runs_section(data: ReportData) -> Section:
    rows = []
    for run in data.runs:
        for name, result in run.views().items():
            rows.append(
                (
                    run.name,
                    name,
                    str(len(result.items)),
                    result.comparison_version or "unknown",
                    result.dataset_version or "unknown",
                    run.source,
                )
            )
    table = Table(
        ("Run", "Task / group", "Items", "Comparison version", "Dataset version", "Source"),
        tuple(rows),
        (False, False, True, False, False, False),
    )
    method = (
        f"Means are over items; brackets give {LEVEL:.0%} percentile bootstrap intervals "
        f"({data.resamples:,} resamples of the items, seed {data.seed}). Paired comparisons "
        "use only the items both runs answered, resample those items (keeping each item's two "
        "answers together), and test EX with the exact two-sided McNemar test on the "
        "discordant items."
    )
    return Section("Runs", (table, method))


def _score_sections(data, views, charts) -> list[Section]:
    order = {run.name: index for index, run in enumerate(data.runs)}
    sections = [
        Section(
            "Scores",
            (
                "VES: the prediction ran without error, within the time limit and the row "
                "cap. EX: same result as gold (rows as a multiset, in order when gold's "
                "outermost ORDER BY defines one; numbers with a small tolerance). EX strict: "
                "identical ordered rows. EX set: same set of rows (BIRD's rule).",
            ),
        )
    ]
    for view in views:
        rows = [row for row in data.scores if row.view == view]
        metrics = analysis.score_metrics(
            [item for run in data.runs if view in run.views() for item in run.views()[view].items]
        )
        table = Table(
            ("Run", "Category", "n", *(title for _, title in metrics)),
            tuple(
                (
                    row.run,
                    row.category or "all",
                    str(row.n),
                    *(fmt_ci(row.intervals[name]) for name, _ in metrics),
                )
                # Whole-view rows first, then each category with the runs side by side.
                for row in sorted(rows, key=lambda row: (row.category or "", order[row.run]))
            ),
            (False, False, True, *(True for _ in metrics)),
        )
        whole = [row for row in rows if row.category is None]
        blocks: list[Block] = [table]
        if whole:
            blocks.extend(charts.draw("scores", view, plots.plot_scores, whole, metrics))
        sections.append(Section(view, tuple(blocks), level=3))
    return sections


def _pair_sections(data, views, charts) -> list[Section]:
    sections = [
        Section(
            "Paired comparisons (EX)",
            (
                "Δ EX = EX(A) − EX(B) on the common items. A only / B only: items only that "
                "run got right (McNemar's discordant pairs).",
            ),
        )
    ]
    for view in views:
        rows = [row for row in data.pairs if row.view == view]
        if not rows:
            continue
        # With more than one pair, each p-value is one of several tests: Holm adjusts for that.
        several = len(rows) > 1
        table = Table(
            (
                "A",
                "B",
                "Common items",
                "EX A",
                "EX B",
                "Δ EX [95% CI]",
                "A only",
                "B only",
                "McNemar p",
                *(("Holm p",) if several else ()),
            ),
            tuple(
                (
                    row.a,
                    row.b,
                    f"{row.n_common} (A {row.n_a}, B {row.n_b})",
                    fmt(row.ex_a),
                    fmt(row.ex_b),
                    fmt_signed_ci(row.difference),
                    str(row.a_only_correct),
                    str(row.b_only_correct),
                    fmt_p(row.p_value),
                    *((fmt_p(row.p_holm),) if several else ()),
                )
                for row in rows
            ),
            (False, False, True, True, True, True, True, True, True, *((True,) if several else ())),
        )
        blocks: list[Block] = [table]
        if several:
            blocks.append(
                f"Holm p: the McNemar p-values adjusted for the {len(rows)} comparisons on "
                f"{view} (Holm's step-down method, which bounds the chance of any false "
                "positive among them); read this column, not the unadjusted one, when "
                "looking for any significant pair."
            )
        partial = [row for row in rows if row.n_common < max(row.n_a, row.n_b)]
        for row in partial:
            blocks.append(
                f"{row.a} has {row.n_a} items and {row.b} has {row.n_b}: only the "
                f"{row.n_common} items present in both are compared."
            )
        blocks.extend(charts.draw("paired", view, plots.plot_pairs, rows))
        sections.append(Section(view, tuple(blocks), level=3))
    return sections


def _failure_sections(data, views, charts) -> list[Section]:
    sections = [
        Section(
            "Outcomes and failures",
            (
                "One class per item, counted as `score`, `verify` and the explorer count them. "
                "Correct: ran and EX = 1. Wrong result: ran, but the result differs from gold. "
                "Truncated: cut off by the generation limit and not correct, whatever its "
                "status. Other columns count execution statuses. Gold not ok: items whose gold "
                "query failed or returned nothing usable (scored as usual, but they say little "
                "about the model). No table: answers that ran but read no table of the "
                "database (constants; EX counts them, `ex_reads_data` does not).",
            ),
        )
    ]
    for view in views:
        rows = [row for row in data.failures if row.view == view]
        extra = sorted({name for row in rows for name in row.outcomes} - set(OUTCOMES))
        outcomes = list(OUTCOMES) + extra
        table = Table(
            (
                "Run",
                "n",
                *(name.replace("_", " ") for name in outcomes),
                "Gold not ok",
                "No table",
                "Top error kinds",
            ),
            tuple(
                (
                    row.run,
                    str(row.n),
                    *(str(row.outcomes.get(name, 0)) for name in outcomes),
                    str(row.unhealthy_gold),
                    str(row.reads_no_table),
                    "; ".join(
                        f"{kind} ×{count}" for kind, count in row.error_kinds[:TOP_ERROR_KINDS]
                    )
                    or "–",
                )
                for row in rows
            ),
            (False, True, *(True for _ in outcomes), True, True, False),
        )
        blocks = (
            table,
            *_truncation_notes(rows),
            *charts.draw("outcomes", view, plots.plot_failures, rows),
        )
        sections.append(Section(view, blocks, level=3))
    return sections


def _truncation_notes(rows: Sequence[FailureRow]) -> tuple[str, ...]:
    """Per run with truncated outputs: how many, and how to give them room; those that end in
    a repetition loop apart, since more room would not end them."""
    notes = []
    for row in rows:
        if row.truncated > row.looping:
            budget = row.truncated - row.looping
            notes.append(
                f"{row.run}: {budget} of {row.n} outputs were truncated: {TRUNCATION_ADVICE}."
            )
        if row.looping:
            notes.append(
                f"{row.run}: {row.looping} of {row.n} outputs were truncated in a repetition "
                f"loop: {LOOP_ADVICE}."
            )
    return tuple(notes)


def _similarity_sections(data, views, charts) -> list[Section]:
    sections = [
        Section(
            "Structural similarity to gold (paper Table 2)",
            (
                "Mean over items of the multiset Jaccard similarity of each SQL feature between "
                "prediction and gold; Average is the mean over the features "
                "(structural_similarity); Count-based compares feature sizes (min/max, "
                "structural_count_similarity). An unparseable prediction scores 0 on all of "
                "them; Parsed is the share of parseable predictions.",
            ),
        )
    ]
    for view in views:
        rows = [row for row in data.similarity if row.view == view]
        if not rows:
            continue
        features = list(rows[0].features)
        table = Table(
            (
                "Run",
                "n",
                *(analysis.feature_label(name) for name in features),
                "Average",
                "Count-based",
                "Parsed",
            ),
            tuple(
                (
                    row.run,
                    str(row.n),
                    *(fmt(row.features.get(name, float("nan"))) for name in features),
                    fmt(row.average),
                    fmt(row.count_based),
                    fmt(row.parsed),
                )
                for row in rows
            ),
            (False, True, *(True for _ in features), True, True, True),
        )
        image = charts.draw("similarity", view, plots.plot_similarity, rows)
        sections.append(Section(view, (table, *image), level=3))
    return sections


def _complexity_sections(data, views, charts) -> list[Section]:
    sections = [
        Section(
            "Complexity relative to gold (paper Table 1)",
            (
                "Model mean / gold mean of each complexity count over the items with a "
                "parseable prediction (the paper's Table 1 ratio; above 1: the model writes more "
                "complex SQL than gold); in brackets the two means. A dash: gold's mean is 0.",
            ),
        )
    ]
    for view in views:
        rows = [row for row in data.complexity if row.view == view]
        if not rows:
            continue
        names = list(rows[0].counts)
        table = Table(
            ("Run", *(name.replace("_", " ") for name in names)),
            tuple(
                (
                    row.run,
                    *(
                        f"{fmt(row.ratio(name), 2)} ({fmt(row.counts[name][0], 2)} / "
                        f"{fmt(row.counts[name][1], 2)})"
                        if name in row.counts
                        else "–"
                        for name in names
                    ),
                )
                for row in rows
            ),
            (False, *(True for _ in names)),
        )
        image = charts.draw("complexity", view, plots.plot_complexity_ratios, rows)
        sections.append(Section(view, (table, *image), level=3))
    return sections


__all__ = ["ReportData", "ReportFiles", "analyse", "write_report"]
