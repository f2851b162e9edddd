"""Whether gold's result moved on a perturbed copy (``data_dependence.moved``), kept beside the
gold cache so that a later run need not read gold's results there to know it: an answer whose
text is gold's is judged by these flags alone (it gives gold's result on every copy, so it
changes exactly where gold does).

A flag is keyed by gold's cache key on the copy (``GoldCache.keys``: the copy file's content,
gold's SQL, gold's limits, the engine), whether gold's row order counts, and
``COMPARISON_VERSION`` (the rules ``moved`` compares by). Gold's result on the original needs no
key of its own: the copy is made from the original's content, so the copy's content names it.
Only flags of results that do not depend on the machine are kept (gold finished there), as in
the gold cache.

>>> import tempfile
>>> store = GoldMoves(Path(tempfile.mkdtemp()) / FILE)
>>> keys = [flag_key("gold-key-on-copy-1", True), flag_key("gold-key-on-copy-2", False)]
>>> store.save({keys[0]: True, keys[1]: False})
>>> store.load(set(keys)) == {keys[0]: True, keys[1]: False}
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from sqlbench_lmeval.execution import GoldCache, Job, Limits
from sqlbench_lmeval.execution.record_file import load_derived, save_derived
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION

#: The store's file, beside the gold cache's.
FILE = "gold-moves.sqlite"


def flag_key(gold_key_there: str, ordered: bool) -> str:
    """The key of the flag of gold whose cache key on the copy is ``gold_key_there``."""
    text = json.dumps([COMPARISON_VERSION, gold_key_there, ordered])
    return hashlib.sha256(text.encode()).hexdigest()


def flag_keys(
    gold_cache: GoldCache, gold_jobs: Sequence[Job], limits: Limits, ordered: Sequence[bool]
) -> list[str | None]:
    """:func:`flag_key` of each of ``gold_jobs`` (gold on a copy, under ``limits``) in row order
    ``ordered[i]``; None where the job has no cache key."""
    keys = gold_cache.keys(gold_jobs, limits)
    return [
        None if key is None else flag_key(key, order)
        for key, order in zip(keys, ordered, strict=True)
    ]


class GoldMoves:
    """The flags on disk, by key (an ``execution.record_file`` of JSON ``true``/``false``); a
    damaged file is moved aside and counts as empty (the flags are made again from the gold
    cache)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def beside(cls, gold_cache: GoldCache) -> GoldMoves:
        return cls(Path(gold_cache.root) / FILE)

    def load(self, keys: set[str]) -> dict[str, bool]:
        """Each stored flag of ``keys``."""
        return {key: payload == "true" for key, payload in load_derived(self.path, keys).items()}

    def save(self, flags: Mapping[str, bool]) -> None:
        """Store each flag."""
        if not flags:
            return
        save_derived(self.path, {key: "true" if flag else "false" for key, flag in flags.items()})


__all__ = ["FILE", "GoldMoves", "flag_key", "flag_keys"]
