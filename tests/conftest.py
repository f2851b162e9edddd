"""Fixtures shared across test folders."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.scheduling import FIRST_GROUPS, server_group_used, xdist_group_of

from sqlbench_lmeval.lmeval.discovery import ONLY_OURS_ENV

REPO = Path(__file__).resolve().parent.parent
SOURCE_ENV = "SQLBENCH_LMEVAL_LOGICCAT_SOURCE"

# Every lm_eval run of the suite runs our tasks alone, so lm-eval's ~14,700 built-in task names
# stay out of its index: ~11 s of CPU less per run (sqlbench_lmeval.lmeval.discovery). The runs
# that prove the default path put them back: the fresh virtualenvs of
# tests/lmeval/test_discovery.py and the README command of tests/e2e/test_hf_model.py.
os.environ.setdefault(ONLY_OURS_ENV, "1")

# The suite's two pytest-xdist workers get tests by group: tests/support/scheduling.py says
# which and why.


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # a hook of pytest-xdist
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        """pytest-xdist's scope scheduling, the scope being :func:`xdist_group_of`."""

        def _split_scope(self, nodeid: str) -> str:
            return xdist_group_of(nodeid)

    # Groups in the order the workers collected them (see FIRST_GROUPS), not by test count.
    config.option.loadscopereorder = False
    return ByGroup(config, log)


def pytest_collection_modifyitems(config, items):
    misplaced = sorted(
        f"{item.nodeid} (uses the {group} server)"
        for item in items
        if (group := server_group_used(item)) is not None and xdist_group_of(item.nodeid) != group
    )
    if misplaced:
        raise pytest.UsageError(
            "tests on a shared test server outside its group; list their modules in "
            f"SERVER_MODULES (tests/conftest.py): {', '.join(misplaced[:10])}"
            + (f" and {len(misplaced) - 10} more" if len(misplaced) > 10 else "")
        )

    slow_modules = {
        item.nodeid.split("::", 1)[0] for item in items if item.get_closest_marker("slow")
    }

    def start_rank(item) -> int:
        group = xdist_group_of(item.nodeid)
        if group in FIRST_GROUPS:
            return FIRST_GROUPS.index(group)
        return len(FIRST_GROUPS) + (0 if group in slow_modules else 1)

    items.sort(key=start_rank)  # stable: each group keeps its tests' order


def logiccat_source() -> Path:
    """The upstream LogicCat files (``$SQLBENCH_LMEVAL_LOGICCAT_SOURCE``, else ../shared)."""
    candidates = [os.environ.get(SOURCE_ENV), REPO.parent / "shared" / "logiccat"]
    for candidate in candidates:
        if candidate and (Path(candidate) / "MySQL").is_dir():
            return Path(candidate)
    pytest.skip(
        f"no upstream LogicCat files: set {SOURCE_ENV} to a folder laid out like ../shared/logiccat"
    )


def shared_folder(tmp_path_factory, name: str) -> Path:
    """A temporary folder that every worker of this run gets (one per session without xdist).

    For caches whose builds hold the cache folder's build lock (``build_lock``): the first
    worker builds, the other waits for the lock and finds the result built."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return tmp_path_factory.mktemp(name)
    folder = tmp_path_factory.getbasetemp().parent / name  # the run's folder, above the workers'
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def logiccat_cache(tmp_path_factory) -> Path:
    """A cache root holding the LogicCat bundle built from the real upstream files, once per
    run (shared by the workers)."""
    from sqlbench_lmeval.logiccat.benchmark import items_from_bundle
    from sqlbench_lmeval.logiccat.bundle import build_bundle

    cache = shared_folder(tmp_path_factory, "logiccat-cache")
    built = build_bundle(source=logiccat_source(), cache_dir=cache, progress=False)
    _with_perturbed_copies(item.database for item in items_from_bundle(built))
    return cache


def _with_perturbed_copies(databases) -> None:
    """Build the perturbed copies of each database (``execution.perturbed``) now, in the fixture
    that made the shared cache: scoring would build them lazily inside the cache, while tests on
    other workers copy that cache folder (a copy taken mid-build would hold a half-built file or
    lose one that is renamed away)."""
    from sqlbench_lmeval.execution.perturbed import perturbed_databases

    for database in dict.fromkeys(databases):
        perturbed_databases(database)


@pytest.fixture(scope="session")
def hf_python(tmp_path_factory) -> Path:
    """An interpreter that runs ``lm_eval --model hf`` (``support.hf_python``: the suite's own
    where it imports torch, else a virtualenv made once per run), or a skip saying why."""
    from support.hf_python import hf_python as made_in

    return made_in(shared_folder(tmp_path_factory, "hf-python"))


@pytest.fixture(scope="session")
def mysql_admin_url():
    """Admin URL of a MySQL-protocol server (see tests/support/mysql_server.py), or a skip.

    ``$SQLBENCH_LMEVAL_MYSQL_URL`` (the URL evaluations run under) is kept out of the session:
    the tests name their servers and accounts themselves."""
    from support.mysql_server import admin_url_or_skip

    from sqlbench_lmeval.logiccat.server import URL_ENV

    yield from _session_server(admin_url_or_skip, URL_ENV)


@pytest.fixture(scope="session")
def mysql_server(mysql_admin_url):
    """That server as it reports itself: port, unix socket, bind address, secure_file_priv."""
    from support.mysql_server import describe

    return describe(mysql_admin_url)


@pytest.fixture(scope="session")
def mysql_defaults_admin_url():
    """Admin URL of a server made by ``mariadb-install-db`` with its defaults, or a skip."""
    from support.mysql_server import admin_url_or_skip

    url, private = admin_url_or_skip(defaults=True)
    yield url
    if private is not None:
        private.stop()


@dataclass(frozen=True)
class PreparedServer:
    """The session's server after one real ``prepare logiccat --engine mysql`` (the CLI) into
    the session's ``logiccat_cache``: machine A of the many-machines tests, and the server of
    every test that needs LogicCat on MySQL (prepare is idempotent: a test that runs it again
    verifies and reloads nothing)."""

    admin_url: str
    cache: Path
    manifest: dict  # this cache's record (mysql-server.json)
    document: dict  # what prepare stored on the server (gold health, databases, ...)
    option_file: Path  # the reader's user and password, owner-only
    reader_password: str
    prepare_output: str

    @property
    def reader_url(self) -> str:
        """The reader's URL as this cache holds it (the password in the option file)."""
        return self.manifest["reader_url"]

    def reader_url_with_password(self, host: str | None = None) -> str:
        """The reader's URL with its password in it, as an operator hands it to a machine."""
        from sqlbench_lmeval.execution.mysql import parse_url

        address = parse_url(self.admin_url)
        return (
            f"mysql://logiccat_reader:{self.reader_password}@{host or address.host}:{address.port}"
        )


