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


@pytest.fixture(scope="session")
def postgres_admin_url():
    """Admin URL of a PostgreSQL server (see tests/support/postgres_server.py), or a skip."""
    from support.postgres_server import admin_url_or_skip

    url, private = admin_url_or_skip()
    yield url
    if private is not None:
        private.stop()
