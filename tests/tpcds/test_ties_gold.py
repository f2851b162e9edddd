"""Tie-aware EX over every TPC-DS gold query on DuckDB (the scale-factor 0.01 test database):
gold's own full result with tied rows chosen and ordered otherwise scores EX 1, a row from
outside the tied groups swapped in scores 0 (``support.ties.check_gold``, seeded)."""

from __future__ import annotations

from support.ties import check_gold


def test_every_tpcds_gold(tpcds_items):
    seen = check_gold(tpcds_items)
    assert seen["outsiders"]  # the swap property was exercised
