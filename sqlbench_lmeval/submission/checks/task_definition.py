"""The task definition: the task as an lm-eval results file records it (``doc_to_text`` as
source text, ``description``, the YAML it came from) against ours, so a ``--include_path``
override shows even when the samples log was edited back to our prompts."""

from __future__ import annotations

import inspect
from pathlib import PurePosixPath, PureWindowsPath

from sqlbench_lmeval import __version__
from sqlbench_lmeval.lmeval.task_specs import TaskSpec
from sqlbench_lmeval.submission.checks.base import (
    FINDING,
    NOT_RECORDED,
    REJECT,
    CheckedTask,
)
from sqlbench_lmeval.submission.logged import LoggedTask

#: Whether the check reads the task's scores (it runs after the scoring).
NEEDS_SCORES = False


def shown_source(path: str | None) -> str | None:
    """The task YAML a results file names, as a shared verification shows it: from our tasks
    folder on (``tasks/tpcds/tpcds.yaml``), else its folder and file (``override/x.yaml``),
    never the absolute path of the machine that ran it (its user's home folder).

    >>> shown_source("/home/me/venv/lib/site-packages/sqlbench_lmeval/tasks/tpcds/tpcds.yaml")
    'tasks/tpcds/tpcds.yaml'
    >>> shown_source("/home/me/override/tpcds_hint.yaml")
    'override/tpcds_hint.yaml'
    """
    if not isinstance(path, str) or not path:
        return None
    parts = (PureWindowsPath(path) if "\\" in path else PurePosixPath(path)).parts
    if "tasks" in parts:
        at = len(parts) - 1 - parts[::-1].index("tasks")
        return "/".join(parts[at:])
    return "/".join(parts[-2:]).lstrip("/")


def check(task: CheckedTask) -> None:
    if task.submission.kind == "lm-eval":
        _task_definition(task.spec, task.logged, task.submission, task.add, task.facts)


def _task_definition(spec: TaskSpec, logged: LoggedTask, submission, add, facts) -> None:
    """The task as the results file records it (lm-eval's config: ``doc_to_text`` as source
    text, ``description``, the YAML file it came from) against ours.

    A task override (``--include_path`` with a YAML of its own) that changes the prompt shows
    here even when the samples log was edited back to our prompts."""
    config = logged.config
    if not config:
        add(
            "provenance",
            "task_config_missing",
            FINDING,
            "the results file records no config for this task: its definition was not compared",
        )
        return
    source = shown_source((config.get("metadata") or {}).get("config_source"))
    facts["config_source"] = source or NOT_RECORDED
    recorded = config.get("doc_to_text")
    ours = _source_of(spec.prompt_function())
    packages = {str(a.doc.get("sqlbench_lmeval_version")) for a in logged.answers if a.doc} - {
        "None"
    }
    if isinstance(recorded, str) and ours is not None and recorded.strip() != ours.strip():
        # The same release writes the same source; another release may have edited a
        # docstring, and its prompts are compared item by item anyway.
        same_release = packages == {__version__}
        add(
            "provenance",
            "task_definition",
            REJECT if same_release else FINDING,
            f"the results file's doc_to_text is not this task's ({recorded.strip()[:120]!r}"
            + (f", from {source}" if source else "")
            + ("" if same_release else f"; run made with sqlbench-lmeval {', '.join(packages)}")
            + ")",
        )
    description = config.get("description")
    if description:
        add(
            "provenance",
            "task_description",
            REJECT,
            f"the task config adds a description before every prompt: {str(description)[:200]!r}",
        )


def _source_of(function) -> str | None:
    """The source text of ``function``, as lm-eval records a ``!function`` in its config."""
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return None
