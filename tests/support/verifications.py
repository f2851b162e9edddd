"""Verifications made by hand (per-item EX chosen by the test) for the leaderboard tests:
``verification(name, ex, categories=..., reject=..., unattested=...)`` is what
``Verification.from_json`` reads back from a verify report of one task whose item i has EX
``ex[i]`` (``reject``: with a duplicated item; ``unattested``: a predictions file's;
``finding``: ``(code, message, items)`` of one finding that leaves it verified with findings)."""

from __future__ import annotations

from sqlbench_lmeval.submission.verify import Verification

HOSTILE = '</script><img src=x onerror="alert(1)"> & "model"'


def verification(
    name,
    ex,
    *,
    categories=None,
    task="logiccat_mini",
    reject=False,
    run=None,
    unattested=False,
    finding=None,
):
    """A verification of one task whose item i has EX ``ex[i]`` (VES 1, healthy gold)."""
    data = _data(name, {task: ex}, categories, reject, run)
    if finding:
        code, message, items = finding
        data["tasks"][0]["findings"].append(
            {
                "task": task,
                "check": "integrity",
                "code": code,
                "severity": "finding",
                "message": message,
                "items": list(items),
            }
        )
    if unattested:
        data["kind"] = "predictions"
        data["tasks"][0]["findings"].append(
            {
                "task": task,
                "check": "provenance",
                "code": "unattested",
                "severity": "unattested",
                "message": "a predictions file records no prompt, model or generation settings",
                "items": [],
            }
        )
    return Verification.from_json(data)


def group_verification(name, ex_by_task: dict[str, list[int]]):
    """A verification of several tasks (item ids numbered on across tasks; each task's items in
    the category its name ends with, ``logiccat_physical`` -> ``physical``)."""
    return Verification.from_json(_data(name, ex_by_task, None, False, None))


def _data(name, ex_by_task, categories, reject, run) -> dict:
    tasks, first_id = [], 1
    for task, ex in ex_by_task.items():
        tasks.append(_task(name, task, ex, categories, reject, first_id))
        first_id += len(ex)
    return {
        "run": run or name,
        "source": f"runs/{name}",
        "kind": "lm-eval",
        "findings": [],
        "inputs": [{"file": "results.json", "sha256": "0" * 64}],
        "settings": {},
        "tasks": tasks,
    }


def _task(name, task, ex, categories, reject, first_id) -> dict:
    categories = categories or [task.rpartition("_")[2]] * len(ex)
    findings = []
    if reject:
        findings.append(
            {
                "task": task,
                "check": "completeness",
                "code": "duplicate_items",
                "severity": "reject",
                "message": "item 1 twice",
                "items": [1],
            }
        )
    items = [
        {
            "id": first_id + i,
            "category": c,
            "verdict": "correct" if e else "wrong_result",
            "status": "ok",
            "ves": 1,
            "ex": e,
            "ex_reads_data": e,
            "healthy_gold": i % 2 == 0,
            "truncated": i == 0,
            "reads_no_table": False,
        }
        for i, (e, c) in enumerate(zip(ex, categories, strict=True))
    ]
    return {
        "task": task,
        "benchmark": "logiccat",
        "findings": findings,
        "metrics": {},
        "metrics_logged": {},
        "claimed": {},
        "facts": {},
        "items": items,
        "outputs_sha256": f"{name}/{task}",
        "dataset_version": "v1",
    }
