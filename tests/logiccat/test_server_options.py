"""``--engine mysql`` without what it needs fails with a message that says what to do.

No server needed: these errors come before any connection.
"""

from __future__ import annotations

import importlib.util

import pytest

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.logiccat import server
from sqlbench_lmeval.logiccat.benchmark import check_engine


def test_missing_driver_names_the_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pymysql" else real(name, *a)
    )
    with pytest.raises(UserError, match=r"sqlbench-lmeval\[mysql\]"):
        server.prepare_command("mysql://a:b@127.0.0.1:1", None, None)


def test_prepare_without_url_asks_for_one(monkeypatch, tmp_path):
    pytest.importorskip("pymysql")
    monkeypatch.delenv(server.URL_ENV, raising=False)
    with pytest.raises(UserError, match="--url"):
        server.prepare_command(None, None, tmp_path)


def test_items_without_a_prepared_server_say_how_to_prepare(tmp_path):
    with pytest.raises(UserError, match="prepare logiccat --engine mysql"):
        server.read_manifest(tmp_path)


def test_unknown_engine_lists_the_choices():
    assert check_engine(None) == "sqlite"
    assert check_engine(" MySQL ") == "mysql"
    with pytest.raises(UserError, match="sqlite, mysql"):
        check_engine("oracle")
