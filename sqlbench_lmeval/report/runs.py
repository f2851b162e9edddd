"""Read model runs into one typed form: a run is one model's scored items, per task, from an
lm-eval ``--output_path`` folder written with ``--log_samples`` or a ``sqlbench-lmeval score``
JSON file (both give the same per-item score dicts); a run argument may be ``NAME=PATH`` (how
folders and files are read: docs/failures.md#reading-lm-eval-run-folders)."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.jsonl import read_objects
from sqlbench_lmeval.scoring.metrics import EX, VES
from sqlbench_lmeval.scoring.scored import ScoredItem, is_number
from sqlbench_lmeval.vocabulary import ScoreStatus

#: Status of an item rebuilt from lm-eval's top-level metrics when its score dict is unreadable.
UNKNOWN_STATUS = ScoreStatus.UNKNOWN


@dataclass(frozen=True)
class TaskResult:
    """The items of one task (or of a group of tasks) in one run."""

    name: str
    items: tuple[ScoredItem, ...]
    comparison_version: str | None = None
    dataset_version: str | None = None
    engine: str | None = None  # where the SQL ran (sqlite, duckdb, mysql); None: not recorded
    # Ids of items left out because their gold did not finish (status ``excluded``): in no
    # item list and no mean, counted apart.
    excluded: tuple[int, ...] = ()


@dataclass(frozen=True)
class Run:
    """One model's results: its tasks, and lm-eval groups over them (name, leaf task names)."""

    name: str
    source: str
    tasks: tuple[TaskResult, ...]
    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    notes: tuple[str, ...] = ()  # what a reader must know about how the run was read

    @property
    def comparison_version(self) -> str | None:
        """The one comparison version of every item (reading refuses runs that mix them)."""
        versions = {task.comparison_version for task in self.tasks} - {None}
        return next(iter(versions)) if versions else None

    def views(self) -> dict[str, TaskResult]:
        """Every reportable unit by name: each group (items of its tasks), then each task.

        A group whose tasks share item ids is left out: its items could not be paired by id.
        """
        return dict(self._views)

    @cached_property
    def _views(self) -> dict[str, TaskResult]:
        by_name = {task.name: task for task in self.tasks}
        views: dict[str, TaskResult] = {}
        for group, members in self.groups:
            present = [by_name[name] for name in members if name in by_name]
            items = tuple(item for task in present for item in task.items)
            if not present or len({item.id for item in items}) != len(items):
                continue
            views[group] = TaskResult(
                name=group,
                items=items,
                comparison_version=_joined(task.comparison_version for task in present),
                dataset_version=_joined(task.dataset_version for task in present),
                engine=_joined(task.engine for task in present),
                excluded=tuple(i for task in present for i in task.excluded),
            )
            for task in present:
                views.setdefault(task.name, task)
        for task in self.tasks:
            views.setdefault(task.name, task)
        return views


def read_runs(specs: Iterable[str]) -> list[Run]:
    """Every run named by ``specs`` (``PATH`` or ``NAME=PATH``); run names must be unique."""
    runs: list[Run] = []
    for spec in specs:
        runs.extend(read_run(spec))
    seen: dict[str, str] = {}
    for run in runs:
        if run.name in seen:
            raise UserError(
                f"two runs are named {run.name!r} ({seen[run.name]} and {run.source}); "
                "name them with NAME=PATH"
            )
        seen[run.name] = run.source
    if not runs:
        raise UserError("no runs given")
    return runs


def read_run(spec: str) -> list[Run]:
    """The run(s) at ``spec``: a score JSON, an lm-eval results JSON, a model folder, or an
    lm-eval output folder (one run per model subfolder)."""
    name, path = split_spec(spec)
    if not path.exists():
        raise UserError(f"run {spec!r}: {path} does not exist")
    if path.is_file():
        if path.suffix == ".jsonl" and path.name.startswith("samples_"):
            return [_read_lmeval_folder(path.parent, name, chosen=path)]
        data = load_json(path)
        if isinstance(data, dict) and "items" in data and "task" in data:
            return [_read_score_file(path, data, name)]
        if isinstance(data, dict) and "results" in data:
            return [_read_lmeval_folder(path.parent, name, chosen=path)]
        raise UserError(
            f"{path}: neither a `sqlbench-lmeval score` output nor an lm-eval results file"
        )
    return [_read_lmeval_folder(model, name) for model in model_folders(path, name)]


def model_folders(path: Path, name: str | None = None) -> list[Path]:
    """The lm-eval model folders at ``path``: itself when it holds results or samples, else
    its subfolders that do (an ``--output_path`` folder); one only when the run is ``name``d."""
    if lmeval_files(path):
        return [path]
    models = sorted(child for child in path.iterdir() if child.is_dir() and lmeval_files(child))
    if not models:
        raise UserError(
            f"{path}: no lm-eval results or samples found (run lm_eval with "
            "--output_path DIR --log_samples and pass DIR or DIR/<model>)"
        )
    if name is not None and len(models) > 1:
        shown = ", ".join(model.name for model in models)
        raise UserError(f"{path} holds {len(models)} models ({shown}); name each model folder")
    return models


