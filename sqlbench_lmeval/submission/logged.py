"""A run as it was submitted, read for verification: every logged line, nothing merged away, from
an lm-eval ``--log_samples`` folder (read as ``report.runs`` reads it), a ``score`` output or a
predictions JSONL, every file read listed with its sha256 (``Submission.inputs``) for the
verification's digest (what is read and why: docs/verify.md)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.jsonl import read_objects
from sqlbench_lmeval.lmeval.task_specs import DATA_OPTIONS, task_groups, task_specs
from sqlbench_lmeval.report.runs import (
    LoggedFiles,
    lmeval_task_files,
    load_json,
    model_folders,
    model_name_of,
    parse_python_literal,
    score_dict_of,
    split_spec,
)
from sqlbench_lmeval.scoring.retry_envelope import from_attempts
from sqlbench_lmeval.scoring.scored import is_number


@dataclass(frozen=True)
class LoggedAnswer:
    """One logged line: the document it answers, the request, the raw outputs, the claims."""

    where: str  # file:line
    item_id: int | None  # the document's id (None: the line names none)
    doc: Mapping
    prompt: str | None  # the request's prompt as logged (chat runs: after the template)
    generation: Mapping | None  # the request's generation settings as logged
    outputs: tuple[str, ...]  # raw responses (several for a sampled task)
    # Our score dict as logged (lm-eval: filtered_resps, a Python repr), parsed when used.
    claimed_raw: object = None
    claimed_numbers: Mapping[str, float] = field(default_factory=dict)  # numbers beside it

    @cached_property
    def claimed(self) -> Mapping | None:
        """The logged score dict (None: the line holds none)."""
        return score_dict_of(self.claimed_raw)

    def claimed_fields(self, names) -> dict:
        """The top-level ``names`` of the logged score dict that it holds.

        Parsing every logged repr costs more than the rest of a verification's reading, so a
        repr is searched for ``'name': <scalar>``; a name found more than once (a text that
        holds it, a nested key) falls back to the full parse."""
        found = self._scalars
        if found is not None and all(len(found.get(name, ())) <= 1 for name in names):
            return {name: _scalar(found[name][0]) for name in names if name in found}
        claimed = self.claimed or {}
        return {name: claimed[name] for name in names if name in claimed}

    @cached_property
    def _scalars(self) -> dict[str, list[str]] | None:
        """Every ``'name': scalar`` of a logged repr, by name (None: not a repr)."""
        raw = self.claimed_raw
        while isinstance(raw, list) and len(raw) == 1:
            raw = raw[0]
        if not isinstance(raw, str):
            return None
        found: dict[str, list[str]] = {}
        for name, value in _SCALAR_ITEM.findall(raw):  # (name, value) pairs, made in C
            found.setdefault(name, []).append(value)
        return found


@dataclass(frozen=True)
class LoggedTask:
    """The lines of one task, with what the run's results file says about that task.

    The lines of an lm-eval samples file are read when first used (``answers``), so a run
    whose verification is cached is never parsed."""

    name: str
    given_answers: tuple[LoggedAnswer, ...] | None = None  # None: read ``samples`` when used
    samples: Path | None = None
    config: Mapping = field(default_factory=dict)  # lm-eval's task config as run
    version: str | None = None  # the task version lm-eval recorded
    claimed_metrics: Mapping[str, float] = field(default_factory=dict)  # "ex" -> 0.41, ...
    n_samples: Mapping | None = None  # lm-eval's {"original": N, "effective": n}
    files: LoggedFiles | None = None  # an lm-eval run's: its samples and results file

    @cached_property
    def answers(self) -> tuple[LoggedAnswer, ...]:
        if self.given_answers is not None:
            return self.given_answers
        return _read_samples(self.samples)

    @property
    def incomplete(self) -> str | None:
        """Said when the samples file holds fewer items than the run's results file records."""
        if self.files is None:
            return None
        return self.files.incomplete(len({answer.item_id for answer in self.answers}))


