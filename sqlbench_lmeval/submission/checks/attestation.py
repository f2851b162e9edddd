"""Attestation: a predictions file or a ``score`` output records no prompt, model or
generation settings, so nothing shows how its outputs were made; it is scored and checked for
completeness, never shown as a verified run (``unattested``)."""

from __future__ import annotations

from sqlbench_lmeval.submission.checks.base import (
    UNATTESTED_SEVERITY,
    CheckedTask,
)

#: Whether the check reads the task's scores (it runs after the scoring).
NEEDS_SCORES = False


def check(task: CheckedTask) -> None:
    submission = task.submission
    if submission.kind != "lm-eval":
        task.add(
            "provenance",
            "unattested",
            UNATTESTED_SEVERITY,
            f"a {submission.kind} file records no prompt, model or generation settings: its "
            "outputs are scored and checked for completeness, but nothing shows how they were "
            "made, so it is not a verified run",
        )
