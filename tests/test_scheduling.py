"""The suite's scheduler groups (tests/support/scheduling.py): the tests on one shared test
server stay together, on one worker; every other test goes with its module."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.scheduling import (
    MYSQL,
    MYSQL_DEFAULTS,
    POSTGRES,
    SERVER_MODULES,
    server_group_used,
    xdist_group_of,
)

REPO = Path(__file__).resolve().parent.parent
SANDBOX = "tests/execution/test_sandbox.py"


def test_every_listed_module_exists():
    """A renamed or moved module would silently leave its server's group."""
    assert [module for module in SERVER_MODULES if not (REPO / module).is_file()] == []


@pytest.mark.parametrize(
    ("nodeid", "group"),
    [
        ("tests/logiccat/test_server_mysql.py::test_gold", MYSQL),
        ("tests/logiccat/test_prepare_defaults.py::test_rotate[x]", MYSQL_DEFAULTS),
        ("tests/tpcds/test_postgres.py::test_load[a-b]", POSTGRES),
        ("tests/scoring/test_compare.py::test_rows", "tests/scoring/test_compare.py"),
        # The attack suite: by the engine its parameters, else its name, start with.
        (f"{SANDBOX}::test_attack[mysql-kill]", MYSQL),
        (f"{SANDBOX}::test_attack[postgres-copy_program]", POSTGRES),
        (f"{SANDBOX}::test_attack[sqlite-mysql_comment]", SANDBOX),
        (f"{SANDBOX}::test_database_unchanged_and_no_file_written[mysql]", MYSQL),
        (f"{SANDBOX}::test_database_unchanged_and_no_file_written[duckdb]", SANDBOX),
        (f"{SANDBOX}::test_postgres_state_covers_every_table", POSTGRES),
        (f"{SANDBOX}::test_sqlite_memory_limit_is_an_error_not_a_crash", SANDBOX),
    ],
)
def test_group_of_a_test(nodeid, group):
    assert xdist_group_of(nodeid) == group


@dataclass
class FakeItem:
    """What the check reads of a collected test."""

    nodeid: str
    fixturenames: list[str] = field(default_factory=list)
    markers: tuple[str, ...] = ()

    def get_closest_marker(self, name):
        return name if name in self.markers else None


def test_server_used_by_fixtures():
    item = FakeItem("tests/x/test_a.py::test_b", ["tmp_path", "mysql_admin_url"])
    assert server_group_used(item) == MYSQL
    item = FakeItem("tests/x/test_a.py::test_b", ["mysql_defaults_admin_url"], ("mysql",))
    assert server_group_used(item) == MYSQL_DEFAULTS


def test_a_marker_names_a_server_only_where_servers_are_fetched_at_run_time():
    item = FakeItem(f"{SANDBOX}::test_attack[postgres-x]", [], ("postgres",))
    assert server_group_used(item) == POSTGRES
    # test_server_failures.py is marked mysql and runs private servers of its own.
    item = FakeItem("tests/logiccat/test_server_failures.py::test_stop", [], ("mysql",))
    assert server_group_used(item) is None


def test_a_test_on_two_servers_is_refused():
    item = FakeItem("tests/x/test_a.py::test_b", ["mysql_admin_url", "postgres_admin_url"])
    with pytest.raises(pytest.UsageError, match="two test servers"):
        server_group_used(item)
