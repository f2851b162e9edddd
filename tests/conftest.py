"""Fixtures shared across test folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SOURCE_ENV = "SQLBENCH_LMEVAL_LOGICCAT_SOURCE"


def logiccat_source() -> Path:
    """The upstream LogicCat files (``$SQLBENCH_LMEVAL_LOGICCAT_SOURCE``, else ../shared)."""
    candidates = [os.environ.get(SOURCE_ENV), REPO.parent / "shared" / "logiccat"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "MySQL").is_dir():
            return Path(candidate)
    pytest.skip(
        f"no upstream LogicCat files: set {SOURCE_ENV} to a folder laid out like ../shared/logiccat"
    )


@pytest.fixture(scope="session")
def logiccat_cache(tmp_path_factory) -> Path:
    """A cache root holding the LogicCat bundle built from the real upstream files, once."""
    from sqlbench_lmeval.logiccat.bundle import build_bundle

    cache = tmp_path_factory.mktemp("logiccat-cache")
    build_bundle(source=logiccat_source(), cache_dir=cache, progress=False)
    return cache


@pytest.fixture(scope="session")
def mysql_admin_url():
    """Admin URL of a MySQL-protocol server (see tests/support/mysql_server.py), or a skip."""
    from support.mysql_server import admin_url_or_skip

    url, private = admin_url_or_skip()
    yield url
    if private is not None:
        private.stop()


#: Scale factor of the TPC-DS database the tests share (a few seconds to build).
TPCDS_SCALE_FACTOR = 0.01


@pytest.fixture(scope="session")
def tpcds_cache(tmp_path_factory) -> Path:
    """A cache root with the TPC-DS database at ``TPCDS_SCALE_FACTOR`` built in it, once."""
    from sqlbench_lmeval.tpcds.data import ensure_database

    root = tmp_path_factory.mktemp("tpcds-cache")
    ensure_database(root, TPCDS_SCALE_FACTOR)
    return root


@pytest.fixture(scope="session")
def tpcds_items(tpcds_cache):
    """The 99 TPC-DS items over that database."""
    from sqlbench_lmeval.tpcds.benchmark import load_items

    return load_items(cache_dir=tpcds_cache, scale_factor=TPCDS_SCALE_FACTOR)
