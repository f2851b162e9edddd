"""TPC-DS on PostgreSQL: ``prepare tpcds --engine postgres`` loads the session's sf 0.01 data
into the test server (one prepare for the module), creates and proves the read-only role, and
judges gold against DuckDB; items run natively there, predictions never as the admin, no
password in any output; a second prepare verifies instead of reloading.

The server: ``postgres_admin_url`` (tests/conftest.py): ``$SQLBENCH_LMEVAL_TEST_POSTGRES_URL`` or
a private cluster from ``.ci/postgres.sh``.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path

import pytest

pytest.importorskip("psycopg")

from sqlbench_lmeval.execution.postgres import open_connection, with_database  # noqa: E402
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable  # noqa: E402
from sqlbench_lmeval.scoring.metrics import GOLD_WORK, R_VES, WORK  # noqa: E402
from sqlbench_lmeval.tpcds import postgres  # noqa: E402
from sqlbench_lmeval.tpcds.benchmark import dataset_version, load_items  # noqa: E402
from sqlbench_lmeval.tpcds.data import ensure_database, gold_queries  # noqa: E402
from sqlbench_lmeval.tpcds.task import doc_to_text, load_dataset  # noqa: E402

pytestmark = pytest.mark.postgres

SF = 0.01
DATABASE = "sqlbench_tpcds_sf0_01"  # conftest.POSTGRES_DATABASE


@pytest.fixture(scope="module")
def prepared(tpcds_postgres):
    return tpcds_postgres


@pytest.fixture(scope="module")
def items(prepared, tpcds_cache):
    return {item.id: item for item in load_items(tpcds_cache, SF, engine="postgres")}


def duckdb_row_counts(tpcds_cache) -> dict[str, int]:
    import duckdb

    path = ensure_database(tpcds_cache, SF)["database"]
    with contextlib.closing(duckdb.connect(path, read_only=True)) as conn:
        tables = [
            name for (name,) in conn.execute("SELECT table_name FROM duckdb_tables()").fetchall()
        ]
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def test_the_load_holds_duckdbs_rows_and_the_manifest_says_so(
    prepared, tpcds_cache, postgres_admin_url
):
    expected = duckdb_row_counts(tpcds_cache)
    assert len(expected) == 24 and prepared["tables"] == expected
    with open_connection(with_database(postgres_admin_url, DATABASE)) as conn:
        for table, rows in expected.items():
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == rows
        keyed = conn.execute(
            "SELECT count(*) FROM pg_constraint WHERE contype = 'p' "
            "AND connamespace = 'public'::regnamespace"
        ).fetchone()[0]
        collation = conn.execute(
            "SELECT datcollate FROM pg_database WHERE datname = current_database()"
        ).fetchone()[0]
    assert keyed == 24 and collation == "C"
    assert prepared["server_version"].startswith("PostgreSQL ")
    assert prepared["action"] == "loaded" and prepared["load_s"] > 0
    assert set(prepared["table_load_s"]) == set(expected)


def test_the_server_keeps_the_manifest_for_reader_only_machines(prepared):
    """The database's comment is the manifest: the reader reads it without the local file."""
    label = postgres.server_manifest(prepared["reader_url"])
    assert label["load_id"] == prepared["load_id"]
    assert label["gold"] == prepared["gold"]
    assert "reader_url" not in label and "server" not in label


def test_gold_on_postgres_is_checked_against_duckdb(prepared):
    gold = prepared["gold"]
    assert sorted(gold, key=int) == [str(n) for n in range(1, 100)]
    for number, judged in gold.items():
        assert judged["sql"] == postgres.gold_in_postgres(gold_queries()[int(number)])
        assert judged["seconds"] >= 0 and judged["duckdb_seconds"] >= 0
        if judged["status"] == "ok":
            assert judged["rows"] > 0
    # Every query that ran on both engines returns DuckDB's result (at sf 1 too: the README's
    # table); only a time limit could leave one out, and none is near it at sf 0.01.
    ran = {n for n, g in gold.items() if g["status"] in ("ok", "empty", "all_null")}
    assert ran == set(gold), {n: g["error"] for n, g in gold.items() if n not in ran}
    assert {n for n in ran if not gold[n]["equal"]} == set()
    assert gold["1"]["sql"] != gold_queries()[1]  # written anew (decorrelated), same result


