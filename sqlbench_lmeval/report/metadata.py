"""What a run's files say about how it was made: the model and its arguments, the date, the
generation settings, the lm-eval version and whether ``--limit`` cut the tasks short, read from
``Run.source`` and never guessed (the fields read: docs/failures.md#reading-lm-eval-run-folders)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlbench_lmeval.report.runs import Run, file_timestamp


@dataclass(frozen=True)
class RunMetadata:
    model: str | None = None
    model_args: str | None = None
    date: str | None = None  # UTC, "2026-12-02 18:30"
    generation: str | None = None  # generation settings, "max_gen_toks=512, temperature=0"
    lm_eval_version: str | None = None
    #: Why the run does not cover its tasks' items: "--limit 30" (lm-eval's option); None
    #: when the run was not limited.
    limit: str | None = None


def _load(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _results_file(source: Path) -> dict:
    """The newest lm-eval results file of a run (the file itself, in its folder, or in its one
    model folder: ``--output_path`` holds a folder per model)."""
    if source.is_file():
        if source.suffix == ".jsonl":  # a samples file: its folder holds the results
            source = source.parent
        else:
            return _load(source)
    files = sorted(source.glob("results_*.json"), key=file_timestamp) if source.is_dir() else []
    if not files and source.is_dir():
        models = {path.parent for path in source.glob("*/results_*.json")}
        if len(models) == 1:
            files = sorted(models.pop().glob("results_*.json"), key=file_timestamp)
    return _load(files[-1]) if files else {}


def _text(value) -> str | None:
    if value is None or value == "" or value == {}:
        return None
    if isinstance(value, Mapping):
        return ", ".join(f"{key}={_text(item)}" for key, item in value.items())
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # lm-eval stores --limit 30 as 30.0
    return str(value)


def _date(value) -> str | None:
    if isinstance(value, (int, float)) and math.isfinite(value):
        return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return _text(value)


def _limit(data: Mapping) -> str | None:
    config = data.get("config") or {}
    limit = config.get("limit") if isinstance(config, Mapping) else None
    if limit is not None:
        return f"--limit {_text(limit)}"
    # A limit lm-eval applied without recording it in config: fewer items than the task has.
    counts = data.get("n-samples") or {}
    for task, count in counts.items() if isinstance(counts, Mapping) else ():
        if isinstance(count, Mapping) and count.get("effective", 0) < count.get("original", 0):
            return f"{task}: {count['effective']} of {count['original']} items"
    return None


def run_limit(source: str | Path) -> str | None:
    """How ``--limit`` cut the lm-eval run at ``source`` (its folder, samples or results file):
    "--limit 30", or "logiccat_x: 30 of 4036 items" when lm-eval did not record the option;
    None for a run of whole tasks (or a folder without a results file)."""
    return _limit(_results_file(Path(source)))


def run_metadata(run: Run) -> RunMetadata:
    data = _results_file(Path(run.source))
    if "items" in data and "task" in data:
        # A `sqlbench-lmeval score` file records none of it, but the limit of the lm-eval run
        # it scored (``score`` copies it).
        return RunMetadata(limit=_text(data.get("limit")))
    config = data.get("config") if isinstance(data.get("config"), Mapping) else {}
    generation = _text(config.get("gen_kwargs"))
    if generation is None:
        per_task = {
            _text((task_config or {}).get("generation_kwargs"))
            for name, task_config in (data.get("configs") or {}).items()
            if name in {task.name for task in run.tasks} and isinstance(task_config, Mapping)
        } - {None}
        generation = "; ".join(sorted(per_task)) or None
    return RunMetadata(
        model=_text(config.get("model")),
        model_args=_text(config.get("model_args")),
        date=_date(data.get("date")),
        generation=generation,
        lm_eval_version=_text(data.get("lm_eval_version")),
        limit=_limit(data),
    )


def marked(runs: Sequence[Run]) -> list[Run]:
    """The runs, each ``--limit`` run renamed "<name> [--limit 30]", so every table and chart
    that shows its numbers says the run covers only part of its tasks."""
    renamed = []
    for run in runs:
        limit = run_metadata(run).limit
        renamed.append(
            run if limit is None else dataclasses.replace(run, name=f"{run.name} [{limit}]")
        )
    return renamed


__all__ = ["RunMetadata", "marked", "run_limit", "run_metadata"]