def split_spec(spec: str) -> tuple[str | None, Path]:
    # A path that exists wins over NAME=PATH, so a file name containing "=" still works.
    if Path(spec).exists() or "=" not in spec:
        return None, Path(spec)
    name, _, path = spec.partition("=")
    if not name:
        raise UserError(f"run {spec!r}: empty name before '='")
    return name, Path(path)


def load_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UserError(f"cannot read {path}: {error}") from error


# --- sqlbench-lmeval score output -------------------------------------------------------------


def _read_score_file(path: Path, data: dict, name: str | None) -> Run:
    task = str(data["task"])
    read = []
    for number, score in enumerate(data["items"]):
        try:
            read.append(ScoredItem.from_score(score))
        except (KeyError, TypeError, ValueError) as error:
            raise UserError(f"{path}: item {number} is not a score dict ({error!r})") from error
    item_versions = {item.comparison_version for item in read} - {None}
    version = data.get("comparison_version")
    versions = item_versions | ({version} if version is not None else set())
    result = TaskResult(
        name=task,
        items=tuple(item for item in read if not item.excluded),
        comparison_version=_single_version(versions, f"{path} ({task})"),
        dataset_version=data.get("dataset_version"),
        engine=data.get("engine"),
        excluded=tuple(item.id for item in read if item.excluded),
    )
    return Run(name=name or path.stem, source=str(path), tasks=(result,))


# --- lm-eval output folders --------------------------------------------------------------------


def lmeval_files(folder: Path) -> list[Path]:
    return sorted(
        path
        for pattern in ("results_*.json", "samples_*.jsonl")
        for path in folder.glob(pattern)
        if path.is_file()
    )


def file_timestamp(path: Path) -> str:
    # lm-eval names files <kind>_<task>_<ISO time with ':' -> '-'>: sortable as text.
    return path.stem.rpartition("_")[2]


def samples_task(path: Path) -> str:
    return path.stem[len("samples_") : path.stem.rfind("_")]


@dataclass(frozen=True)
class LoggedFiles:
    """One task's files in an lm-eval model folder: its samples file and the results file of
    the same invocation (``results``: None when the folder has none that names the task)."""

    task: str
    samples: Path
    results: Path | None
    data: Mapping  # that results file, parsed ({} without one)

    @property
    def recorded(self) -> int | None:
        """How many items the invocation ran, as its results file records (``n-samples``)."""
        counts = (self.data.get("n-samples") or {}).get(self.task)
        value = counts.get("effective") if isinstance(counts, Mapping) else None
        return int(value) if is_number(value) else None

    def incomplete(self, logged: int) -> str | None:
        """What to say when the samples file holds fewer items than the run recorded."""
        recorded = self.recorded
        if recorded is None or logged >= recorded:
            return None
        return (
            f"{self.samples}: incomplete run: {logged} of the {recorded} items that its results "
            f"file {self.results.name} records are logged (the file was cut short or copied "
            f"before lm_eval finished); what follows counts the {logged} logged items only"
        )


def lmeval_task_files(
    folder: Path, chosen: Path | None = None
) -> tuple[list[LoggedFiles], list[tuple[Path, dict]]]:
    """The one place that reads an lm-eval model folder: each task's samples file with the
    results file of its invocation, and every results file (path, parsed) in time order.

    ``chosen`` is the file the user named inside ``folder``: a samples file is read alone, a
    results file with the samples files of its invocation (same time stamp). A task logged by
    two samples files (a second lm_eval run with the same ``--output_path``: a full run, then a
    ``--limit`` smoke test) is a UserError naming both and how to choose one: no file is
    picked silently. An empty samples file is a UserError too.
    """
    results_files = sorted(folder.glob("results_*.json"), key=file_timestamp)
    results = [(path, load_json(path)) for path in results_files]
    samples_files = sorted(folder.glob("samples_*.jsonl"), key=file_timestamp)
    if chosen is not None and chosen.name.startswith("samples_"):
        samples_files = [chosen]
    elif chosen is not None:
        samples_files = [p for p in samples_files if file_timestamp(p) == file_timestamp(chosen)]
    if not samples_files:
        raise UserError(
            f"{chosen or folder}: no samples_*.jsonl files; rerun lm_eval with --log_samples "
            "(per-item results are read from them)"
        )
    by_task: dict[str, list[Path]] = {}
    for path in samples_files:
        by_task.setdefault(samples_task(path), []).append(path)
    for task, paths in by_task.items():
        if len(paths) > 1:
            shown = ", ".join(path.name for path in paths)
            raise UserError(
                f"{folder}: task {task!r} is logged by {len(paths)} samples files ({shown}), "
                "runs of lm_eval into the same --output_path; a model folder holds one run of a "
                f"task. Pass the one to read instead of the folder, e.g. {paths[-1]} (or "
                f"NAME={paths[-1]} to name the run), or move the other one away"
            )
    files = []
    for task, (path, *_) in sorted(by_task.items()):
        if _is_empty(path):
            raise UserError(
                f"{path}: empty samples file: lm_eval logged no item of {task!r} here (the run "
                "stopped before it wrote them?); run the task again or remove the file"
            )
        result_path, data = _results_of(results, task, file_timestamp(path))
        files.append(LoggedFiles(task, path, result_path, data))
    return files, results


