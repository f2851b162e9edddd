"""Run files for report tests, made from per-item values we choose (so every number in a
table can be computed by hand).

- ``score_item``: one score dict, shaped like ``Scorer.score`` output;
- ``write_score_file``: a ``sqlbench-lmeval score`` output JSON;
- ``write_lmeval_run``: an lm-eval ``--output_path`` folder written by lm-eval's own
  ``EvaluationTracker`` (the code ``lm_eval --log_samples`` uses), so the files have lm-eval's
  real quirks: ``filtered_resps`` holds ``str(score_dict)``, NaN is written bare.
"""

from __future__ import annotations

import json

import pytest
from support.lmeval_samples import lmeval_tracker, logged_sample


def _score_item(item_id, ex, status="ok", *, category=None, version="1", error=None, **extra):
    ran = status == "ok"
    score = {
        "id": item_id,
        "category": category,
        "status": status,
        "ves": int(ran),
        "ex": int(ex),
        "ex_strict": int(ex),
        "ex_set": int(ex),
        "extracted_sql": "SELECT 1" if status != "no_sql" else None,
        "extraction": "fenced_sql",
        "error": error if error is not None else (None if ran else f"{status} happened"),
        "reason": ("match" if ex else "values") if ran else None,
        "gold_status": "ok",
        "gold_error": None,
        "flags": [],
        "ordered": False,
        "comparison_version": version,
    }
    score.update(extra)
    return score


@pytest.fixture
def score_item():
    """``score_item(id, ex, status="ok", category=None, version="1", error=None, **extra)``."""
    return _score_item


@pytest.fixture
def write_score_file(tmp_path):
    """``write_score_file(name, items, task="logiccat", version="1", dataset="data-v1",
    engine=None)`` (``engine``: the engine the file names, as ``score`` records it)."""

    def write(name, items, *, task="logiccat", version="1", dataset="data-v1", engine=None):
        path = tmp_path / f"{name}.json"
        data = {
            "task": task,
            "engine": engine,
            "comparison_version": version,
            "dataset_version": dataset,
            "sqlbench_lmeval_version": "0.1.0",
            "limits": {"timeout_s": 10.0, "max_rows": 10000},
            "missing_ids": [item["id"] for item in items if item["status"] == "missing"],
            "metrics": {},
            "items": items,
        }
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    return write


@pytest.fixture
def write_lmeval_run(tmp_path):
    """``write_lmeval_run(model, {task: [score dicts]}, groups={group: [tasks]},
    output=tmp_path / "lmeval", dataset="data-v1", results=None)`` -> the output folder
    (``results``: more top-level fields of the results file, as lm-eval's evaluator gives
    them to the tracker: ``config``, ``date``, ``n-samples``)."""

    def write(model, tasks, *, groups=None, output=None, dataset="data-v1", results=None):
        extra = results or {}
        output = output or tmp_path / "lmeval"
        tracker = lmeval_tracker(output, model)
        subtasks = {name: [] for name in tasks} | {g: list(t) for g, t in (groups or {}).items()}
        results = {
            "results": {name: {"alias": name} for name in subtasks},
            "group_subtasks": subtasks,
            "configs": {name: {"task": name} for name in tasks},
            **extra,
        }
        tracker.save_results_aggregated(results=results, samples=None)
        for task, scores in tasks.items():
            samples = [_sample(index, task, score, dataset) for index, score in enumerate(scores)]
            tracker.save_results_samples(task_name=task, samples=samples)
        return output

    return write


def _sample(index, task, score, dataset):
    """One logged sample as lm-eval's evaluator builds it before the tracker writes it."""
    doc = {
        "id": score["id"],
        "question": f"question {score['id']}",
        "category": score.get("category") or "",
        "gold_status": score["gold_status"],
        "flags": [],
        "db_id": "db",
        "dataset_version": dataset,
    }
    return logged_sample(
        index, doc, "SELECT 1", "prompt for " + task, "```sql\nSELECT 1\n```", score
    )
