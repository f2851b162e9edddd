"""Model SQL never runs with more than SELECT rights: the account decides, not the URL.

On the session's prepared server (tests/conftest.py ``mysql_prepared``). The witness that no
prediction ran is a file: the answer ``SELECT 'x' INTO OUTFILE '<secure_file_priv>/...'``
creates it under any account with the FILE privilege (shown first, as the admin, by hand), so
its absence after a refused command means the answer never reached the server.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from conftest import logiccat_source

pymysql = pytest.importorskip("pymysql")

from sqlbench_lmeval.cli import main  # noqa: E402
from sqlbench_lmeval.execution import Limits  # noqa: E402
from sqlbench_lmeval.execution import mysql as engine  # noqa: E402
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable  # noqa: E402
from sqlbench_lmeval.logiccat import server, task  # noqa: E402

pytestmark = [pytest.mark.mysql, pytest.mark.slow]

ITEM = 3524  # gold: SELECT 1000 * 200 * 50 * 1 AS Displacement (database ship)


def outfile(mysql_server, name: str) -> Path:
    folder = mysql_server.secure_file_priv
    if not folder or not Path(folder).is_dir():
        pytest.skip("the server's secure_file_priv folder is not on this machine")
    return Path(folder) / name


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def predictions(tmp_path: Path, path: Path) -> Path:
    file = tmp_path / "predictions.jsonl"
    answer = f"SELECT 'x' INTO OUTFILE '{path}'"
    file.write_text(json.dumps({"id": ITEM, "prediction": answer}) + "\n", encoding="utf-8")
    return file


def test_the_admin_could_write_the_witness_file(mysql_server, mysql_prepared):
    """The premise: INTO OUTFILE into that folder works for an account with FILE."""
    path = outfile(mysql_server, "admin-by-hand.txt")
    conn = mysql_server.admin()
    try:
        with conn.cursor() as cursor:
            cursor.execute(f"SELECT 'x' INTO OUTFILE '{path}'")
    finally:
        conn.close()
    assert path.is_file()


def test_the_admin_url_in_every_spelling_is_refused_before_any_prediction_runs(
    mysql_server, mysql_prepared, tmp_path
):
    cache = str(mysql_prepared.cache)
    spellings = mysql_server.spellings()
    assert {"127.0.0.1", "localhost"} <= spellings.keys()
    for spelling, url in spellings.items():
        # The admin logs in under this spelling (so a refusal is about its rights).
        conn = engine.open_connection(engine.parse_url(url))
        conn.close()
        witness = outfile(mysql_server, f"proof-{len(spelling)}-{spelling.strip('[]:.')}.txt")
        output = tmp_path / f"scores-{spelling}.json"
        common = ["--engine", "mysql", "--url", url, "--cache-dir", cache]
        code, out, err = run_cli(
            "score", "logiccat", str(predictions(tmp_path, witness)), "-o", str(output),
            "--dialect", "mysql", "--no-progress", *common,
        )  # fmt: skip
        assert code == 3, (spelling, out, err)
        assert "holds more than SELECT" in err and "ALL PRIVILEGES on *.*" in err, spelling
        assert "`sqlbench-lmeval prepare` creates" in err
        # This cache prepared that very server (its recorded identity, not the URL's text).
        assert "This cache prepared this server" in err
        assert not witness.exists(), spelling
        assert not output.exists(), spelling
        gold = tmp_path / f"gold-{spelling}.jsonl"
        code, _, err = run_cli("gold", "logiccat", "-o", str(gold), "--no-progress", *common)
        assert code == 3 and "holds more than SELECT" in err and not gold.exists(), spelling
        # lm-eval's task set-up: no document is made.
        server._runs.clear()
        with pytest.raises(EvaluationUnavailable, match="holds more than SELECT"):
            task.load_dataset("mini", cache_dir=cache, engine="mysql", url=url)
        for password in (engine.parse_url(url).password, mysql_prepared.reader_password):
            assert password not in err


def test_the_url_from_the_environment_is_checked_the_same_way(
    mysql_server, mysql_prepared, tmp_path, monkeypatch
):
    monkeypatch.setenv(server.URL_ENV, mysql_server.admin_url)
    witness = outfile(mysql_server, "proof-environment.txt")
    output = tmp_path / "scores.json"
    code, _, err = run_cli(
        "score", "logiccat", str(predictions(tmp_path, witness)), "-o", str(output),
        "--engine", "mysql", "--cache-dir", str(mysql_prepared.cache), "--no-progress",
    )  # fmt: skip
    assert code == 3 and "holds more than SELECT" in err
    assert not witness.exists() and not output.exists()


def test_the_engine_itself_refuses_the_admin_whatever_path_reaches_it(mysql_server, mysql_prepared):
    """Below every command: the engine's session checks the account when it connects."""
    witness = outfile(mysql_server, "proof-engine.txt")
    for url in mysql_server.spellings().values():
        handle = engine.connect(engine.database_url(url, "ship"), Limits())
        with pytest.raises(EvaluationUnavailable, match="ALL PRIVILEGES on \\*\\.\\*"):
            engine.run(handle, f"SELECT 'x' INTO OUTFILE '{witness}'", Limits())
    assert not witness.exists()


