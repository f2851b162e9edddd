"""The benchmarks we ship, found by name.

Each benchmark is a module ``sqlbench_lmeval.<name>.benchmark`` that provides

- ``load_items(cache_dir=None, dialect=None, **options) -> list[scoring.item.Item]`` (builds data on
  first use); ``dialect`` (a sqlglot name, checked with ``dialects.check_dialect``) sets each
  item's ``prediction_dialect``, the dialect the prompt asks for (default: the engine's own),
- ``dataset_version(cache_dir=None, **options) -> str`` naming the exact data scored,
- ``prepare(cache_dir=None, **options) -> str``: builds the data ahead of time (or loads it
  into a server and sets up its read-only account) and returns the summary to show
  (``sqlbench-lmeval prepare NAME``; options: the data options of ``load_items`` and
  ``force``, ``reload``, ``rotate_reader``, ``workers``; one that does not apply to the chosen
  engine is a ``UserError``, never ignored),
- ``check_engine(engine) -> str``: the engine it runs on (default: its embedded one), or a
  ``UserError`` for an engine it does not run on,
- optionally ``transpile_prediction(item, sql) -> str``: ``sql``, written in
  ``item.prediction_dialect``, in the engine's dialect ``item.dialect``; it raises when it
  cannot (the item then scores status ``error``, reason ``transpile_error``). Called only when
  the two dialects differ; without it such an item fails the same way (see ``dialects``),
- optionally ``item_metrics(item, sql) -> dict[str, float | str]`` for numbers beyond execution
  (TPC-DS structural similarity), from the extracted ``sql`` as written (in the prompted
  dialect); a string value (e.g. ``parsed_dialect``) goes to the sample log, never into a mean,
- optionally ``aggregate_metrics(scores) -> dict`` for run-level numbers beyond the means of
  per-item numbers (TPC-DS: means over parseable predictions, the paper's Table 1 ratios),
- optionally ``gold_complexity(**options)``, the complexity of its gold SQL without building
  any database (``sqlbench-lmeval complexity``),
- optionally ``PROMPT_TAIL``, the text our prompt ends with (see ``extract.extract_sql``).

Beside it, ``sqlbench_lmeval.<name>.task`` holds the lm-eval side (``documents`` and the prompt
functions the task YAML names). The execution core and the scoring pipeline never import a
benchmark, and no benchmark imports another; the CLI, ``offline`` and the lm-eval hooks go
through here (:func:`scoring_hooks` hands the optional hooks to
``scoring.pipeline.score_items``).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from sqlbench_lmeval.errors import UserError

NAMES = ("logiccat", "tpcds")

#: What every benchmark module defines (the rest of the protocol above is optional).
REQUIRED = ("load_items", "dataset_version", "prepare", "check_engine")


def benchmark_module(name: str) -> ModuleType:
    """The module of benchmark ``name``; a clear error for an unknown name."""
    if name not in NAMES:
        raise UserError(f"unknown benchmark {name!r}; choose one of {', '.join(NAMES)}")
    return importlib.import_module(f"sqlbench_lmeval.{name}.benchmark")


def task_module(name: str) -> ModuleType:
    """The lm-eval hooks of benchmark ``name`` (``sqlbench_lmeval.<name>.task``): its
    ``documents(cache_dir=None, **options)`` and prompt functions."""
    benchmark_module(name)  # a clear error for an unknown name
    return importlib.import_module(f"sqlbench_lmeval.{name}.task")


def scoring_hooks(module: ModuleType) -> dict:
    """The keyword arguments of ``scoring.pipeline.score_items`` a benchmark module supplies."""
    return {
        "item_metrics": getattr(module, "item_metrics", None),
        "prompt_tail": getattr(module, "PROMPT_TAIL", ""),
        "transpile": getattr(module, "transpile_prediction", None),
    }
