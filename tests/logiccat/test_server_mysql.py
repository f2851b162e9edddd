"""LogicCat on a MySQL-protocol server: prepare, read-only account, frozen clock, gold.
(The server's gold against the MariaDB reference: test_fidelity_command.py, from the
``fidelity`` command's own run.)

The server is the private MariaDB of tests/support/mysql_server.py (or
``$SQLBENCH_LMEVAL_MYSQL_URL``); ``prepare logiccat --engine mysql`` runs through the real CLI.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import stat

import pytest
from conftest import logiccat_source

pytest.importorskip("pymysql")

from sqlbench_lmeval.execution import Job, Limits, Status, execute  # noqa: E402
from sqlbench_lmeval.execution.mysql import open_connection, parse_url  # noqa: E402
from sqlbench_lmeval.logiccat import server  # noqa: E402
from sqlbench_lmeval.logiccat import source as source_module  # noqa: E402

pytestmark = [pytest.mark.mysql, pytest.mark.slow]

# What prepare prints when it ran gold twice (logiccat/server.py prepare_server).
PREPARE_RAN_GOLD = "gold run twice as the reader"


@pytest.fixture(scope="module")
def prepared(mysql_prepared):
    """The session's prepared server (tests/conftest.py: one real prepare per session)."""
    return {
        "path": server.manifest_dir(mysql_prepared.cache) / server.MANIFEST_NAME,
        "manifest": mysql_prepared.manifest,
        "document": mysql_prepared.document,
        "source": logiccat_source(),
        "cache": mysql_prepared.cache,
        "prepare_output": mysql_prepared.prepare_output,
    }


def test_every_database_loaded_with_the_dump_row_counts(prepared):
    manifest, root = prepared["document"], prepared["source"]
    source = source_module.locate(root)
    records = json.loads((root / "records-4036.json").read_text("utf-8"))
    assert sorted(manifest["databases"]) == sorted({r["db_id"] for r in records})
    assert len(manifest["databases"]) == 44  # 45 dumps, EquipmentManagementDB has no questions
    for db_id, loaded in manifest["databases"].items():
        text = source_module.dump_file(source, db_id).read_text("utf-8")
        # Navicat writes one single-row INSERT per line: counting those lines by table is an
        # independent count of the rows each table must hold.
        expected = {name.lower(): 0 for name in re.findall(r"^CREATE TABLE `([^`]+)`", text, re.M)}
        for name in re.findall(r"^INSERT INTO `([^`]+)` VALUES", text, re.M):
            expected[name.lower()] += 1
        assert loaded["tables"] == expected, db_id


def test_manifest_names_the_server_and_hides_passwords(prepared, mysql_admin_url):
    manifest, document = prepared["manifest"], prepared["document"]
    for record in (manifest, document):
        assert re.fullmatch(r"(MariaDB|MySQL) \d+\.\d+\.\d+", record["server_version"])
        assert record["engine"] == "mysql"
        assert "mysql" in record["dataset_version"]
    assert parse_url(mysql_admin_url).password not in json.dumps(manifest)
    assert parse_url(mysql_admin_url).password not in json.dumps(document)
    assert stat.S_IMODE(prepared["path"].stat().st_mode) == 0o600
    option_file = parse_url(manifest["reader_url"]).option_file
    assert stat.S_IMODE(os.stat(option_file).st_mode) == 0o600  # the reader's password


def test_reader_account_has_select_on_the_logiccat_databases_only(prepared):
    reader = parse_url(prepared["manifest"]["reader_url"])
    conn = open_connection(reader)
    try:
        with conn.cursor() as cursor:
            cursor.execute("SHOW GRANTS")
            grants = [row[0] for row in cursor.fetchall()]
    finally:
        conn.close()
    # One USAGE line (login only) plus one SELECT line per database and one for the metadata
    # database, nothing else.
    assert sum("GRANT USAGE ON *.*" in g for g in grants) == 1
    table_grants = [g for g in grants if "GRANT USAGE" not in g]
    assert len(table_grants) == 44 + 1
    assert all(g.startswith("GRANT SELECT ON `") for g in table_grants)
    assert sum("`sqlbench\\_lmeval\\_meta`.*" in g for g in table_grants) == 1


def test_frozen_clock_is_sqlite_frozen_instant(prepared):
    from sqlbench_lmeval.logiccat.mysql_functions import FROZEN_NOW

    database = server.server_database(prepared["manifest"]["reader_url"], "AirCraft")
    outcome = execute(Job(database, "SELECT NOW(), CURDATE(), UNIX_TIMESTAMP()"), Limits())
    assert outcome.status is Status.OK, outcome
    # 2025-12-10 12:00:00 UTC is 1765368000 s after the epoch: 20,432 days * 86,400 + 12 h.
    assert outcome.rows == ((FROZEN_NOW, dt.date(2025, 12, 10), 20432 * 86400 + 12 * 3600),)


