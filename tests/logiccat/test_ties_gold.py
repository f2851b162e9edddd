"""Tie-aware EX over every LogicCat gold query on SQLite (the real bundle: slow): gold's own
full result with its tied rows chosen and ordered otherwise scores EX 1, a row from outside
the tied groups swapped in scores 0 (``support.ties.check_gold``, seeded)."""

from __future__ import annotations

import pytest
from support.ties import check_gold

from sqlbench_lmeval.logiccat.benchmark import items_from_bundle

pytestmark = pytest.mark.slow


def test_every_logiccat_gold(real_bundle):
    seen = check_gold(items_from_bundle(real_bundle))
    assert seen["with_ties"] and seen["outsiders"]  # both properties were exercised
