"""A small real TPC-DS database for the TPC-DS tests, built once per session.

``tpcds_cache`` (``tests/conftest.py``, shared with the verify tests) is a temporary cache root
holding the database at scale factor 0.01 (a few seconds to build); every test that needs the
database shares it. The default scale factor (1) is only built by the one test marked slow.
``tpcds_postgres`` loads the same sf 0.01 data into the test PostgreSQL server (``prepare tpcds
--engine postgres``), once per session.
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


POSTGRES_DATABASE = "sqlbench_tpcds_sf0_01"


@pytest.fixture(scope="session")
def tpcds_postgres(postgres_admin_url, tpcds_cache):
    """The local manifest of one ``prepare tpcds --engine postgres`` at sf 0.01 into the
    session's cache (the reader's URL is its ``reader_url``); dropped at the end."""
    from sqlbench_lmeval.tpcds import postgres

    manifest = postgres.prepare(postgres_admin_url, tpcds_cache, TEST_SCALE_FACTOR, progress=False)
    yield manifest
    from support.postgres_server import drop_database

    from sqlbench_lmeval.execution import postgres as engine

    engine.close_all()
    postgres.server_manifest.cache_clear()
    drop_database(
        postgres_admin_url,
        POSTGRES_DATABASE,
        roles=(postgres.reader_role(POSTGRES_DATABASE),),
    )