@pytest.fixture(scope="session")
def mysql_prepared(mysql_admin_url, logiccat_cache) -> PreparedServer:
    import contextlib
    import io

    from sqlbench_lmeval.cli import main
    from sqlbench_lmeval.logiccat import server

    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = main(
            ["prepare", "logiccat", "--engine", "mysql", "--url", mysql_admin_url]
            + ["--source", str(logiccat_source()), "--cache-dir", str(logiccat_cache)]
        )
    assert code == 0, output.getvalue()
    option_file = server.manifest_dir(logiccat_cache) / server.READER_OPTION_FILE
    return PreparedServer(
        admin_url=mysql_admin_url,
        cache=logiccat_cache,
        manifest=server.read_manifest(logiccat_cache),
        document=server.server_run(cache_dir=logiccat_cache).document,
        option_file=option_file,
        reader_password=server.read_option_password(option_file),
        prepare_output=output.getvalue(),
    )


#: Scale factor of the TPC-DS database the tests share (a few seconds to build).
TPCDS_SCALE_FACTOR = 0.01


@pytest.fixture(scope="session")
def tpcds_cache(tmp_path_factory) -> Path:
    """A cache root with the TPC-DS database at ``TPCDS_SCALE_FACTOR`` built in it, once per
    run (shared by the workers)."""
    from sqlbench_lmeval.tpcds.data import database as tpcds_database
    from sqlbench_lmeval.tpcds.data import ensure_database

    root = shared_folder(tmp_path_factory, "tpcds-cache")
    built = ensure_database(root, TPCDS_SCALE_FACTOR)
    _with_perturbed_copies([tpcds_database(built["database"])])
    return root


@pytest.fixture(scope="session")
def tpcds_default_cache(tmp_path_factory) -> Path:
    """A cache root with the TPC-DS database at the default scale factor (1) built in it, once
    per run (about 2 minutes: for the tests marked slow only)."""
    from sqlbench_lmeval.tpcds.benchmark import DEFAULT_SCALE_FACTOR
    from sqlbench_lmeval.tpcds.data import database as tpcds_database
    from sqlbench_lmeval.tpcds.data import ensure_database

    root = shared_folder(tmp_path_factory, "tpcds-default-cache")
    built = ensure_database(root, DEFAULT_SCALE_FACTOR)
    _with_perturbed_copies([tpcds_database(built["database"])])
    return root


@pytest.fixture(scope="session")
def tpcds_items(tpcds_cache):
    """The 99 TPC-DS items over that database."""
    from sqlbench_lmeval.tpcds.benchmark import load_items

    return load_items(cache_dir=tpcds_cache, scale_factor=TPCDS_SCALE_FACTOR)


@pytest.fixture(scope="session")
def postgres_admin_url():
    """Admin URL of a PostgreSQL server (see tests/support/postgres_server.py), or a skip.

    ``$SQLBENCH_LMEVAL_POSTGRES_URL`` (the URL evaluations run under) is kept out of the
    session: the tests name their servers and roles themselves."""
    from support.postgres_server import admin_url_or_skip

    from sqlbench_lmeval.tpcds.postgres import URL_ENV

    yield from _session_server(admin_url_or_skip, URL_ENV)


def _session_server(admin_url_or_skip, url_env: str):
    """Yield the admin URL ``admin_url_or_skip()`` gives (a private server is stopped after
    the session) while ``$url_env``, the URL evaluations run under, is out of the environment."""
    outside = os.environ.pop(url_env, None)
    try:
        url, private = admin_url_or_skip()
        yield url
        if private is not None:
            private.stop()
    finally:
        if outside is not None:
            os.environ[url_env] = outside
