"""What the ``mysql`` engine reads off ``SHOW GRANTS`` (pure; the server tests are in
tests/logiccat/test_server_rights.py) and how outputs show a server URL.

Grant lines are written as MariaDB 10.11 and MySQL 8 print them.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pymysql")

from sqlbench_lmeval.execution import Database  # noqa: E402
from sqlbench_lmeval.execution.mysql import (  # noqa: E402
    extra_privileges,
    public_url,
    redact,
    target_database,
)

READER = [
    "GRANT USAGE ON *.* TO `reader`@`%` IDENTIFIED BY PASSWORD '*2B602296A79E0A8784ACC5C88D92E4'",
    "GRANT SELECT ON `aircraft`.* TO `reader`@`%`",
    "GRANT SELECT ON `sqlbench\\_lmeval\\_meta`.* TO `reader`@`%`",
]
ALLOWED = {"aircraft", "sqlbench_lmeval_meta"}


def test_select_on_the_benchmark_databases_is_all_a_reader_holds():
    assert extra_privileges(READER, ALLOWED) == []
    # Table- and column-level SELECT on a benchmark database is SELECT too.
    columns = "GRANT SELECT (`a`, `b`) ON `aircraft`.`t` TO `reader`@`%`"
    assert extra_privileges([*READER, columns], ALLOWED) == []


@pytest.mark.parametrize(
    ("line", "named"),
    [
        (
            "GRANT ALL PRIVILEGES ON *.* TO `adm`@`127.0.0.1` IDENTIFIED BY PASSWORD '*AB' "
            "WITH GRANT OPTION",
            ["ALL PRIVILEGES on *.*", "GRANT OPTION on *.*"],
        ),
        ("GRANT FILE ON *.* TO `reader`@`%`", ["FILE on *.*"]),
        ("GRANT SELECT ON *.* TO `reader`@`%`", ["SELECT on *.*"]),
        ("GRANT SELECT, INSERT ON `aircraft`.* TO `reader`@`%`", ["INSERT on `aircraft`.*"]),
        (
            "GRANT SELECT ON `secret`.* TO `reader`@`%`",
            ["SELECT on `secret`.* (not a benchmark database)"],
        ),
        (
            "GRANT SELECT, CREATE, DROP ON `test\\_%`.* TO PUBLIC",
            [
                "SELECT on `test\\_%`.* (through PUBLIC) (not a benchmark database)",
                "CREATE on `test\\_%`.* (through PUBLIC)",
                "DROP on `test\\_%`.* (through PUBLIC)",
            ],
        ),
        # MySQL 8: dynamic privileges, roles; MariaDB: proxy grants.
        ("GRANT BACKUP_ADMIN,XA_RECOVER_ADMIN ON *.* TO `reader`@`%`", None),
        ("GRANT `app_role`@`%` TO `reader`@`%`", ["role `app_role`@`%`"]),
        ("GRANT PROXY ON ``@`%` TO `reader`@`%`", ["PROXY"]),
        ("GRANT SELECT ON `aircraft`.* TO `reader`@`%` WITH GRANT OPTION", None),
        ("something new", ["an unrecognised grant"]),
    ],
)
def test_anything_more_is_named_without_the_lines_text(line, named):
    extra = extra_privileges([*READER, line], ALLOWED)
    assert extra, line
    if named is not None:
        assert extra == named
    # A line may hold a password hash: what is reported never quotes it.
    assert not any("*AB" in text or "PASSWORD" in text for text in extra)


def test_a_grant_target_is_read_as_the_database_it_names():
    assert target_database("`sqlbench\\_lmeval\\_meta`.*") == "sqlbench_lmeval_meta"
    assert target_database("`a``b`.`t`") == "a`b"
    assert target_database("*.*") == "*"


def test_outputs_show_a_server_url_without_password_or_option_file():
    url = "mysql://reader:s3cr%40t@db.example:3307/AirCraft?read_default_file=%2Fhome%2Fu%2Fr.cnf"
    assert public_url(url) == "mysql://reader@db.example:3307/AirCraft"
    assert redact(url) == (
        "mysql://reader:***@db.example:3307/AirCraft?read_default_file=%2Fhome%2Fu%2Fr.cnf"
    )
    socket = "mysql://reader:pw@localhost?unix_socket=%2Frun%2Fmysqld.sock"
    assert public_url(socket) == "mysql://reader@localhost?unix_socket=%2Frun%2Fmysqld.sock"
    assert public_url("mysql://reader:pw@[::1]:3306/x") == "mysql://reader@[::1]:3306/x"


def test_a_database_is_named_by_its_own_name_on_every_engine():
    assert Database("mysql", "mysql://r@h:1/AirCraft?read_default_file=%2Fx.cnf").name == "AirCraft"
    assert Database("sqlite", "/data/logiccat/AirCraft.sqlite").name == "AirCraft"
    assert Database("duckdb", "/data/tpcds/sf1.duckdb").public_path == "/data/tpcds/sf1.duckdb"
