"""The benchmarks, found by name (:func:`get`), and the :class:`Benchmark` record each benchmark
package's ``benchmark`` module ends with (``BENCHMARK = Benchmark(...)``): the ones we ship
(:data:`NAMES`, ``sqlbench_lmeval.<name>``) and those of packages outside ours that
``$SQLBENCH_LMEVAL_BENCHMARKS`` registers (``name=package,...``: a test's, a user's own); the
execution core and the scoring pipeline never import a benchmark and no benchmark imports
another (what each field must do, and how an outside package is registered:
docs/adding-a-benchmark.md).

>>> logiccat = get("logiccat")
>>> logiccat.name, logiccat.check_engine(None), logiccat.aggregate_metrics is None
('logiccat', 'sqlite', True)
>>> get("tpcds").scoring_hooks().transpile is not None
True
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.scoring.hooks import Hooks
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.translate import Transpile

#: The benchmarks this package ships, each the package ``sqlbench_lmeval.<name>``.
NAMES = ("logiccat", "tpcds")
#: Benchmarks of packages outside ours: ``name=package`` pairs, comma-separated; each package
#: holds ``benchmark.py`` and ``task.py`` as ours do (set it for every process that scores:
#: ``lm_eval``, ``sqlbench-lmeval``; the package must be importable there).
PLUGINS_ENV = "SQLBENCH_LMEVAL_BENCHMARKS"


@dataclass(frozen=True)
class ReferencePoint:
    """A number the benchmark's authors publish (human EX, ...): who scored it, on which metric
    and items, and where it is written."""

    label: str
    metric: str
    value: float
    items: str
    source: str


@dataclass(frozen=True)
class Board:
    """A benchmark's own leaderboard, which scores a test set whose gold it hides: the task of
    ours on that set, the dialect the board executes, the note said beside every number we
    score on that set with our copy of its gold, the records of the board's predictions file
    (``records(queries, cache_dir=, source=)``: ``{id: sql}`` in, the file's records in its
    order out) and which dataset versions are that set (``is_board_data``)."""

    task: str
    dialect: str
    note: str
    records: Callable[..., list[dict]]
    is_board_data: Callable[[str | None], bool]


@dataclass(frozen=True)
class Benchmark:
    """One benchmark's contract with the rest of the package: what it requires (its items, the
    name of its data, building that data, the engines it runs on) and the optional
    hooks scoring, ``score`` and ``complexity`` call when present (None: not offered)."""

    name: str
    load_items: Callable[..., list[Item]]
    dataset_version: Callable[..., str]
    prepare: Callable[..., str]
    check_engine: Callable[[str | None], str]
    engines: tuple[str, ...]
    transpile_prediction: Transpile | None = None
    item_metrics: Callable[[Item, str | None], Mapping[str, float | str | None]] | None = None
    aggregate_metrics: Callable[[Sequence[Mapping]], dict[str, float]] | None = None
    gold_complexity: Callable[..., object] | None = None
    prompt_tail: str = ""
    #: The gold as the benchmark's authors publish it, ``{id: SQL}`` in ``published_dialect``
    #: (``published_gold(cache_dir=None, **options)``), where it differs from the gold we run
    #: (LogicCat's MySQL text); None: the gold we run is the published one.
    published_gold: Callable[..., Mapping[int, str]] | None = None
    published_dialect: str | None = None
    #: Numbers the benchmark's authors publish to place a score beside (the gold card shows them).
    reference_points: tuple[ReferencePoint, ...] = ()
    board: Board | None = None

    def scoring_hooks(self) -> Hooks:
        """What this benchmark adds to scoring (``Scorer.hooks``)."""
        return Hooks(self.item_metrics, self.prompt_tail, self.transpile_prediction)


def packages() -> dict[str, str]:
    """Every benchmark's name -> its package: ours, then those ``$SQLBENCH_LMEVAL_BENCHMARKS``
    registers (a name of ours there is an error, not a replacement).

    >>> packages()["tpcds"]
    'sqlbench_lmeval.tpcds'
    """
    found = {name: f"sqlbench_lmeval.{name}" for name in NAMES}
    entries = (part.strip() for part in os.environ.get(PLUGINS_ENV, "").split(","))
    for entry in filter(None, entries):
        name, _, package = (text.strip() for text in entry.partition("="))
        if not name or not package or name in NAMES:
            raise UserError(
                f"{PLUGINS_ENV}: {entry!r} is not name=package (a package's own name, not one "
                f"of ours: {', '.join(NAMES)})"
            )
        found[name] = package
    return found


def names() -> tuple[str, ...]:
    """The names of every benchmark :func:`get` finds: ours and the registered ones."""
    return tuple(packages())


def get(name: str) -> Benchmark:
    """The :class:`Benchmark` called ``name``; a clear error for an unknown name."""
    found = packages()
    if name not in found:
        raise UserError(f"unknown benchmark {name!r}; choose one of {', '.join(found)}")
    return importlib.import_module(f"{found[name]}.benchmark").BENCHMARK


def gold_note(dataset_version: str | None, among: Sequence[str] | None = None) -> str | None:
    """What must be said beside a number scored on ``dataset_version``: the note of the
    benchmark board whose hidden-gold test set it is, else None. ``among``: the benchmarks
    whose boards are asked (default: every one; a caller that knows whose data it scored names
    that one, and the others' packages are not imported).

    >>> gold_note("logiccat-cb580e87ac17-builder5+split2026-test-b0d082cc109c")
    'local gold of upstream cb580e8; the board scores its hidden gold'
    >>> gold_note("logiccat-cb580e87ac17-builder5+split2026-dev-b0d082cc109c") is None
    True
    """
    for name in names() if among is None else among:
        board = get(name).board
        if board is not None and board.is_board_data(dataset_version):
            return board.note
    return None


def board_of_task(task: str) -> Board:
    """The :class:`Board` whose test set ``task`` is; a UserError naming the tasks that have
    one otherwise."""
    boards = [get(name).board for name in names() if get(name).board is not None]
    for board in boards:
        if board.task == task:
            return board
    raise UserError(
        f"{task!r} is not the test set of a leaderboard with hidden gold; the tasks that are: "
        + ", ".join(board.task for board in boards)
    )


def task_module(name: str) -> ModuleType:
    """The lm-eval hooks of benchmark ``name`` (its package's ``task`` module): its
    ``documents(cache_dir=None, **options)`` and prompt functions."""
    get(name)  # a clear error for an unknown name
    return importlib.import_module(f"{packages()[name]}.task")


def task_folders() -> tuple[Path, ...]:
    """The tasks folders of the registered benchmarks, laid out as ours (``paths.tasks_dir``:
    ``<name>/*.yaml``): each package's ``tasks`` folder, found without importing it."""
    folders = []
    for name, package in packages().items():
        if name in NAMES:
            continue
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise UserError(f"{PLUGINS_ENV}: no package {package!r} can be imported")
        folders.append(Path(next(iter(spec.submodule_search_locations))) / "tasks")
    return tuple(folders)