def test_the_reader_runs_an_into_outfile_answer_as_an_error_that_writes_nothing(
    mysql_server, mysql_prepared, tmp_path
):
    witness = outfile(mysql_server, "proof-reader.txt")
    output = tmp_path / "scores.json"
    code, out, err = run_cli(
        "score", "logiccat", str(predictions(tmp_path, witness)), "-o", str(output),
        "--engine", "mysql", "--dialect", "mysql", "--cache-dir", str(mysql_prepared.cache),
        "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    item = next(i for i in json.loads(output.read_text("utf-8"))["items"] if i["id"] == ITEM)
    assert item["status"] == "error" and "FILE privilege" in item["error"]
    assert not witness.exists()


@pytest.mark.parametrize(
    ("extra_grant", "named"),
    [
        ("GRANT FILE ON *.* TO {account}", "FILE on *.*"),
        ("GRANT SELECT ON *.* TO {account}", "SELECT on *.*"),
        ("GRANT INSERT ON `ship`.* TO {account}", "INSERT on `ship`.*"),
        ("GRANT SELECT ON `mysql`.* TO {account}", "SELECT on `mysql`.* (not a benchmark"),
        ("GRANT SELECT ON `rights_secret`.`s` TO {account}", "rights_secret"),
        ("GRANT SELECT ON `ship`.* TO {account} WITH GRANT OPTION", "GRANT OPTION on `ship`.*"),
        ("GRANT rights_role TO {account}", "role `rights_role`"),
    ],
)
def test_an_account_with_anything_beyond_select_on_the_benchmark_is_refused(
    mysql_server, mysql_prepared, extra_grant, named
):
    """The reader's own grants plus one more, each refused with what it is."""
    user, password = "rights_probe", "rights-probe-pw"
    account = f"'{user}'@'%'"
    conn = mysql_server.admin()
    try:
        with conn.cursor() as cursor:
            cursor.execute("CREATE DATABASE IF NOT EXISTS rights_secret")
            cursor.execute("CREATE TABLE IF NOT EXISTS rights_secret.s (k INT)")
            cursor.execute("CREATE ROLE IF NOT EXISTS rights_role")
            cursor.execute("GRANT SELECT ON rights_secret.* TO rights_role")
            cursor.execute(f"DROP USER IF EXISTS {account}")
            cursor.execute(f"CREATE USER {account} IDENTIFIED BY '{password}'")
            cursor.execute(f"SHOW GRANTS FOR {server.READER_USER}@'%'")
            for (line,) in cursor.fetchall():
                if line.startswith("GRANT SELECT ON "):
                    cursor.execute(line.split(" TO ")[0] + f" TO {account}")
            cursor.execute(extra_grant.format(account=account))
            if "rights_role" in extra_grant:
                cursor.execute(f"SET DEFAULT ROLE rights_role FOR {account}")
        address = engine.parse_url(mysql_server.admin_url)
        url = f"mysql://{user}:{password}@{address.host}:{address.port}/ship"
        handle = engine.connect(url, Limits())
        with pytest.raises(EvaluationUnavailable) as refused:
            engine.run(handle, "SELECT 1", Limits())
        assert named in str(refused.value)
        assert password not in str(refused.value)
    finally:
        with conn.cursor() as cursor:
            cursor.execute(f"DROP USER IF EXISTS {account}")
            cursor.execute("DROP ROLE IF EXISTS rights_role")
            cursor.execute("DROP DATABASE IF EXISTS rights_secret")
        conn.close()
        engine.close_all()


def test_the_reader_alone_passes_the_same_check(mysql_prepared):
    handle = engine.connect(engine.database_url(mysql_prepared.reader_url, "ship"), Limits())
    outcome = engine.run(handle, "SELECT 1000 * 200 * 50 * 1", Limits())
    assert outcome.status.value == "ok" and outcome.rows == ((10_000_000,),)
    engine.close_all()


def test_gold_lines_name_the_database_alone(mysql_prepared, tmp_path):
    output = tmp_path / "gold.jsonl"
    code, _, err = run_cli(
        "gold", "logiccat", "-o", str(output), "--engine", "mysql",
        "--cache-dir", str(mysql_prepared.cache), "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    lines = [json.loads(line) for line in output.read_text("utf-8").splitlines()]
    records = json.loads((logiccat_source() / "records-4036.json").read_text("utf-8"))
    assert {line["id"]: line["db_id"] for line in lines} == {r["idx"]: r["db_id"] for r in records}
