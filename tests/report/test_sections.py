"""The report's sections follow one protocol: every module of ``report.sections`` is listed once
in ``build.SECTIONS``, and a report on runs that have something for every section shows their
headings in that order."""

from __future__ import annotations

import importlib
import pkgutil

from sqlbench_lmeval.report import read_runs, sections, write_report
from sqlbench_lmeval.report.build import SECTIONS


def _modules():
    return [
        importlib.import_module(f"{sections.__name__}.{info.name}")
        for info in pkgutil.iter_modules(sections.__path__)
    ]


def test_every_section_module_is_listed_once_by_its_entry_point():
    modules = _modules()
    assert len(modules) == len(SECTIONS)
    for module in modules:
        assert [build for build in SECTIONS if build is module.sections] == [module.sections]
        assert isinstance(module.TITLE, str) and module.TITLE


def test_a_report_shows_every_section_in_the_listed_order(score_item, write_score_file, tmp_path):
    def item(item_id, ex):
        # An item with what every section reads: TPC-DS's similarity and complexity counts,
        # sampled scoring's voting and pass@k, and the repair loop's retries.
        return score_item(
            item_id,
            ex,
            category="c1" if item_id < 3 else "c2",
            db_id="db1" if item_id % 2 else "db2",
            parsed=1.0,
            sim_tables=1.0,
            structural_similarity=1.0,
            join_count=1.0,
            gold_join_count=1.0,
            ex_maj=ex,
            ex_mean=ex,
            pass_at_1=ex,
            retries_used=0,
            **{"ves@retry": 1, "ex@retry": ex},
            # ... and a metered answer's cost.
            prompt_tokens=100 * item_id,
            completion_tokens=10,
            latency_s=0.5,
            tokens_from="usage",
            requests=1,
        )

    # One model's items on two engines: the only kind of pair the cross-engine section shows.
    runs = read_runs(
        [
            str(write_score_file("lite", [item(i, i % 2) for i in range(1, 5)], engine="sqlite")),
            str(write_score_file("maria", [item(i, 1) for i in range(1, 5)], engine="mysql")),
        ]
    )
    markdown = write_report(runs, tmp_path / "all", resamples=50).markdown.read_text("utf-8")
    headings = [line[3:] for line in markdown.splitlines() if line.startswith("## ")]
    titles = {module.sections: module.TITLE for module in _modules()}
    assert headings == [titles[build] for build in SECTIONS]
    assert headings == [
        "Result",
        "Runs",
        "Scores",
        "Scores by database",
        "Paired comparisons (EX)",
        "Cross-engine verdicts",
        "Outcomes and failures",
        "Structural similarity to gold (paper Table 2)",
        "Complexity relative to gold (paper Table 1)",
        "Sampled runs: voting and pass@k",
        "Retried runs: valid after r retries",
        "Cost: tokens and latency",
    ]