def test_items_run_natively_with_the_same_ids_and_questions(items, tpcds_cache, prepared):
    on_duckdb = {item.id: item for item in load_items(tpcds_cache, SF)}
    assert sorted(items) == sorted(on_duckdb) == list(range(1, 100))
    for number, item in items.items():
        assert item.question == on_duckdb[number].question
        assert (item.database.engine, item.dialect) == ("postgres", "postgres")
        assert item.gold_sql == prepared["gold"][str(number)]["sql"]
        assert item.prediction_dialect is None  # the prompt asks for the engine's own dialect
        assert "password" not in item.database.path and "passfile=" in item.database.path
    version = dataset_version(tpcds_cache, SF, engine="postgres")
    assert "-postgres" in version and version != dataset_version(tpcds_cache, SF)


def test_the_task_documents_name_the_engine_and_no_secret(prepared, tpcds_cache):
    docs = load_dataset(SF, cache_dir=str(tpcds_cache), engine="postgres", dialect="postgres")
    doc = docs["test"][0]
    assert doc["engine"] == "postgres" and doc["id"] == 1
    assert "You are given a PostgreSQL database" in doc_to_text(doc)
    password = postgres_password(tpcds_cache)
    assert password not in json.dumps(docs["test"].to_list())


def postgres_password(cache) -> str:
    path = postgres.passfile_path(cache, DATABASE)
    from sqlbench_lmeval.execution.postgres_admin import read_passfile

    return read_passfile(path, postgres.reader_role(DATABASE))


def test_the_password_file_is_private_and_nothing_else_holds_a_password(prepared, tpcds_cache):
    path = postgres.passfile_path(tpcds_cache, DATABASE)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    password = postgres_password(tpcds_cache)
    assert len(password) >= 24
    local = postgres.local_manifest_path(tpcds_cache, DATABASE).read_text()
    assert password not in local and "sqlbench_admin_pw" not in local
    assert password not in postgres.summary(prepared)


def score(tpcds_cache, predictions, tmp_path, *extra) -> tuple[int, Path]:
    """``sqlbench-lmeval score tpcds --engine postgres`` of ``predictions``: (exit code,
    output)."""
    from sqlbench_lmeval.cli import main

    source = tmp_path / "predictions.jsonl"
    source.write_text("".join(json.dumps(p) + "\n" for p in predictions))
    output = tmp_path / "scores.json"
    code = main(
        ["score", "tpcds", str(source), "--engine", "postgres", "--scale-factor", str(SF)]
        + ["--cache-dir", str(tpcds_cache), "--output", str(output), "--no-progress", *extra]
    )
    return code, output


def test_gold_as_prediction_scores_ex_1_on_every_healthy_item(
    prepared, tpcds_cache, tmp_path, postgres_admin_url, capfd
):
    """``score --engine postgres --dialect postgres`` on gold's own PostgreSQL text, given the
    admin URL: the predictions run as the reader (the same prepared database), gold's health
    counts, and no password reaches the output."""
    predictions = [{"id": int(n), "prediction": g["sql"]} for n, g in prepared["gold"].items()]
    code, output = score(
        tpcds_cache, predictions, tmp_path, "--dialect", "postgres", "--url", postgres_admin_url
    )
    printed = capfd.readouterr()
    assert code == 0, printed.err
    result = json.loads(output.read_text())
    assert result["engine"] == "postgres" and "-postgres" in result["dataset_version"]
    for item in result["items"]:
        healthy = prepared["gold"][str(item["id"])]["status"] == "ok"
        assert item["ex"] == (1 if healthy else item["ex"]), item["id"]
        # PostgreSQL counts no work: r_ves is left out (not 0), and no work is logged.
        assert R_VES not in item and item[WORK] is None and item[GOLD_WORK] is None
        assert "_reader@" in item["db_path"]  # the reader's URL, never the admin's
        assert "passfile" not in item["db_path"]  # nor a path of this machine
    assert R_VES not in result["metrics"] and result["work_unit"] is None
    assert "r_ves: not defined on postgres: it counts no work" in printed.out.splitlines()
    text = output.read_text() + printed.out + printed.err
    assert "sqlbench_admin_pw" not in text and postgres_password(tpcds_cache) not in text


