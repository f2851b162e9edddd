"""Tie-aware EX on PostgreSQL: gold and its probe run on the server, through ``Scorer.score``
(the body, shared with MariaDB's module, is ``support.ties.check_cut_through_ties``)."""

from __future__ import annotations

import pytest
from support.ties import check_cut_through_ties

pytestmark = pytest.mark.postgres


def test_postgres_cut_through_ties(postgres_attack_server):
    offset = "SELECT a FROM t ORDER BY FLOOR(c) LIMIT 3 OFFSET 5"
    check_cut_through_ties(postgres_attack_server.database(), offset)
