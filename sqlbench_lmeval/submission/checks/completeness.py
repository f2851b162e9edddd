"""Completeness: every item of the task exactly once. A missing item scores 0 on the full
denominator (the task's item count, whatever ``--limit`` the run used); an item answered twice,
an id the task does not have or a line naming none rejects the run."""

from __future__ import annotations

from sqlbench_lmeval.submission.checks.base import (
    FINDING,
    REJECT,
    CheckedTask,
)
from sqlbench_lmeval.submission.logged import LoggedAnswer, LoggedTask

#: Whether the check reads the task's scores (it runs after the scoring).
NEEDS_SCORES = False


def check(task: CheckedTask) -> None:
    """The logged answer of each item into ``task.answers``; findings for the rest."""
    by_id = {item.id: item for item in task.items}
    splits = sorted({str(doc["split"]) for doc in task.docs if doc.get("split")})
    of_split = f" of the {', '.join(splits)} split" if splits else ""
    task.answers = _completeness(task.logged, by_id, task.submission, task.add, of_split)


def _completeness(
    logged: LoggedTask, by_id, submission, add, of_split: str = ""
) -> dict[int, LoggedAnswer]:
    """The logged answer of each item (the first, if logged twice); findings for the rest."""
    answers: dict[int, LoggedAnswer] = {}
    duplicated, unknown, unnamed = [], [], []
    for answer in logged.answers:
        if answer.item_id is None:
            unnamed.append(answer.where)
        elif answer.item_id not in by_id:
            unknown.append(answer.item_id)
        elif answer.item_id in answers:
            duplicated.append(answer.item_id)
        else:
            answers[answer.item_id] = answer
    if unnamed:
        add(
            "completeness",
            "unnamed_lines",
            REJECT,
            f"{len(unnamed)} line(s) name no item id: " + ", ".join(unnamed[:5]),
        )
    if duplicated:
        ids = sorted(set(duplicated))
        add(
            "completeness",
            "duplicate_items",
            REJECT,
            f"{len(ids)} item(s) answered more than once (only one answer per item counts; "
            "which one would be the submitter's choice)",
            ids,
        )
    if unknown:
        ids = sorted(set(unknown))
        add(
            "completeness",
            "unknown_items",
            REJECT,
            f"{len(ids)} id(s) are not items of {logged.name}{of_split}",
            ids,
        )
    missing = sorted(set(by_id) - set(answers))
    if missing:
        limit = (submission.settings.get("config") or {}).get("limit")
        if isinstance(limit, float) and limit.is_integer():
            limit = int(limit)  # lm-eval records --limit 3 as 3.0
        how = f" (the run used --limit {limit})" if limit is not None else ""
        add(
            "completeness",
            "missing_items",
            FINDING,
            f"{len(missing)} of {len(by_id)} items{of_split} have no answer{how}: they score 0 "
            f"on the full denominator ({len(by_id)} items)",
            missing,
        )
    return answers
