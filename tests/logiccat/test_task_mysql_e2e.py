"""``logiccat_mysql`` through the real ``lm_eval`` CLI on the server engine, scripted answers.

The same task name as the SQLite run; ``--metadata '{"engine": "mysql"}'`` runs it natively on
the MySQL-protocol server that ``prepare logiccat --engine mysql`` loaded (the read-only account
of the manifest). The scripted model answers with the upstream MySQL gold, a wrong query or
prose by item id, so each item's VES/EX follow from the answer kind and the gold health judged
on the server alone; offline ``score --engine mysql`` must agree item by item.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
from conftest import logiccat_source
from support import logiccat_answers
from support.lm_eval_run import run_lm_eval
from support.logiccat_answers import gold_answer_scores

pytest.importorskip("pymysql")

from sqlbench_lmeval.cli import main  # noqa: E402
from sqlbench_lmeval.logiccat import server  # noqa: E402
from sqlbench_lmeval.logiccat.bundle import load_bundle  # noqa: E402

pytestmark = [pytest.mark.mysql, pytest.mark.slow]

# Runs on every LogicCat database (MySQL syntax) and answers none of its questions.
WRONG_SQL = "SELECT 'not the answer' AS x, 42 AS y"
LIMIT = 12


def choice(item_id: int) -> str:
    return ("gold", "wrong", "prose")[item_id % 3]


def respond(record) -> str:
    kind = choice(record.id)
    if kind == "gold":
        return f"```sql\n{record.gold_sql_mysql}\n```"
    if kind == "wrong":
        return f"```sql\n{WRONG_SQL}\n```"
    return "I would need to know more before answering."


def expected(record) -> tuple[int, int]:
    kind = choice(record.id)
    if kind == "prose":
        return 0, 0
    if kind == "wrong":
        return 1, 0
    return gold_answer_scores(record)


@pytest.fixture(scope="module")
def server_records(mysql_admin_url, logiccat_cache):
    """The bundle's records with the gold health judged on the server (prepared in this cache)."""
    code = main(
        ["prepare", "logiccat", "--engine", "mysql", "--url", mysql_admin_url]
        + ["--source", str(logiccat_source()), "--cache-dir", str(logiccat_cache)]
    )
    assert code == 0
    statuses = server.read_manifest(logiccat_cache)["gold_status"]
    return [
        dataclasses.replace(record, gold_status=statuses[str(record.id)])
        for record in load_bundle(logiccat_cache).records
    ]


def test_logiccat_mysql_on_the_server_scores_known_answers_and_offline_agrees(
    server_records, logiccat_cache, tmp_path
):
    by_id = {record.id: record for record in server_records}
    results, samples = run_lm_eval(
        "logiccat_mysql",
        answer=logiccat_answers.scripted_model(server_records, respond),
        workdir=tmp_path,
        extra_args=["--limit", str(LIMIT), "--metadata", json.dumps({"engine": "mysql"})],
        env={"SQLBENCH_LMEVAL_CACHE": str(logiccat_cache)},
    )
    run = samples["logiccat_mysql"]
    assert len(run) == LIMIT
    # Gold answered items (ids 3, 6, 9, 12) have neither ORDER BY nor LIMIT: their results
    # compare as multisets, so MariaDB's connection-dependent tie order cannot touch them.
    gold_ids = [s["doc"]["id"] for s in run if choice(s["doc"]["id"]) == "gold"]
    for item_id in gold_ids:
        sql = by_id[item_id].gold_sql_mysql.upper()
        assert "ORDER BY" not in sql and "LIMIT" not in sql, item_id
    assert {choice(s["doc"]["id"]) for s in run} == {"gold", "wrong", "prose"}
    for sample in run:
        doc = sample["doc"]
        assert (sample["ves"], sample["ex"]) == expected(by_id[doc["id"]]), doc["id"]
        # Engine and dialect recorded; the prompt names MySQL and shows the upstream DDL.
        assert doc["engine"] == "mysql" and doc["prediction_dialect"] == "mysql"
        assert "-mysql-" in doc["dataset_version"]
        prompt = str(sample["arguments"])
        assert "MySQL database" in prompt and "COMMENT" in prompt and "ENGINE=InnoDB" in prompt
    want_ex = sum(expected(by_id[s["doc"]["id"]])[1] for s in run) / LIMIT
    assert results["results"]["logiccat_mysql"]["ex,score"] == pytest.approx(want_ex)

    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": s["doc"]["id"], "prediction": s["resps"][0][0]}) + "\n" for s in run
        )
    )
    output = tmp_path / "scores.json"
    subprocess.run(
        [
            sys.executable, "-m", "sqlbench_lmeval", "score", "logiccat", str(predictions),
            "--engine", "mysql", "--dialect", "mysql", "--output", str(output),
            "--cache-dir", str(logiccat_cache), "--no-progress",
        ],
        check=True,
    )  # fmt: skip
    scored = json.loads(output.read_text())
    assert "-mysql-" in scored["dataset_version"]
    items = {item["id"]: item for item in scored["items"]}
    for sample in run:
        item = items[sample["doc"]["id"]]
        assert (item["ves"], item["ex"], item["ex_strict"], item["ex_set"]) == (
            sample["ves"],
            sample["ex"],
            sample["ex_strict"],
            sample["ex_set"],
        )
