"""Shared fixtures for the LogicCat data tests.

- ``fixture_source``: the hand-written fixture (``fixtures/logiccat/shared_layout``) as a
  verified :class:`Source`, with a checksum table computed from its own files;
- ``fixture_bundle``: that source built once per session into a temporary cache;
- ``real_bundle``: the real upstream data (``$SQLBENCH_LMEVAL_LOGICCAT_SOURCE``, else
  ``../shared/logiccat``) built once per session by the shared ``logiccat_cache`` fixture of
  ``tests/conftest.py``; skipped, with the reason shown, when there is no upstream copy.
  Building it takes 30-60 s, so tests using it are marked slow.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sqlbench_lmeval.data.checksums import sha256_file
from sqlbench_lmeval.logiccat import bundle, source
from sqlbench_lmeval.logiccat.mysql_functions import install

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logiccat"
LAYOUT = FIXTURES / "shared_layout"
ARCHIVE = FIXTURES / "upstream-archive.tar.gz"
FIXTURE_COMMIT = "0123456789abcdef0123456789abcdef01234567"
FIXTURE_DB = "chargingnet"


def checksums_of(root: Path) -> dict[str, str]:
    """The checksum table of a LogicCat-shaped folder: its dumps, .sqlite files and data.sql."""
    files = [*root.glob("MySQL/database/*.sql"), *root.glob("Sqlite/database/*.sqlite")]
    files.append(root / "MySQL" / "data.sql")
    return {path.relative_to(root).as_posix(): sha256_file(path) for path in files}


def source_of(root: Path) -> source.Source:
    return source.locate(root, checksums=checksums_of(root), commit=FIXTURE_COMMIT)


@pytest.fixture(scope="session")
def fixture_source() -> source.Source:
    return source_of(LAYOUT)


@pytest.fixture(scope="session")
def source_from():
    """:func:`source_of`: a LogicCat-shaped folder (e.g. an edited copy of the fixture) as a
    verified :class:`Source` with its own checksum table."""
    return source_of


@pytest.fixture(scope="session")
def fixture_bundle(fixture_source, tmp_path_factory) -> bundle.Bundle:
    cache = tmp_path_factory.mktemp("logiccat-fixture-cache")
    return bundle.build_bundle(fixture_source, cache, progress=False, workers=0)


@pytest.fixture(scope="session")
def real_bundle(logiccat_cache) -> bundle.Bundle:
    """The real bundle, built once per session by the shared ``logiccat_cache`` fixture."""
    return bundle.load_bundle(logiccat_cache)


@pytest.fixture
def mysql_conn():
    """An in-memory SQLite connection with the MySQL functions and the frozen clock."""
    conn = sqlite3.connect(":memory:")
    install(conn)
    yield conn
    conn.close()


@pytest.fixture
def fixture_db(fixture_bundle):
    """The fixture database, opened read-only with the MySQL functions."""
    path = fixture_bundle.database_path(FIXTURE_DB)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    install(conn)
    yield conn
    conn.close()
