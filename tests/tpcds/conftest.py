"""A small real TPC-DS database for the TPC-DS tests, built once per session.

``tpcds_cache`` (``tests/conftest.py``, shared with the verify tests) is a temporary cache root
holding the database at scale factor 0.01 (a few seconds to build); every test that needs the
database shares it. The default scale factor (1) is only built by the one test marked slow.
"""

from __future__ import annotations

import pytest
from conftest import TPCDS_SCALE_FACTOR as TEST_SCALE_FACTOR

from sqlbench_lmeval.tpcds.data import ensure_database


@pytest.fixture(scope="session")
def tpcds_manifest(tpcds_cache):
    return ensure_database(tpcds_cache, TEST_SCALE_FACTOR)


@pytest.fixture(scope="session")
def postgres_gold():
    """Each gold query as sqlglot's PostgreSQL writer writes it (what a PostgreSQL author could
    submit); translated back to DuckDB it must return gold's result (tests of ``dialect``)."""
    import sqlglot

    from sqlbench_lmeval.tpcds.data import gold_queries

    return {
        number: sqlglot.transpile(sql, read="duckdb", write="postgres")[0]
        for number, sql in gold_queries().items()
    }
