"""The benchmarks we ship, found by name.

Each benchmark is a module ``sqlbench_lmeval.<name>.benchmark`` that provides

- ``load_items(cache_dir=None, **options) -> list[scoring.Item]`` (builds data on first use),
- ``dataset_version(cache_dir=None, **options) -> str`` naming the exact data scored,
- optionally ``item_metrics(item, sql) -> dict[str, float]`` for numbers beyond execution
  (TPC-DS structural similarity),
- optionally ``aggregate_metrics(scores) -> dict`` for run-level numbers beyond the means of
  per-item numbers (TPC-DS: means over parseable predictions, the paper's Table 1 ratios),
- optionally ``gold_complexity(**options)``, the complexity of its gold SQL without building
  any database (``sqlbench-lmeval complexity``),
- optionally ``PROMPT_TAIL``, the text our prompt ends with (see ``extract.extract_sql``).

The engine never imports a benchmark; the CLI and the lm-eval hooks go through here.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from sqlbench_lmeval.errors import UserError

NAMES = ("logiccat", "tpcds")


def benchmark_module(name: str) -> ModuleType:
    """The module of benchmark ``name``; a clear error for an unknown name."""
    if name not in NAMES:
        raise UserError(f"unknown benchmark {name!r}; choose one of {', '.join(NAMES)}")
    return importlib.import_module(f"sqlbench_lmeval.{name}.benchmark")
