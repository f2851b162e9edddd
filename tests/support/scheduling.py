"""Which worker group each test belongs to, for the suite's pytest-xdist scheduler
(``tests/conftest.py``).

The suite runs on two pytest-xdist workers (``-n 2``, pyproject.toml), each with its own
session: session fixtures run once per worker, module fixtures once per module. Tests are handed
out by group (``pytest_xdist_make_scheduler`` in tests/conftest.py), a group going whole to one
worker: each module is a group, so its module fixtures are built once, on one worker; and every
test on one of the shared test servers is in that server's group ("mysql", "mysql-defaults",
"postgres"). Those tests load and drop databases, accounts and roles of fixed names on their
server, and prepare LogicCat or TPC-DS into it with a reader whose password only their own
worker's cache holds: one worker runs a server's tests, one at a time, as a single process did,
while the other worker may run another server's. The modules are written out because the
controller that hands out tests does not collect them; every worker checks the list against the
server fixtures and markers of its tests (pytest_collection_modifyitems) and stops the run when
a test would land outside its server's group.
"""

from __future__ import annotations

import pytest

MYSQL, MYSQL_DEFAULTS, POSTGRES = "mysql", "mysql-defaults", "postgres"
#: Which server a fixture is (a test using one goes to its group).
SERVER_FIXTURES = {
    "mysql_admin_url": MYSQL,
    "mysql_defaults_admin_url": MYSQL_DEFAULTS,
    "postgres_admin_url": POSTGRES,
}
#: The markers of tests that reach a server only at run time (``request.getfixturevalue``).
SERVER_MARKERS = {"mysql": MYSQL, "postgres": POSTGRES}
#: A module whose tests are spread over engines: each test goes to the group of the server
#: engine its parameters (``test_attack[mysql-kill]``), else its name
#: (``test_postgres_state_covers_every_table``), start with; the others form the module's group.
BY_ENGINE = "by engine"
SERVER_MODULES = {
    "tests/execution/test_busy_postgres.py": POSTGRES,
    "tests/execution/test_sandbox.py": BY_ENGINE,
    "tests/execution/test_sandbox_mysql.py": MYSQL,
    "tests/execution/test_sandbox_mysql_quiet.py": MYSQL,
    "tests/execution/test_sandbox_postgres.py": POSTGRES,
    "tests/execution/test_ties_mysql.py": MYSQL,
    "tests/execution/test_ties_postgres.py": POSTGRES,
    "tests/execution/test_unavailable.py": MYSQL,
    "tests/execution/test_work.py": MYSQL,
    "tests/logiccat/test_fidelity_command.py": MYSQL,
    "tests/logiccat/test_prepare_defaults.py": MYSQL_DEFAULTS,
    "tests/logiccat/test_server_capacity.py": MYSQL,
    "tests/logiccat/test_server_machines.py": MYSQL,
    "tests/logiccat/test_server_mysql.py": MYSQL,
    "tests/logiccat/test_server_rights.py": MYSQL,
    "tests/logiccat/test_statement_rule_mysql.py": MYSQL,
    "tests/logiccat/test_task_mysql_e2e.py": MYSQL,
    "tests/logiccat/test_task_mysql_secrets.py": MYSQL,
    "tests/report/test_engines.py": MYSQL,
    "tests/tpcds/test_postgres.py": POSTGRES,
    "tests/tpcds/test_repair_postgres_lm_eval.py": POSTGRES,
    "tests/tpcds/test_statement_rule_postgres.py": POSTGRES,
}
#: Groups start in this order (the scheduler keeps the collection's order), the longest first
#: so that no worker is left alone with a long one at the end: the MariaDB group (~6 min of a
#: quiet fresh-clone run), then PostgreSQL's, then modules with ``slow`` tests (real data
#: builds, lm_eval CLI runs), then the rest as collected.
FIRST_GROUPS = (MYSQL, POSTGRES)


def xdist_group_of(nodeid: str) -> str:
    """The group of the test ``nodeid`` names (see above)."""
    module, _, test = nodeid.partition("::")
    group = SERVER_MODULES.get(module, module)
    if group != BY_ENGINE:
        return group
    name, _, parameters = test.partition("[")
    first = parameters.split("-", 1)[0] if parameters else name.removeprefix("test_").split("_")[0]
    return SERVER_MARKERS.get(first.rstrip("]"), module)


def server_group_used(item) -> str | None:
    """The group of the shared server ``item`` uses, by its fixtures (in a ``BY_ENGINE``
    module, where servers are fetched at run time, by its markers), or None; a UsageError when
    it uses two. (Elsewhere a marker alone says nothing: ``test_server_failures.py`` is marked
    ``mysql`` and runs its own private servers.)"""
    used = {SERVER_FIXTURES[name] for name in SERVER_FIXTURES.keys() & set(item.fixturenames)}
    if not used and SERVER_MODULES.get(item.nodeid.split("::", 1)[0]) == BY_ENGINE:
        used = {
            group for marker, group in SERVER_MARKERS.items() if item.get_closest_marker(marker)
        }
    if len(used) > 1:
        raise pytest.UsageError(f"{item.nodeid} uses two test servers: {sorted(used)}")
    return next(iter(used), None)
