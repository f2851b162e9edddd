"""What every check of ``verify`` works on and gives: :class:`Finding` (one result: its
severity, message and items), the severities, and :class:`CheckedTask`, a task of a run that the
checks read and fill in turn (its answers, prompts, facts, scores and findings)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from sqlbench_lmeval.lmeval.task_specs import TaskSpec
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.submission.logged import LoggedAnswer, LoggedTask, Submission
from sqlbench_lmeval.vocabulary import Severity

#: A fact the run does not record (shown as such, never as the task's default).
NOT_RECORDED = "not recorded"
REJECT, UNATTESTED_SEVERITY, FINDING, INFO = tuple(Severity)


@dataclass(frozen=True)
class Finding:
    """One result of a check: its severity, what it says, and the items it concerns."""

    check: str  # completeness, provenance, settings, rescoring, integrity
    code: str  # a stable name, e.g. duplicate_items
    severity: str  # reject, finding, info
    message: str
    items: tuple[int, ...] = ()
    task: str | None = None

    def to_json(self) -> dict:
        return {
            "task": self.task,
            "check": self.check,
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "items": list(self.items),
        }

    @classmethod
    def from_json(cls, data: Mapping) -> Finding:
        return cls(
            data["check"],
            data["code"],
            data["severity"],
            data["message"],
            tuple(data.get("items") or ()),
            data.get("task"),
        )


@dataclass
class CheckedTask:
    """A task of a run as the checks see it: what the run logged, the task's documents and
    items, and what the checks found so far (answers by item, prompt states, facts, scores)."""

    submission: Submission
    logged: LoggedTask
    spec: TaskSpec
    docs: list[dict]
    items: list[Item]
    found: list[Finding] = field(default_factory=list)
    answers: dict[int, LoggedAnswer] = field(default_factory=dict)
    prompts: dict[int, dict] = field(default_factory=dict)
    facts: dict = field(default_factory=dict)
    predictions: dict = field(default_factory=dict)
    scores: list[dict] = field(default_factory=list)

    @cached_property
    def scored(self) -> list[ScoredItem]:
        """:attr:`scores` read (once: every check that reads them reads these)."""
        return [ScoredItem.from_score(score) for score in self.scores]

    def add(self, check, code, severity, message, items=()) -> None:
        self.found.append(Finding(check, code, severity, message, tuple(items), self.logged.name))


def of_answered(count: int, answered: int, total: int) -> str:
    """``count`` items as a share of the items a run answered, saying how many it answered of
    the task's ``total``: a share of a ``--limit`` run's items is never shown as if it were of
    the whole task's.

    >>> print(of_answered(14, 30, 4036))
    14 of the 30 answered items (46.7%; the run answered 30 of the task's 4,036 items)
    >>> of_answered(2, 99, 99)
    '2 of the 99 answered items (2.0%)'
    """
    share = f"{count / answered:.1%}" if answered else "–"
    partial = ""
    if answered < total:
        partial = f"; the run answered {answered:,} of the task's {total:,} items"
    return f"{count:,} of the {answered:,} answered items ({share}{partial})"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
