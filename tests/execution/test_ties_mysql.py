"""Tie-aware EX on MariaDB: gold and its probe run on the server, MySQL's LIMIT forms (the
body, shared with PostgreSQL's module, is ``support.ties.check_cut_through_ties``)."""

from __future__ import annotations

import pytest
from support.ties import check_cut_through_ties

pytestmark = pytest.mark.mysql


def test_mariadb_cut_through_ties(mysql_attack_server):
    # LIMIT 5, 3: MySQL's offset form.
    offset = "SELECT a FROM t ORDER BY FLOOR(c) LIMIT 5, 3"
    check_cut_through_ties(mysql_attack_server.database(), offset)
