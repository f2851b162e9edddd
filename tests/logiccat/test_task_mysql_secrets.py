"""No password of the server's accounts in any output or log line of a real run.

Machine A prepared the session's server (tests/conftest.py ``mysql_prepared``, the admin URL
with its password on the command line). Machine D is a fresh cache (the public bundle only)
that evaluates with the reader's URL, password included, given the ways a user gives it:
``$SQLBENCH_LMEVAL_MYSQL_URL`` for ``lm_eval``, ``--url`` for ``score`` and ``gold``. Then
``report`` and ``explore`` read those runs, and A runs ``prepare`` again. Every file those
commands wrote (sample logs, results, score and gold files, report, explorer, D's cache) and
every line they printed must hold neither password; the option files that do hold one are
owner-only. The run must work too (gold answers score VES 1), or the test would pass for a
server nobody could log in to.
"""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import sys

import pytest
from conftest import logiccat_source
from support import logiccat_answers
from support.lm_eval_run import run_lm_eval

pytest.importorskip("pymysql")

from sqlbench_lmeval.execution.mysql import parse_url  # noqa: E402
from sqlbench_lmeval.logiccat import server  # noqa: E402
from sqlbench_lmeval.logiccat.bundle import load_bundle  # noqa: E402

pytestmark = [pytest.mark.mysql, pytest.mark.slow]

LIMIT = 4


def command(*argv: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-m", "sqlbench_lmeval", *argv], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_no_output_or_log_line_of_a_run_holds_a_password(mysql_prepared, tmp_path):
    a = mysql_prepared
    secrets = {"reader": a.reader_password, "admin": parse_url(a.admin_url).password}
    assert len(secrets["reader"]) >= 16
    reader_url = a.reader_url_with_password()
    bundle = load_bundle(a.cache)
    cache_d = tmp_path / "machine-d"
    shutil.copytree(bundle.root, cache_d / bundle.root.relative_to(a.cache))
    printed = [a.prepare_output]

    def gold(record) -> str:
        return f"```sql\n{record.gold_sql_mysql}\n```"

    runs = tmp_path / "runs"
    runs.mkdir()
    results, samples = run_lm_eval(
        "logiccat_mysql",
        answer=logiccat_answers.scripted_model(bundle.records, gold),
        workdir=runs,
        extra_args=["--limit", str(LIMIT), "--metadata", json.dumps({"engine": "mysql"})],
        env={"SQLBENCH_LMEVAL_CACHE": str(cache_d), server.URL_ENV: reader_url},
        console=printed,
    )
    run = samples["logiccat_mysql"]
    assert len(run) == LIMIT
    # Queries really ran under the account: VES 1 means the prediction executed on the server
    # (the first four items' gold runs on MariaDB; a failed login would stop the run).
    assert any(sample["ves"] == 1 for sample in run)
    assert all(sample["doc"]["engine"] == "mysql" for sample in run)
    assert all("read_default_file=" in sample["doc"]["db_path"] for sample in run)

    predictions = logiccat_answers.write_predictions(tmp_path / "predictions.jsonl", run)
    scores = tmp_path / "scores.json"
    on_d = ["--engine", "mysql", "--url", reader_url, "--cache-dir", str(cache_d)]
    printed += command("score", "logiccat", str(predictions), "-o", str(scores),
                       "--dialect", "mysql", *on_d).stdout.splitlines()  # fmt: skip
    printed.append(command("gold", "logiccat", "-o", str(tmp_path / "gold.jsonl"), *on_d).stdout)
    logged = str(runs / "lm_eval_output")
    printed.append(command("report", logged, str(scores), "-o", str(tmp_path / "report"),
                           "--resamples", "200").stdout)  # fmt: skip
    printed.append(command("explore", logged, str(scores), "-o", str(tmp_path / "explore"))
                   .stdout)  # fmt: skip
    prepare_again = command(
        "prepare", "logiccat", "--engine", "mysql", "--url", a.admin_url,
        "--source", str(logiccat_source()), "--cache-dir", str(a.cache),
    )  # fmt: skip
    printed += [prepare_again.stdout, prepare_again.stderr]

    # Everything written, but the bundles (public SQLite data copied from upstream dumps).
    bundles = (bundle.root, cache_d / bundle.root.relative_to(a.cache))
    written = [
        path
        for path in [*tmp_path.rglob("*"), *a.cache.rglob("*")]
        if path.is_file() and not any(path.is_relative_to(root) for root in bundles)
    ]
    assert any(path.name == "explorer.html" for path in written)
    assert any(path.name.startswith("samples_logiccat_mysql") for path in written)
    holding = []
    for path in written:
        if path.suffix == ".cnf":  # option files: the one place a password is kept
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
            continue
        data = path.read_bytes()
        holding += [(name, path) for name, secret in secrets.items() if secret.encode() in data]
    assert holding == []
    lines = "\n".join(printed)
    assert "reloaded nothing" in lines  # the prepare run was the verifying one
    for name, secret in secrets.items():
        assert secret not in lines, name
