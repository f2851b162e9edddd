"""Tie-aware EX on PostgreSQL: gold and its probe run on the server, through ``score_items``."""

from __future__ import annotations

import pytest
from support.ties import verdict

pytestmark = pytest.mark.postgres


def test_postgres_cut_through_ties(postgres_attack_server):
    # t(a, b, c) holds a = 0..99 and c = a / 10: ORDER BY FLOOR(c) LIMIT 3 cuts through the
    # ten rows with c in [0, 1); OFFSET 5 through the same group.
    database = postgres_attack_server.database()
    gold = "SELECT a FROM t ORDER BY FLOOR(c) LIMIT 3"
    assert verdict(database, gold, "SELECT a FROM t WHERE a IN (9, 4, 7)")["ex"]
    assert not verdict(database, gold, "SELECT a FROM t WHERE a IN (9, 4, 17)")["ex"]
    offset = "SELECT a FROM t ORDER BY FLOOR(c) LIMIT 3 OFFSET 5"
    assert verdict(database, offset, "SELECT a FROM t WHERE a IN (0, 1, 2)")["ex"]
    assert not verdict(database, offset, "SELECT a FROM t WHERE a IN (0, 1, 10)")["ex"]