def test_gold_lines_name_the_database_alone(prepared, tpcds_cache, tmp_path, capsys):
    """``gold tpcds --engine postgres``: ``db_id`` is the database's name, as on MySQL (not
    the reader's URL with its password file)."""
    from sqlbench_lmeval.cli import main

    output = tmp_path / "gold.jsonl"
    code = main(
        ["gold", "tpcds", "--engine", "postgres", "--scale-factor", str(SF)]
        + ["--cache-dir", str(tpcds_cache), "--output", str(output), "--no-progress"]
    )
    assert code == 0, capsys.readouterr()
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(lines) == 99 and {line["db_id"] for line in lines} == {DATABASE}
    statuses = {str(line["id"]): line["gold_status"] for line in lines}
    assert statuses == {n: g["status"] for n, g in prepared["gold"].items()}
    assert postgres_password(tpcds_cache) not in output.read_text()


def test_an_admin_of_another_database_is_refused_before_anything_runs(
    prepared, tpcds_cache, postgres_admin_url, tmp_path
):
    """Without this cache's manifest the admin URL is not the prepared reader: refused with
    the rights named, nothing scored."""
    other_cache = tmp_path / "other-cache"
    with pytest.raises(EvaluationUnavailable, match="more than SELECT") as refused:
        postgres.reader_url(postgres_admin_url, other_cache, SF)
    assert "SUPERUSER" in str(refused.value) and "sqlbench_admin_pw" not in str(refused.value)


def test_a_reader_that_cannot_log_in_stops_the_run(prepared, tmp_path):
    wrong = tmp_path / "wrong.pgpass"
    wrong.write_text("*:*:*:*:not-the-password\n")
    wrong.chmod(0o600)
    url = prepared["reader_url"].split("?", 1)[0] + f"?passfile={wrong}"
    with pytest.raises(EvaluationUnavailable, match="password authentication failed") as stop:
        postgres.server_manifest(url)
    assert "--rotate-reader" in str(stop.value)


def test_score_and_gold_stop_with_exit_3_and_no_file_when_the_reader_cannot_log_in(
    prepared, tpcds_cache, tmp_path, capsys
):
    """The commands, as on every engine: the cause on stderr, exit 3, nothing written."""
    from sqlbench_lmeval.cli import main

    wrong = tmp_path / "wrong.pgpass"
    wrong.write_text("*:*:*:*:not-the-password\n")
    wrong.chmod(0o600)
    url = prepared["reader_url"].split("?", 1)[0] + f"?passfile={wrong}"
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"id": 1, "prediction": "SELECT 1"}) + "\n")
    data = ["--engine", "postgres", "--url", url, "--scale-factor", str(SF)]
    data += ["--cache-dir", str(tpcds_cache), "--no-progress"]
    for command, output in (
        (["score", "tpcds", str(predictions)], tmp_path / "scores.json"),
        (["gold", "tpcds"], tmp_path / "gold.jsonl"),
    ):
        assert main([*command, *data, "--output", str(output)]) == 3
        err = capsys.readouterr().err
        assert "password authentication failed" in err and "not-the-password" not in err
        assert not output.exists()


def test_a_missing_table_stops_the_run(prepared, postgres_admin_url):
    with open_connection(with_database(postgres_admin_url, DATABASE)) as conn:
        conn.execute(f"REVOKE SELECT ON store FROM {postgres.reader_role(DATABASE)}")
    try:
        postgres.server_manifest.cache_clear()
        with pytest.raises(EvaluationUnavailable, match="store"):
            postgres.server_manifest(prepared["reader_url"])
    finally:
        with open_connection(with_database(postgres_admin_url, DATABASE)) as conn:
            conn.execute(f"GRANT SELECT ON store TO {postgres.reader_role(DATABASE)}")
        postgres.server_manifest.cache_clear()


def test_a_load_whose_gold_is_not_judged_is_not_prepared(prepared, postgres_admin_url):
    """The label prepare writes before it judges gold (it names the load for gold's cache
    keys) does not make the database usable: a reader is told to wait or prepare again."""
    postgres.server_manifest.cache_clear()
    label = postgres.server_manifest(prepared["reader_url"])
    postgres.write_label(
        postgres_admin_url, DATABASE, {k: v for k, v in label.items() if k != "gold"}
    )
    try:
        postgres.server_manifest.cache_clear()
        with pytest.raises(EvaluationUnavailable, match="has not judged its gold"):
            postgres.server_manifest(prepared["reader_url"])
    finally:
        postgres.write_label(postgres_admin_url, DATABASE, label)
        postgres.server_manifest.cache_clear()