def _is_empty(path: Path) -> bool:
    """Whether the file holds no line but blank ones (read up to the first that is not)."""
    with path.open("rb") as handle:
        return all(not line.strip() for line in handle)


def _results_of(results, task: str, stamp: str) -> tuple[Path | None, dict]:
    """The results file that belongs to a samples file: the newest one not older than it that
    names the task (lm-eval writes both at the end of one invocation, with one time stamp)."""
    naming = [(path, data) for path, data in results if task in (data.get("configs") or {})]
    same = [(path, data) for path, data in naming if file_timestamp(path) == stamp]
    chosen = same or [(p, d) for p, d in naming if file_timestamp(p) >= stamp] or naming
    return chosen[-1] if chosen else (None, {})


def _read_lmeval_folder(folder: Path, name: str | None, chosen: Path | None = None) -> Run:
    files, results_files = lmeval_task_files(folder, chosen)
    results = [data for _, data in results_files]
    tasks = []
    notes = []
    for logged in files:
        path = logged.samples
        items, excluded, versions, dataset_versions, engines = _read_samples(path)
        if not items and not excluded:  # another project's task run beside ours: not ours
            continue
        note = logged.incomplete(len(items))
        if note is not None:
            notes.append(note)
        tasks.append(
            TaskResult(
                name=logged.task,
                items=items,
                comparison_version=_single_version(versions, f"{path}"),
                dataset_version=_single_version(dataset_versions, f"{path} (dataset version)"),
                engine=_joined(engines),
                excluded=excluded,
            )
        )
    if not tasks:
        shown = ", ".join(str(logged.samples) for logged in files)
        raise UserError(f"{shown}: no scored samples (is this a sqlbench-lmeval task?)")
    tasks.sort(key=lambda task: task.name)
    run = Run(
        name=name or model_name_of(results, folder),
        source=str(folder),
        tasks=tuple(tasks),
        groups=_groups(results, {task.name for task in tasks}),
        notes=tuple(notes),
    )
    _single_version(
        {task.comparison_version for task in tasks} - {None}, f"{folder} (across tasks)"
    )
    return run


def model_name_of(results: list[dict], folder: Path) -> str:
    for data in reversed(results):
        if isinstance(data, dict) and data.get("model_name"):
            return str(data["model_name"])
    return folder.name