@dataclass(frozen=True)
class Submission:
    """One model's run: its tasks of ours, lm-eval's run settings, the files read."""

    name: str
    source: str
    kind: str  # lm-eval, score, predictions
    tasks: tuple[LoggedTask, ...]
    settings: Mapping = field(default_factory=dict)  # results_*.json top level, less per-task
    inputs: tuple[tuple[str, str], ...] = ()  # (file name, sha256)
    other_tasks: tuple[str, ...] = ()  # tasks in the folder that are not ours


def read_submissions(
    spec: str, *, task: str | None = None, hasher: Callable[[Path], str] | None = None
) -> list[Submission]:
    """The run(s) at ``spec`` (``PATH`` or ``NAME=PATH``); ``task`` names the task of a
    predictions file (and picks one task of any other kind of run). ``hasher`` gives a file's
    sha256 (default :func:`sha256_file`; a leaderboard remembers those of unchanged files)."""
    hasher = hasher or sha256_file
    name, path = split_spec(spec)
    if not path.exists():
        raise UserError(f"run {spec!r}: {path} does not exist")
    if path.is_file() and path.suffix == ".jsonl" and not path.name.startswith("samples_"):
        return [_picked(_read_predictions_file(path, name, task, hasher), task)]
    if path.is_file() and path.suffix == ".json" and not path.name.startswith("results_"):
        return [_picked(_read_score_file(path, name, hasher), task)]
    if path.is_file():  # a results or samples file chooses what is read of its folder
        return [_picked(_read_lmeval_folder(path.parent, name, hasher, chosen=path), task)]
    return [
        _picked(_read_lmeval_folder(model, name, hasher), task)
        for model in model_folders(path, name)
    ]


def _picked(submission: Submission, task: str | None) -> Submission:
    if task is None:
        return submission
    chosen = tuple(logged for logged in submission.tasks if logged.name == task)
    if not chosen:
        shown = ", ".join(logged.name for logged in submission.tasks) or "none"
        raise UserError(f"{submission.source}: no task {task!r} in this run (tasks: {shown})")
    return Submission(**{**submission.__dict__, "tasks": chosen})


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- lm-eval output folders --------------------------------------------------------------------


def _read_lmeval_folder(
    folder: Path, name: str | None, hasher, chosen: Path | None = None
) -> Submission:
    files, results = lmeval_task_files(folder, chosen)
    ours = task_specs()
    tasks, used = [], []
    for logged in files:
        if logged.task not in ours:
            continue
        if logged.results is not None and logged.results not in used:
            used.append(logged.results)
        data = logged.data
        tasks.append(
            LoggedTask(
                name=logged.task,
                samples=logged.samples,
                config=(data.get("configs") or {}).get(logged.task) or {},
                version=_text((data.get("versions") or {}).get(logged.task)),
                claimed_metrics=_claimed_metrics((data.get("results") or {}).get(logged.task)),
                n_samples=(data.get("n-samples") or {}).get(logged.task),
                files=logged,
            )
        )
        used.append(logged.samples)
    if not tasks:
        shown = ", ".join(logged.task for logged in files)
        raise UserError(f"{folder}: no task of ours logged here ({shown})")
    settings = dict(results[-1][1]) if results else {}
    for key in ("results", "configs", "versions", "n-samples", "samples", "groups"):
        settings.pop(key, None)
    return Submission(
        name=name or model_name_of([data for _, data in results], folder),
        source=str(folder),
        kind="lm-eval",
        tasks=tuple(tasks),
        settings=settings,
        inputs=tuple((path.name, hasher(path)) for path in sorted(used)),
        other_tasks=tuple(sorted({logged.task for logged in files} - set(ours))),
    )


def _claimed_metrics(block) -> dict[str, float]:
    """``{"ex,score": 0.4, "ex_stderr,score": ...}`` -> ``{"ex": 0.4}`` (numbers only)."""
    if not isinstance(block, Mapping):
        return {}
    return {
        key.partition(",")[0]: float(value)
        for key, value in block.items()
        if "," in key and "_stderr" not in key and is_number(value)
    }


