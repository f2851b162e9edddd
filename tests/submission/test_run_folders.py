"""lm-eval run folders are read one way by every command (``report.runs.lmeval_task_files``).

Two real ``lm_eval`` runs of ``tpcds`` by the same scripted model: a full one (99 items) and a
``--limit 30`` smoke test, whose files are put beside the full run's as a second ``lm_eval``
with the same ``--output_path`` leaves them. Then:

- the folder holding both stops ``score``, ``verify``, ``report``, ``explore`` and
  ``leaderboard`` (exit 2) naming both samples files and how to choose one; naming the samples
  file (``PATH`` or ``NAME=PATH``) reads that run;
- an empty samples file is an input error (exit 2);
- a samples file cut to 50 lines beside its results file (99 items) is named an incomplete
  run by ``score`` and ``report``, and ``verify`` still counts the 49 missing items.
"""

from __future__ import annotations

import json
import shutil

import pytest
from support.verify_runs import (
    copy_run,
    run_tpcds,
    samples_lines,
    samples_path,
    write_samples_lines,
)

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.submission.logged import read_submissions
from sqlbench_lmeval.submission.verify import WITH_FINDINGS, verify_submission

pytestmark = pytest.mark.slow

GOLD_ITEMS = (1, 2, 5)
KEPT = 50


@pytest.fixture(scope="module")
def cache(tpcds_cache):
    return tpcds_cache


@pytest.fixture(scope="module")
def runs(cache, tpcds_items, tmp_path_factory):
    root = tmp_path_factory.mktemp("run-folders")
    gold = {item.id: f"```sql\n{item.gold_sql}\n```" for item in tpcds_items}
    answers = {number: gold[number] for number in GOLD_ITEMS}
    full = run_tpcds(root / "full", cache, tpcds_items, answers)
    smoke = run_tpcds(root / "smoke", cache, tpcds_items, answers, extra_args=["--limit", "30"])
    return {"full": full, "smoke": smoke}


def two_runs(runs, tmp_path):
    """The full run's model folder with the smoke test's files beside its own."""
    folder = copy_run(runs["full"], tmp_path / runs["full"].name)
    for path in runs["smoke"].iterdir():
        shutil.copy(path, folder / path.name)
    return folder


#: What ``commands`` write into ``tmp_path``: none of it may exist after a refused command.
OUTPUTS = ("s.json", "verify", "report", "explore", "board")


def written(tmp_path) -> list[str]:
    return [name for name in OUTPUTS if (tmp_path / name).exists()]


def commands(folder, cache, tmp_path) -> dict[str, list[str]]:
    base = ["--cache-dir", str(cache), "--no-progress"]
    return {
        "score": ["score", "tpcds", str(folder), "-o", str(tmp_path / "s.json"), *base],
        "verify": ["verify", str(folder), "-o", str(tmp_path / "verify"), *base],
        "report": ["report", str(folder), "-o", str(tmp_path / "report")],
        "explore": ["explore", str(folder), "-o", str(tmp_path / "explore")],
        "leaderboard": ["leaderboard", str(folder), "-o", str(tmp_path / "board"), *base],
    }


def test_two_runs_of_a_task_in_one_folder_stop_every_command(runs, cache, tmp_path, capsys):
    folder = two_runs(runs, tmp_path)
    full_samples = samples_path(runs["full"]).name
    smoke_samples = samples_path(runs["smoke"]).name
    assert full_samples != smoke_samples
    for name, argv in commands(folder, cache, tmp_path).items():
        assert main(argv) == 2, name
        err = capsys.readouterr().err
        assert full_samples in err and smoke_samples in err, (name, err)
        assert "NAME=" in err and "2 samples files" in err, (name, err)
        assert written(tmp_path) == [], name
    # Naming the samples file chooses the run: the full one, or the smoke test by NAME=PATH.
    scored = tmp_path / "full.json"
    argv = ["score", "tpcds", str(folder / full_samples), "-o", str(scored), "--no-progress"]
    assert main([*argv, "--cache-dir", str(cache)]) == 0
    assert "warning" not in capsys.readouterr().err
    items = json.loads(scored.read_text("utf-8"))["items"]
    assert len(items) == 99
    assert {item["id"] for item in items if item["ex"] == 1} == set(GOLD_ITEMS)
    (submission,) = read_submissions(f"smoke={folder / smoke_samples}")
    (task,) = submission.tasks
    assert submission.name == "smoke" and len(task.answers) == 30
    report = tmp_path / "smoke-report"
    assert main(["report", f"smoke={folder / smoke_samples}", "-o", str(report)]) == 0
    # A --limit run is marked wherever its name appears.
    assert "| smoke [--limit 30] | tpcds | 30 |" in (report / "report.md").read_text("utf-8")


def test_an_empty_samples_file_is_an_input_error(runs, cache, tmp_path, capsys):
    folder = copy_run(runs["full"], tmp_path / "empty")
    samples_path(folder).write_text("", encoding="utf-8")
    for name, argv in commands(folder, cache, tmp_path).items():
        assert main(argv) == 2, name
        err = capsys.readouterr().err
        assert f"{samples_path(folder)}: empty samples file" in err, (name, err)
        assert written(tmp_path) == [], name


def test_a_cut_samples_file_is_named_an_incomplete_run(runs, cache, tmp_path, capsys):
    folder = copy_run(runs["full"], tmp_path / "cut")
    write_samples_lines(folder, samples_lines(folder)[:KEPT])
    said = f"incomplete run: {KEPT} of the 99 items that its results file"
    every = commands(folder, cache, tmp_path)

    assert main(every["score"]) == 0
    err = capsys.readouterr().err
    assert said in err and str(samples_path(folder)) in err
    scored = json.loads((tmp_path / "s.json").read_text("utf-8"))
    assert len(scored["items"]) == KEPT  # the logged items, as scored before

    assert main(every["report"]) == 0
    assert said in capsys.readouterr().err
    markdown = (tmp_path / "report" / "report.md").read_text("utf-8")
    assert said in markdown and f"| tpcds | {KEPT} |" in markdown

    (submission,) = read_submissions(str(folder))
    verification = verify_submission(submission, cache_dir=cache, workers=2)
    missing = {f.code: f.items for f in verification.all_findings}["missing_items"]
    assert len(missing) == 99 - KEPT
    assert verification.verdict == WITH_FINDINGS
