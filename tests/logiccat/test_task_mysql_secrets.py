"""No password of the server accounts in what ``lm_eval --log_samples`` writes.

Items carry their database's URL into lm-eval documents (``db_path``), and ``--log_samples``
writes documents to disk. The read-only account's URL therefore names a MySQL option file
instead of holding the password (``logiccat.server.write_reader_option_file``); the engine
reads the password from that file at run time. The run must still work (the gold-answered items
score EX = 1), or the test would pass for a server nobody could log in to.
"""

from __future__ import annotations

import json

import pytest
from conftest import logiccat_source
from support import logiccat_answers
from support.lm_eval_run import run_lm_eval

pytest.importorskip("pymysql")

from sqlbench_lmeval.cli import main  # noqa: E402
from sqlbench_lmeval.execution.mysql import parse_url  # noqa: E402
from sqlbench_lmeval.logiccat import server  # noqa: E402
from sqlbench_lmeval.logiccat.bundle import load_bundle  # noqa: E402

pytestmark = [pytest.mark.mysql, pytest.mark.slow]

LIMIT = 4


def test_log_samples_on_the_server_hold_no_password(mysql_admin_url, logiccat_cache, tmp_path):
    code = main(
        ["prepare", "logiccat", "--engine", "mysql", "--url", mysql_admin_url]
        + ["--source", str(logiccat_source()), "--cache-dir", str(logiccat_cache)]
    )
    assert code == 0
    option_file = server.manifest_dir(logiccat_cache) / server.READER_OPTION_FILE
    # The reader's password as the option file holds it ("password = <secret>").
    secret = option_file.read_text("utf-8").split("password = ", 1)[1].strip()
    assert len(secret) >= 16
    admin_secret = parse_url(mysql_admin_url).password
    records = load_bundle(logiccat_cache).records

    def gold(record) -> str:
        return f"```sql\n{record.gold_sql_mysql}\n```"

    results, samples = run_lm_eval(
        "logiccat_mysql",
        answer=logiccat_answers.scripted_model(records, gold),
        workdir=tmp_path,
        extra_args=["--limit", str(LIMIT), "--metadata", json.dumps({"engine": "mysql"})],
        env={"SQLBENCH_LMEVAL_CACHE": str(logiccat_cache)},
    )
    run = samples["logiccat_mysql"]
    assert len(run) == LIMIT
    # Queries really ran under the account: VES 1 means the prediction executed on the server
    # (the first four items' gold runs on MariaDB; a failed login would make every VES 0).
    assert any(sample["ves"] == 1 for sample in run)
    assert all(sample["doc"]["engine"] == "mysql" for sample in run)
    assert all("read_default_file=" in sample["doc"]["db_path"] for sample in run)
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert any(path.suffix == ".jsonl" for path in written)  # the --log_samples file
    for path in written:
        text = path.read_text("utf-8", errors="replace")
        assert secret not in text, path
        assert admin_secret not in text, path
