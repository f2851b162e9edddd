"""Truncation: outputs the generation limit cut off."""

from __future__ import annotations

from sqlbench_lmeval.scoring.verdicts import TRUNCATION_ADVICE
from sqlbench_lmeval.submission.checks.base import (
    FINDING,
    CheckedTask,
)

#: Whether the check reads the task's scores (it runs after the scoring).
NEEDS_SCORES = True


def check(task: CheckedTask) -> None:
    _truncation(task.scores, task.add)


def _truncation(scores, add) -> None:
    cut = [score["id"] for score in scores if score.get("truncated")]
    if cut:
        add(
            "settings",
            "truncated_outputs",
            FINDING,
            f"{len(cut)} output(s) were cut off by the generation limit: {TRUNCATION_ADVICE}",
            cut,
        )