def test_prepare_leaves_gold_in_the_machines_gold_cache(items, tpcds_cache, monkeypatch):
    """Gold that prepare judged is what score and lm_eval need here: none of it runs again,
    whichever spelling of the server's address the URL uses (the key names the load)."""
    from sqlbench_lmeval.execution import Database, GoldCache, Job, Limits, cache
    from sqlbench_lmeval.execution.postgres import DEFAULT_TIMEOUT_S
    from sqlbench_lmeval.paths import gold_cache_dir

    ran = []
    real = cache.execute_many
    monkeypatch.setattr(
        cache, "execute_many", lambda jobs, *a, **k: real(ran.extend(jobs) or jobs, *a, **k)
    )
    url = items[1].database.path
    respelled = url.replace("@127.0.0.1:", "@localhost:") if "@127.0.0.1:" in url else url
    gold = [Job(item.database, item.gold_sql) for item in items.values()]
    gold += [Job(Database("postgres", respelled), item.gold_sql) for item in items.values()]
    outcomes = GoldCache(gold_cache_dir(tpcds_cache)).run(gold, Limits(timeout_s=DEFAULT_TIMEOUT_S))
    assert ran == [] and all(outcome.ok for outcome in outcomes)


def test_the_prepare_command_verifies_a_prepared_server(
    prepared, postgres_admin_url, tpcds_cache, capsys
):
    from sqlbench_lmeval.cli import main

    arguments = ["prepare", "tpcds", "--engine", "postgres", "--url", postgres_admin_url]
    code = main([*arguments, "--scale-factor", str(SF), "--cache-dir", str(tpcds_cache)])
    out = capsys.readouterr().out
    assert code == 0
    assert "verified (already loaded, not reloaded)" in out and "read-only role" in out
    assert "results equal to DuckDB's" in out
    assert "sqlbench_admin_pw" not in out and postgres_password(tpcds_cache) not in out


def test_prepare_again_verifies_then_reload_and_rotation(prepared, postgres_admin_url, tpcds_cache):
    """Idempotent: the same dataset is verified (same load, same password); ``rotate_reader``
    gives a new password (the old one no longer logs in); ``reload`` loads anew."""
    again = postgres.prepare(postgres_admin_url, tpcds_cache, SF, progress=False)
    assert again["action"] == "verified" and again["load_id"] == prepared["load_id"]
    old_password = postgres_password(tpcds_cache)
    rotated = postgres.prepare(
        postgres_admin_url, tpcds_cache, SF, rotate_reader=True, progress=False
    )
    new_password = postgres_password(tpcds_cache)
    assert rotated["action"] == "verified" and new_password != old_password
    role = postgres.reader_role(DATABASE)
    import psycopg

    stale = with_database(postgres_admin_url, DATABASE).replace(
        "sqlbench_admin:sqlbench_admin_pw", f"{role}:{old_password}"
    )
    if stale != with_database(postgres_admin_url, DATABASE):  # the admin URL held a password
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            open_connection(stale).close()
    reloaded = postgres.prepare(postgres_admin_url, tpcds_cache, SF, reload=True, progress=False)
    assert reloaded["action"] == "loaded" and reloaded["load_id"] != prepared["load_id"]
    assert reloaded["tables"] == prepared["tables"]
    postgres.server_manifest.cache_clear()


def test_answers_in_duckdb_sql_are_translated_for_postgres(prepared, tpcds_cache):
    """``tpcds`` with ``{"engine": "postgres"}``: the prompt asks for DuckDB SQL and sqlglot
    translates each answer to PostgreSQL before it runs; structure is read as written."""
    from sqlbench_lmeval.scoring.hooks import Hooks
    from sqlbench_lmeval.scoring.scorer import Scorer
    from sqlbench_lmeval.tpcds.benchmark import item_metrics, transpile_prediction

    items = {
        item.id: item for item in load_items(tpcds_cache, SF, engine="postgres", dialect="duckdb")
    }
    chosen = [items[12], items[98]]
    assert [item.prompted_dialect for item in chosen] == ["duckdb", "duckdb"]
    answers = [gold_queries()[item.id] for item in chosen]
    scores = Scorer(
        progress=False, hooks=Hooks(transpile=transpile_prediction, item_metrics=item_metrics)
    ).score(chosen, answers)
    for score in scores:
        assert (score["status"], score["ex"], score["structural_similarity"]) == ("ok", 1, 1.0)
        assert score["executed_sql"] != score["extracted_sql"]  # written anew for PostgreSQL