def test_gold_runs_on_the_server_are_reproducible(prepared):
    """Two full gold runs (fresh worker processes, so other connections) give the same status
    and the same rows in the same order for every item but those that call RAND(). Before the
    engine kept temporary tables on disk, 111-174 of 4,036 items differed (tie order).

    ``prepare`` makes exactly these two runs (``_judge_gold`` in logiccat/server.py: the same
    records, reader, clock and engine path) and stores the items that differed as
    ``unstable_order``. When the session's prepare ran them (it says so), that list is this
    check on this server and the runs are not repeated here; a server prepared before the
    session (prepare then verifies it and runs no gold) gets its two runs here."""
    records = source_module.load_records(source_module.locate(prepared["source"]))
    # RAND() spelled anywhere in the gold (case-insensitive): the only license to differ.
    calls_rand = {r["idx"] for r in records if re.search(r"\bRAND\s*\(", r["query"], re.I)}
    assert set(prepared["document"]["unstable_order"]) <= calls_rand
    if PREPARE_RAN_GOLD in prepared["prepare_output"]:
        return
    golds = [(r["idx"], r["db_id"], r["query"]) for r in records]
    url = prepared["manifest"]["reader_url"]
    first = server.run_gold_on_server(golds, url)
    second = server.run_gold_on_server(golds, url)
    differ = {
        i for i in first if (first[i].status, first[i].rows) != (second[i].status, second[i].rows)
    }
    assert differ <= calls_rand


def test_prepare_leaves_gold_in_the_machines_gold_cache(prepared, logiccat_cache, monkeypatch):
    """Gold that prepare judged is what scoring on this machine needs (the items' own jobs,
    under the reader's option-file URL, the default limits): none of it runs again but what
    the cache never keeps (a timeout, a lost connection)."""
    from sqlbench_lmeval.execution import GoldCache, Outcome, cache
    from sqlbench_lmeval.logiccat.bundle import load_bundle
    from sqlbench_lmeval.paths import gold_cache_dir

    ran = []

    def record(jobs, *args, **kwargs):
        jobs = list(jobs)
        ran.extend(jobs)
        return [Outcome(Status.TIMEOUT, error="not run here") for _ in jobs]

    monkeypatch.setattr(cache, "execute_many", record)
    items = server.server_items(load_bundle(logiccat_cache), "mysql", None, prepared["cache"])
    jobs = [Job(item.database, item.gold_sql) for item in items]
    outcomes = GoldCache(gold_cache_dir(prepared["cache"])).run(jobs, Limits())
    statuses = prepared["document"]["gold_status"]
    not_kept = {Status.TIMEOUT.value, Status.CRASHED.value}
    assert {job.sql for job in ran} <= {
        item.gold_sql for item in items if statuses[str(item.id)] in not_kept
    }
    judged = {"ok", "empty", "all_null"}
    for item, outcome in zip(items, outcomes, strict=True):
        if statuses[str(item.id)] in judged:
            assert outcome.ok, item.id


def test_gold_as_predictions_scores_one_on_every_healthy_item_on_the_server(
    prepared, logiccat_cache
):
    """The server counterpart of test_oracle: gold as every prediction, same engine path for
    both; every item whose server gold is ok and repeatable (no RAND()) scores EX = 1.

    Only those items are answered (the others are scored missing, their gold still runs or is
    read): what any other item's answer scored was never checked, and one of them, the RAND()
    item 1440, costs the server 5-16 s per run."""
    from sqlbench_lmeval.logiccat.bundle import load_bundle
    from sqlbench_lmeval.logiccat.server import server_items
    from sqlbench_lmeval.scoring.answer import UNREPEATABLE_FLAGS
    from sqlbench_lmeval.scoring.scorer import Scorer

    items = server_items(load_bundle(logiccat_cache), "mysql", None, prepared["cache"])
    assert len(items) == 4036
    # A score's gold_status is "ok" only where prepare judged the gold ok (the item's status).
    answered = {
        item.id
        for item in items
        if item.gold_status == "ok" and not UNREPEATABLE_FLAGS & set(item.flags)
    }
    answers = [item.gold_sql if item.id in answered else None for item in items]
    scores = Scorer(progress=False).score(items, answers)
    healthy = [
        s for s in scores if s["gold_status"] == "ok" and not UNREPEATABLE_FLAGS & set(s["flags"])
    ]
    assert {s["id"] for s in healthy} <= answered
    assert len(healthy) > 3000  # 3,056 ok on MariaDB 10.11.19, 2 of them RAND()
    failed = [
        (s["id"], s["reason"])
        for s in healthy
        if (s["ex"], s["ex_strict"], s["ex_set"]) != (1, 1, 1)
    ]
    assert failed == []