def _read_samples(path: Path) -> tuple[LoggedAnswer, ...]:
    answers = []
    for where, line in read_objects(path, "lm-eval samples"):
        doc = line.get("doc") if isinstance(line.get("doc"), Mapping) else {}
        arguments = line.get("arguments")
        first = next(iter(arguments.values()), None) if isinstance(arguments, dict) else None
        if isinstance(arguments, list) and arguments:  # older lm-eval: [[prompt, kwargs]]
            first = dict(enumerate(arguments[0]))
            first = {"arg_0": first.get(0), "arg_1": first.get(1)}
        first = first if isinstance(first, Mapping) else {}
        numbers = {
            key: float(value)
            for key, value in line.items()
            if key not in ("doc_id",) and is_number(value)
        }
        answers.append(
            LoggedAnswer(
                where=where,
                item_id=_item_id(doc.get("id")),
                doc=doc,
                prompt=_prompt_text(first.get("arg_0")),
                generation=first.get("arg_1") if isinstance(first.get("arg_1"), Mapping) else None,
                outputs=_responses(line.get("resps")),
                claimed_raw=line.get("filtered_resps"),
                claimed_numbers=numbers,
            )
        )
    return tuple(answers)


def _prompt_text(argument) -> str | None:
    """The logged prompt: a string, or (API chat models) a one-element list holding the chat
    messages as JSON text."""
    if isinstance(argument, list) and len(argument) == 1:
        argument = argument[0]
    return argument if isinstance(argument, str) else None


def _responses(resps) -> tuple[str, ...]:
    """lm-eval's ``resps``: one list per request, each holding the response (or several)."""
    flat: list[str] = []

    def walk(value) -> None:
        if isinstance(value, str):
            flat.append(value)
        elif isinstance(value, (list, tuple)):
            for element in value:
                walk(element)

    walk(resps)
    return tuple(flat)


# --- score outputs and predictions files -------------------------------------------------------


def _read_score_file(path: Path, name: str | None, hasher) -> Submission:
    data = load_json(path)
    if not (isinstance(data, dict) and isinstance(data.get("items"), list) and "task" in data):
        raise UserError(f"{path}: neither a `sqlbench-lmeval score` output nor an lm-eval file")
    answers = []
    for number, score in enumerate(data["items"]):
        if not isinstance(score, Mapping):
            raise UserError(f"{path}: item {number} is not an object")
        raw = score.get("raw_output")
        outputs = tuple(raw) if isinstance(raw, list) else (() if raw is None else (str(raw),))
        answers.append(
            LoggedAnswer(
                where=f"{path}: item {number}",
                item_id=_item_id(score.get("id")),
                doc={},
                prompt=None,
                generation=None,
                outputs=outputs,
                claimed_raw=score,
            )
        )
    task = LoggedTask(
        name=str(data["task"]),
        given_answers=tuple(answers),
        claimed_metrics={
            key: float(value)
            for key, value in (data.get("metrics") or {}).items()
            if is_number(value)
        },
    )
    settings = {
        key: data.get(key)
        for key in ("comparison_version", "dataset_version", "engine", "sqlbench_lmeval_version")
    }
    settings["limits"] = data.get("limits")
    settings["data_options"] = data.get("data_options") or {}
    return Submission(
        name=name or path.stem,
        source=str(path),
        kind="score",
        tasks=(task,),
        settings=settings,
        inputs=((path.name, hasher(path)),),
    )


def _read_predictions_file(path: Path, name: str | None, task: str | None, hasher) -> Submission:
    if task is None:
        raise UserError(f"{path}: a predictions file does not say its task; name it with --task")
    answers = []
    for where, record in read_objects(
        path, "predictions", required=("id",), one_of=("prediction", "attempts")
    ):
        if "attempts" in record:
            envelope = from_attempts(record["attempts"])
            outputs = () if envelope is None else (envelope,)
        else:
            prediction = record["prediction"]
            outputs = tuple(prediction) if isinstance(prediction, list) else (str(prediction),)
        answers.append(
            LoggedAnswer(
                where=where,
                item_id=_item_id(record["id"]),
                doc={},
                prompt=None,
                generation=None,
                outputs=outputs,
            )
        )
    return Submission(
        name=name or path.stem,
        source=str(path),
        kind="predictions",
        tasks=(LoggedTask(name=task, given_answers=tuple(answers)),),
        inputs=((path.name, hasher(path)),),
    )


# --- small helpers -----------------------------------------------------------------------------

