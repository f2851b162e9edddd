"""Verifications made by hand (per-item EX chosen by the test) for the leaderboard tests:
``verification(name, ex, categories=..., reject=...)`` is what ``Verification.from_json``
reads back from a verify report of one task whose item i has EX ``ex[i]``."""

from __future__ import annotations

from sqlbench_lmeval.verify import Verification

HOSTILE = '</script><img src=x onerror="alert(1)"> & "model"'


def verification(name, ex, *, categories=None, task="logiccat_mini", reject=False, run=None):
    """A verification of one task whose item i has EX ``ex[i]`` (VES 1, healthy gold)."""
    categories = categories or ["physical"] * len(ex)
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
            "id": i + 1,
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
    data = {
        "run": run or name,
        "source": f"runs/{name}",
        "kind": "lm-eval",
        "findings": [],
        "inputs": [{"file": "results.json", "sha256": "0" * 64}],
        "settings": {},
        "tasks": [
            {
                "task": task,
                "benchmark": "logiccat",
                "findings": findings,
                "metrics": {},
                "metrics_logged": {},
                "claimed": {},
                "facts": {},
                "items": items,
                "outputs_sha256": name,
                "dataset_version": "v1",
            }
        ],
    }
    return Verification.from_json(data)
