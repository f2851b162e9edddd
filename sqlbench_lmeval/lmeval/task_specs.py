"""Our lm-eval tasks as this package defines them, read from ``tasks/*/*.yaml`` without lm-eval, for
``verify`` and ``score`` (why, and how ``include:`` and ``!function`` are read:
docs/layout.md#task-definitions-without-lm-eval).

>>> mini_sc = task_spec("logiccat_mini_sc")
>>> mini_sc.benchmark, mini_sc.repeats, mini_sc.sampled, dict(mini_sc.dataset_kwargs)
('logiccat', 8, True, {'subset': 'mini'})
>>> mini_sc.doc_to_text  # from the template it includes, a !function as its dotted name
'sqlbench_lmeval.logiccat.task.doc_to_text'
>>> task_groups()["logiccat"]
('logiccat_physical', 'logiccat_mathematical', 'logiccat_commonsense', 'logiccat_hypothetical')"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import yaml

from sqlbench_lmeval.benchmarks import task_folders
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.paths import tasks_dir

#: Run options (lm-eval ``--metadata``) that choose the data and are taken from a run when its
#: items are rebuilt (by ``verify``; ``score`` records them for it); the others (a cache
#: folder, a server address) are the machine's.
DATA_OPTIONS = ("scale_factor", "dialect", "engine")


@dataclass(frozen=True)
class TaskSpec:
    """One task of ours: what its YAML says, in the terms ``verify`` and ``score`` use."""

    name: str
    benchmark: str  # the ``benchmark:`` of its scoring filter: logiccat or tpcds
    version: str | None  # metadata.version
    dataset_kwargs: Mapping = field(default_factory=dict)  # e.g. {"subset": "mini"}
    metadata: Mapping = field(default_factory=dict)  # e.g. {"dialect": "mysql"}
    generation_kwargs: Mapping = field(default_factory=dict)
    repeats: int = 1
    sampled: bool = False  # several answers per item, scored by voting (the *_sc tasks)
    doc_to_text: str = ""  # dotted name of the prompt function
    metrics: tuple[str, ...] = ()

    @property
    def greedy(self) -> bool:
        """The task asks for greedy decoding (no sampling, temperature 0)."""
        return not self.generation_kwargs.get("do_sample", False)

    @property
    def max_gen_toks(self) -> int | None:
        return self.generation_kwargs.get("max_gen_toks")

    def data_options(self) -> dict:
        """Options of the benchmark's ``load_items`` this task sets (its prompted dialect)."""
        return {"dialect": self.metadata["dialect"]} if self.metadata.get("dialect") else {}

    def prompt_function(self) -> Callable[[dict], str]:
        """The function that turns one of our documents into this task's prompt."""
        module, _, name = self.doc_to_text.rpartition(".")
        return getattr(importlib.import_module(module), name)


class _Loader(yaml.SafeLoader):
    """YAML with lm-eval's ``!function`` tag, read as the dotted name it holds."""


_Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def read_config(path: Path) -> dict:
    """A task YAML file as lm-eval reads it: ``include:`` followed (the including file's keys
    win), ``!function`` kept as its dotted name."""
    with path.open(encoding="utf-8") as stream:
        config = yaml.load(stream, Loader=_Loader) or {}
    parent = config.pop("include", None)
    if parent is None:
        return config
    return {**read_config(path.parent / parent), **config}


@lru_cache(maxsize=1)
def _configs() -> tuple[dict, ...]:
    """Our tasks' configs, then those of the registered benchmarks (``benchmarks.task_folders``)."""
    paths = []
    for folder in (tasks_dir(), *task_folders()):
        paths += sorted(folder.glob("*/*.yaml"))
    return tuple(read_config(path) for path in paths)


@lru_cache(maxsize=1)
def task_specs() -> dict[str, TaskSpec]:
    """Every task of ours by name (groups such as ``logiccat`` are not tasks)."""
    specs = {}
    for config in _configs():
        name = config.get("task")
        if not isinstance(name, str) or "group" in config:
            continue
        filters = [step for entry in config.get("filter_list", []) for step in entry["filter"]]
        function = str(filters[0]["function"]) if filters else ""
        metadata = dict(config.get("metadata") or {})
        specs[name] = TaskSpec(
            name=name,
            benchmark=str(filters[0]["benchmark"]) if filters else "",
            version=None if metadata.get("version") is None else str(metadata["version"]),
            dataset_kwargs=dict(config.get("dataset_kwargs") or {}),
            metadata=metadata,
            generation_kwargs=dict(config.get("generation_kwargs") or {}),
            repeats=int(config.get("repeats", 1)),
            sampled=function.endswith("ExecuteAndScoreSamples"),
            doc_to_text=str(config.get("doc_to_text", "")),
            metrics=tuple(entry["metric"] for entry in config.get("metric_list", [])),
        )
    return specs


@lru_cache(maxsize=1)
def task_groups() -> dict[str, tuple[str, ...]]:
    """Our lm-eval groups and their tasks (``logiccat``: the four category tasks)."""
    return {
        config["group"]: tuple(config["task"])
        for config in _configs()
        if isinstance(config.get("group"), str) and isinstance(config.get("task"), list)
    }


def benchmark_spec(name: str) -> TaskSpec | None:
    """A task that stands for benchmark ``name`` as a whole (what ``score BENCHMARK`` scores):
    the task of that name, or for a group of ours (``logiccat``: its four category tasks) its
    first task over every item (``subset: all``); None when ``name`` is neither."""
    specs = task_specs()
    if name in specs:
        return specs[name]
    for config in _configs():
        if config.get("group") == name and config.get("task"):
            first = specs[config["task"][0]]
            return replace(
                first, name=name, dataset_kwargs={**first.dataset_kwargs, "subset": "all"}
            )
    return None


def task_spec(name: str) -> TaskSpec:
    """The task ``name``; a UserError naming ours otherwise (:func:`unknown_task`)."""
    specs = task_specs()
    if name not in specs:
        raise UserError(unknown_task(name))
    return specs[name]


def unknown_task(name: str) -> str:
    """What to say of a task name that is none of ours: the closest of our groups and tasks
    (difflib's), then all of them, groups first.

    >>> unknown_task("logicat")  # doctest: +ELLIPSIS
    "'logicat' is not a sqlbench-lmeval task or group; did you mean 'logiccat'? Ours: ..."
    """
    groups = list(task_groups())
    names = [*groups, *(task for task in task_specs() if task not in groups)]
    close = difflib.get_close_matches(name, names, n=1)
    guess = f"; did you mean {close[0]!r}?" if close else "."
    listed = [f"{group} (group)" for group in groups] + names[len(groups) :]
    return f"{name!r} is not a sqlbench-lmeval task or group{guess} Ours: {', '.join(listed)}"


__all__ = [
    "TaskSpec",
    "benchmark_spec",
    "read_config",
    "task_groups",
    "task_spec",
    "task_specs",
    "unknown_task",
]