def _groups(results: list[dict], tasks: set[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """lm-eval groups whose leaf tasks we have samples for, each with its leaf task names."""
    children: dict[str, list[str]] = {}
    for data in results:
        if isinstance(data, dict):
            children.update(data.get("group_subtasks") or {})

    def leaves(name: str, seen: frozenset[str]) -> list[str]:
        if name in seen:  # a malformed file must not loop forever
            return []
        kids = children.get(name) or []
        if not kids:
            return [name]
        return [leaf for kid in kids for leaf in leaves(kid, seen | {name})]

    groups = []
    for group, kids in children.items():
        if not kids or group in tasks:
            continue
        members = tuple(leaf for leaf in leaves(group, frozenset()) if leaf in tasks)
        if members:
            groups.append((group, members))
    return tuple(groups)


def _read_samples(
    path: Path,
) -> tuple[tuple[ScoredItem, ...], tuple[int, ...], set[str], set[str], set[str]]:
    """Items of one samples file (none: not a task of ours), the ids of items left out because
    their gold did not finish, plus the comparison and dataset versions and the engines they
    carry."""
    by_doc: dict[object, ScoredItem] = {}
    excluded: dict[object, int] = {}
    versions: set[str] = set()
    dataset_versions: set[str] = set()
    engines: set[str] = set()
    for where, sample in read_objects(path, "lm-eval samples"):  # reads lm-eval's bare NaN
        doc = sample.get("doc") or {}
        score = score_dict_of(sample.get("filtered_resps"))
        if score is not None:
            score = dict(score)
            for key, value in _doc_fields(doc).items():
                if score.get(key) in (None, ""):
                    score[key] = value
        else:
            score = _from_metrics(sample, doc)
            if score is None:
                continue  # another filter's line, or a line without our metrics
        for key, value in sample_details(sample, doc).items():
            score.setdefault(key, value)
        if doc.get("dataset_version"):
            dataset_versions.add(str(doc["dataset_version"]))
        if doc.get("engine"):
            engines.add(str(doc["engine"]))
        try:
            item = ScoredItem.from_score(score)
        except (KeyError, TypeError, ValueError) as error:
            raise UserError(f"{where}: no readable score ({error!r})") from error
        if item.comparison_version is not None:
            versions.add(str(item.comparison_version))
        key = sample.get("doc_id", item.id)
        if item.excluded:
            excluded[key] = item.id
            continue
        # With several filters a doc has several lines; the one with a real score dict wins.
        if key not in by_doc or by_doc[key].status == UNKNOWN_STATUS:
            by_doc[key] = item
    left_out = tuple(i for key, i in excluded.items() if key not in by_doc)
    return tuple(by_doc.values()), left_out, versions, dataset_versions, engines


def _doc_fields(doc: Mapping) -> dict:
    """What a doc knows that a score dict may lack (older score dicts had no category)."""
    fields = {"id": doc.get("id"), "category": doc.get("category") or None}
    if doc.get("gold_status"):
        fields["gold_status"] = doc["gold_status"]
    return {key: value for key, value in fields.items() if value is not None}


def sample_details(sample: Mapping, doc: Mapping) -> dict:
    """The question, gold SQL, database (LogicCat: its id and schema), prompt and raw answer
    a samples line records."""
    details = {key: doc.get(key) for key in ("question", "gold_sql", "db_path", "db_id", "schema")}
    # lm-eval logs a request's arguments as {"gen_args_0": {"arg_0": prompt, "arg_1": ...}}.
    arguments = sample.get("arguments")
    first = next(iter(arguments.values()), None) if isinstance(arguments, dict) else None
    if isinstance(first, dict):
        details["prompt"] = first.get("arg_0")
    responses = sample.get("resps")
    while isinstance(responses, (list, tuple)) and responses:
        responses = responses[0]
    details["raw_output"] = responses if isinstance(responses, str) else None
    return {key: value for key, value in details.items() if isinstance(value, str)}


def _from_metrics(sample: Mapping, doc: Mapping) -> dict | None:
    """A score rebuilt from lm-eval's top-level metric values, when ``filtered_resps`` is not
    our score dict; None when the line has no EX at all."""
    if EX not in sample or VES not in sample or "id" not in doc:
        return None
    score = {
        name: value
        for name, value in sample.items()
        if is_number(value) and name not in ("doc_id",)
    }
    score.update(_doc_fields(doc))
    score["status"] = UNKNOWN_STATUS
    return score


def score_dict_of(filtered) -> dict | None:
    """Our score dict from a samples line's ``filtered_resps`` (a list holding a dict, its
    Python repr, or that nested once more); None when it holds anything else."""
    while isinstance(filtered, list) and len(filtered) == 1:
        filtered = filtered[0]
    if isinstance(filtered, str):
        try:
            filtered = parse_python_literal(filtered)
        except (SyntaxError, ValueError, RecursionError):
            return None
    if isinstance(filtered, dict) and "status" in filtered and EX in filtered:
        return filtered
    return None


def parse_python_literal(text: str):
    """``ast.literal_eval`` that also reads ``nan`` and ``inf`` (as ``str(dict)`` writes them)."""
    return _literal(ast.parse(text.strip(), mode="eval").body)


def _literal(node: ast.AST):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {
            _literal(key): _literal(value)
            for key, value in zip(node.keys, node.values, strict=True)
        }
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(element) for element in node.elts]
    if isinstance(node, ast.Name) and node.id in ("nan", "inf"):
        return float(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand)
        if is_number(value):
            return -value if isinstance(node.op, ast.USub) else value
    raise ValueError(f"not a literal: {ast.dump(node)[:80]}")


# --- small helpers -----------------------------------------------------------------------------


def _single_version(versions: set, where: str) -> str | None:
    versions = {str(version) for version in versions if version is not None}
    if len(versions) > 1:
        raise UserError(f"{where}: items carry different versions ({', '.join(sorted(versions))})")
    return next(iter(versions)) if versions else None


def _joined(values: Iterable[str | None]) -> str | None:
    distinct = sorted({value for value in values if value is not None})
    return ", ".join(distinct) if distinct else None


__all__ = [
    "LoggedFiles",
    "Run",
    "TaskResult",
    "file_timestamp",
    "lmeval_files",
    "lmeval_task_files",
    "load_json",
    "model_folders",
    "model_name_of",
    "parse_python_literal",
    "read_run",
    "read_runs",
    "sample_details",
    "samples_task",
    "score_dict_of",
    "split_spec",
]
