"""Truncation: outputs the generation limit cut off."""

from __future__ import annotations

from collections.abc import Sequence

from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.scoring.verdicts import TRUNCATION_ADVICE
from sqlbench_lmeval.submission.checks.base import (
    FINDING,
    CheckedTask,
)

#: Whether the check reads the task's scores (it runs after the scoring).
NEEDS_SCORES = True


def check(task: CheckedTask) -> None:
    _truncation(task.scored, task.add)


def _truncation(scored: Sequence[ScoredItem], add) -> None:
    cut = [item.id for item in scored if item.truncated]
    if cut:
        add(
            "settings",
            "truncated_outputs",
            FINDING,
            f"{len(cut)} output(s) were cut off by the generation limit: {TRUNCATION_ADVICE}",
            cut,
        )
