"""``logiccat_mysql`` through the real ``lm_eval`` CLI on the server engine, scripted answers.

The same task name as the SQLite run; ``--metadata '{"engine": "mysql"}'`` runs it natively on
the MySQL-protocol server that ``prepare logiccat --engine mysql`` loaded (the read-only account
of the manifest). The scripted model gives each item its known answer
(``support.logiccat_answers``: the upstream MySQL gold, a wrong query or prose by item id), so
each item's VES/EX follow from the answer kind and the gold health judged on the server alone;
offline ``score --engine mysql`` must agree item by item.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from support import logiccat_answers as answers

pytest.importorskip("pymysql")

from sqlbench_lmeval.logiccat.bundle import load_bundle  # noqa: E402

pytestmark = [pytest.mark.mysql, pytest.mark.slow]

LIMIT = 12
ON_THE_SERVER = ("--metadata", json.dumps({"engine": "mysql"}))


@pytest.fixture(scope="module")
def server_records(mysql_prepared, logiccat_cache):
    """The bundle's records with the gold health judged on the server (prepared in this cache)."""
    statuses = mysql_prepared.document["gold_status"]
    return [
        dataclasses.replace(record, gold_status=statuses[str(record.id)])
        for record in load_bundle(logiccat_cache).records
    ]


def test_logiccat_mysql_on_the_server_scores_known_answers_and_offline_agrees(
    server_records, logiccat_cache, tmp_path
):
    by_id = {record.id: record for record in server_records}
    answer = answers.known_answers_model(server_records, gold="gold_sql_mysql")
    results, samples = answers.run_logiccat(
        "logiccat_mysql", logiccat_cache, answer, tmp_path, "--limit", str(LIMIT), *ON_THE_SERVER
    )
    run = answers.check_known_answers(samples["logiccat_mysql"], by_id)
    assert len(run) == LIMIT
    # Gold answered items (ids 3, 6, 9, 12) have neither ORDER BY nor LIMIT: their results
    # compare as multisets, so MariaDB's connection-dependent tie order cannot touch them.
    gold_ids = [s["doc"]["id"] for s in run if answers.answer_kind(s["doc"]["id"]) == "gold"]
    for item_id in gold_ids:
        sql = by_id[item_id].gold_sql_mysql.upper()
        assert "ORDER BY" not in sql and "LIMIT" not in sql, item_id
    assert {answers.answer_kind(s["doc"]["id"]) for s in run} == {"gold", "wrong", "prose"}
    for sample in run:
        doc = sample["doc"]
        # Engine and dialect recorded; the prompt names MySQL and shows the upstream DDL.
        assert doc["engine"] == "mysql" and doc["prediction_dialect"] == "mysql"
        assert "-mysql-" in doc["dataset_version"]
        prompt = str(sample["arguments"])
        assert "MySQL database" in prompt and "COMMENT" in prompt and "ENGINE=InnoDB" in prompt
    want_ex = sum(answers.known_answer_scores(by_id[s["doc"]["id"]])[1] for s in run) / LIMIT
    assert results["results"]["logiccat_mysql"]["ex,score"] == pytest.approx(want_ex)

    predictions = tmp_path / "predictions.jsonl"
    on_mysql = ("--engine", "mysql", "--dialect", "mysql")
    scored = answers.assert_offline_agrees(run, logiccat_cache, predictions, *on_mysql)
    assert "-mysql-" in scored["dataset_version"]
