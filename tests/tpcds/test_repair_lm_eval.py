"""``--model sqlbench-repair`` on the ``tpcds`` task (DuckDB, sf 0.01), real ``lm_eval`` CLI.

Query 1 is first answered with a column that does not exist; only a feedback turn carrying
DuckDB's error naming that column gets the gold query. Query 2 is answered with gold at once.
Gold scores EX 1 at sf 0.01 (tests/tpcds/test_lm_eval.py), the broken query VES 0 and EX 0, so
item 1 goes (ves, ex, ves@retry, ex@retry) = (0, 0, 1, 1) and item 2 (1, 1, 1, 1).
"""

from __future__ import annotations

import ast
import json

import pytest
from support.openai_server import ScriptedOpenAIServer
from support.repair_run import run_repair

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.paths import tasks_dir

pytestmark = pytest.mark.slow

SF = 0.01
BROKEN = "SELECT missing_col_q1 FROM store"


def test_tpcds_query_fixed_after_duckdb_error(tpcds_cache, tpcds_items, tmp_path):
    gold = {item.id: item.gold_sql for item in tpcds_items}
    number_by_question = {item.question: item.id for item in tpcds_items}

    def answer(prompt: str) -> str:
        if "missing_col_q1" in prompt:  # the feedback turn: DuckDB's error names the column
            return f"```sql\n{gold[1]}\n```"
        for question, number in number_by_question.items():
            if f"Question: {question}\n" in prompt:
                return f"```sql\n{BROKEN if number == 1 else gold[number]}\n```"
        raise AssertionError("prompt without a known question")

    metadata = {"scale_factor": SF, "cache_dir": str(tpcds_cache)}
    with ScriptedOpenAIServer(answer) as server:
        results, samples = run_repair(
            server,
            "tpcds",
            tmp_path,
            extra_args=[
                "--include_path", str(tasks_dir()), "--limit", "2",
                "--metadata", json.dumps(metadata),
            ],
            env={"SQLBENCH_LMEVAL_CACHE": str(tpcds_cache)},
        )  # fmt: skip
        seen = list(server.requests)
    by_number = {s["doc"]["query_nr"]: s for s in samples["tpcds"]}
    assert sorted(by_number) == [1, 2]
    for number, expected in ((1, (0, 0, 1, 1, 1)), (2, (1, 1, 1, 1, 0))):
        sample = by_number[number]
        got = tuple(sample[k] for k in ("ves", "ex", "ves@retry", "ex@retry", "retries_used"))
        assert got == expected, number
    attempts = ast.literal_eval(by_number[1]["filtered_resps"][0])["attempts"]
    assert [a["status"] for a in attempts] == ["error", "ok"]
    (feedback,) = [r for r in seen if "missing_col_q1" in r.prompt]
    assert attempts[0]["error"] in feedback.prompt  # DuckDB's message reached the model
    metrics = results["results"]["tpcds"]
    assert (metrics["ves,score"], metrics["ves@retry,score"]) == (0.5, 1.0)
    assert (metrics["ex,score"], metrics["ex@retry,score"]) == (0.5, 1.0)
    assert metrics["retries_used,score"] == 0.5

    # Offline: `score tpcds` on the logged envelopes gives the same numbers, item by item.
    predictions = tmp_path / "retried.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": s["doc"]["id"], "prediction": s["resps"][0][0]}) + "\n"
            for s in samples["tpcds"]
        )
    )
    output = tmp_path / "scores.json"
    # In-process (the CLI's own main): a second interpreter would only import again what this
    # one holds; `python -m sqlbench_lmeval` itself is tested in tests/test_cli.py.
    assert main(
        [
            "score", "tpcds", str(predictions), "--scale-factor", str(SF),
            "--cache-dir", str(tpcds_cache), "--output", str(output), "--no-progress",
        ]
    ) == 0  # fmt: skip
    scored = {item["id"]: item for item in json.loads(output.read_text())["items"]}
    names = ("ves", "ex", "ves@retry", "ex@retry", "retries_used", "structural_similarity")
    for sample in samples["tpcds"]:
        item = scored[sample["doc"]["id"]]
        assert {n: item[n] for n in names} == {n: sample[n] for n in names}
        logged = ast.literal_eval(sample["filtered_resps"][0])
        assert (item["attempts"], item["final_status"]) == (logged["attempts"], "ok")
