"""Tie-aware EX on MariaDB: gold and its probe run on the server, MySQL's LIMIT forms."""

from __future__ import annotations

import pytest
from support.ties import verdict

pytestmark = pytest.mark.mysql


def test_mariadb_cut_through_ties(mysql_attack_server):
    # t(a, b, c) holds a = 0..99 and c = a / 10: ORDER BY FLOOR(c) LIMIT 3 cuts through the
    # ten rows with c in [0, 1); LIMIT 5, 3 (MySQL's offset form) through the same group.
    database = mysql_attack_server.database()
    gold = "SELECT a FROM t ORDER BY FLOOR(c) LIMIT 3"
    assert verdict(database, gold, "SELECT a FROM t WHERE a IN (9, 4, 7)")["ex"]
    assert not verdict(database, gold, "SELECT a FROM t WHERE a IN (9, 4, 17)")["ex"]
    offset = "SELECT a FROM t ORDER BY FLOOR(c) LIMIT 5, 3"
    assert verdict(database, offset, "SELECT a FROM t WHERE a IN (0, 1, 2)")["ex"]
