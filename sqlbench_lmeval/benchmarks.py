"""The benchmarks we ship, found by name (:func:`get`), and the :class:`Benchmark` record each
``sqlbench_lmeval.<name>.benchmark`` module ends with (``BENCHMARK = Benchmark(...)``); the
execution core and the scoring pipeline never import a benchmark and no benchmark imports
another (what each field must do: docs/adding-a-benchmark.md).

>>> logiccat = get("logiccat")
>>> logiccat.name, logiccat.check_engine(None), logiccat.aggregate_metrics is None
('logiccat', 'sqlite', True)
>>> get("tpcds").scoring_hooks().transpile is not None
True
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.scoring.hooks import Hooks
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.translate import Transpile

NAMES = ("logiccat", "tpcds")


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

    def scoring_hooks(self) -> Hooks:
        """What this benchmark adds to scoring (``Scorer.hooks``)."""
        return Hooks(self.item_metrics, self.prompt_tail, self.transpile_prediction)


def get(name: str) -> Benchmark:
    """The :class:`Benchmark` called ``name``; a clear error for an unknown name."""
    if name not in NAMES:
        raise UserError(f"unknown benchmark {name!r}; choose one of {', '.join(NAMES)}")
    return importlib.import_module(f"sqlbench_lmeval.{name}.benchmark").BENCHMARK


def task_module(name: str) -> ModuleType:
    """The lm-eval hooks of benchmark ``name`` (``sqlbench_lmeval.<name>.task``): its
    ``documents(cache_dir=None, **options)`` and prompt functions."""
    get(name)  # a clear error for an unknown name
    return importlib.import_module(f"sqlbench_lmeval.{name}.task")