# ``'name': scalar`` in a Python repr of a dict: a number, nan/inf, a bool, None or a string.
_SCALAR_ITEM = re.compile(
    r"'([A-Za-z_][\w@]*)': (-?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?|nan|inf)|True|False|None"
    r"|'(?:[^'\\\n]|\\.)*')"
)


def _scalar(text: str):
    """A scalar matched by ``_SCALAR_ITEM`` as Python reads it."""
    if text in _WORDS:
        return _WORDS[text]
    if text.startswith("'"):
        return parse_python_literal(text)
    return int(text) if text.lstrip("-").isdigit() else float(text)


_WORDS = {"True": True, "False": False, "None": None}


def _item_id(value) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _text(value) -> str | None:
    return None if value is None else str(value)


def outputs_fingerprint(task: LoggedTask) -> str:
    """sha256 of a task's raw outputs by item id: equal for two runs with the same outputs."""
    pairs = sorted(
        ((answer.item_id if answer.item_id is not None else -1, answer.outputs))
        for answer in task.answers
    )
    text = json.dumps([[item_id, list(outputs)] for item_id, outputs in pairs], ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class LoggedPredictions:
    """What ``score`` needs to score a logged task as it was run."""

    task: str
    benchmark: str
    predictions: dict  # id -> raw output (a list of outputs for a sampled task)
    options: dict  # data options the run used (lm-eval --metadata: dialect, scale_factor, ...)
    incomplete: str | None = None  # the samples file holds fewer items than the run recorded


def logged_predictions(path: str, name: str) -> LoggedPredictions:
    """The raw outputs of one task of ours logged at ``path`` (an lm-eval output folder, model
    folder, results or samples file): task ``name``, or the one task of benchmark ``name``."""
    return _one_task(_one_submission(path), path, name)


def logged_runs(path: str, name: str) -> list[LoggedPredictions]:
    """:func:`logged_predictions` of ``name``, or, when ``name`` is an lm-eval group of ours
    (``logiccat``) and the run logged every one of its tasks (``lm_eval --tasks logiccat``),
    one per task of the group, in the group's order."""
    submission = _one_submission(path)
    members = task_groups().get(name, ())
    logged = {task.name: task for task in submission.tasks if task.name in members}
    if members and len(logged) == len(members):
        specs = task_specs()
        return [_predictions_of(logged[member], specs[member]) for member in members]
    return [_one_task(submission, path, name)]


def _one_submission(path: str) -> Submission:
    submissions = read_submissions(path)
    if len(submissions) != 1:
        raise UserError(f"{path} holds {len(submissions)} models; pass one model folder")
    return submissions[0]


def _one_task(submission: Submission, path: str, name: str) -> LoggedPredictions:
    specs = task_specs()
    tasks = [t for t in submission.tasks if t.name == name or specs[t.name].benchmark == name]
    if len(tasks) != 1:
        shown = ", ".join(t.name for t in submission.tasks)
        raise UserError(
            f"{path}: {'no' if not tasks else 'several'} logged task(s) of {name!r} "
            f"(logged: {shown}); name the task, e.g. `score {submission.tasks[0].name} {path}`"
        )
    (task,) = tasks
    return _predictions_of(task, specs[task.name])


def _predictions_of(task: LoggedTask, spec) -> LoggedPredictions:
    predictions: dict = {}
    for answer in task.answers:
        if answer.item_id is None:
            raise UserError(f"{answer.where}: the logged document has no id")
        if answer.item_id in predictions:
            raise UserError(f"{answer.where}: id {answer.item_id} is logged more than once")
        outputs = list(answer.outputs) or [""]
        predictions[answer.item_id] = outputs if spec.sampled else outputs[0]
    return LoggedPredictions(
        task.name, spec.benchmark, predictions, data_options(task), task.incomplete
    )


def data_options(task: LoggedTask) -> dict:
    """The data options a logged task was run with (its config's metadata)."""
    metadata = task.config.get("metadata") or {}
    return {name: metadata[name] for name in DATA_OPTIONS if metadata.get(name) is not None}


__all__ = [
    "LoggedAnswer",
    "LoggedPredictions",
    "LoggedTask",
    "Submission",
    "data_options",
    "logged_predictions",
    "logged_runs",
    "outputs_fingerprint",
    "read_submissions",
    "sha256_file",
]
