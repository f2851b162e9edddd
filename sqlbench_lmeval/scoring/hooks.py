"""What a benchmark adds to scoring: the :class:`Hooks` record ``Benchmark.scoring_hooks`` gives.

>>> Hooks().prompt_tail, Hooks().transpile is None
('', True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.translate import Transpile

#: A benchmark's own numbers of one answer: ``item_metrics(item, sql)`` (``sql`` None for an
#: answer with no SQL to measure).
ItemMetrics = Callable[[Item, "str | None"], Mapping[str, "float | str | None"]]


@dataclass(frozen=True)
class Hooks:
    """What a benchmark adds to scoring (``Benchmark.scoring_hooks``): its per-item numbers
    (``item_metrics(item, sql)``), the tail its prompt ends with (the extractor strips an echo
    of it) and its translation of answers asked in another dialect."""

    item_metrics: ItemMetrics | None = None
    prompt_tail: str = ""
    transpile: Transpile | None = None
