"""``--model sqlbench-repair`` on ``tpcds_postgres`` run natively on PostgreSQL (the paper's
setting), real ``lm_eval`` CLI, sf 0.01 loaded by the session's ``prepare`` (``conftest.py``).

The scripted model answers in PostgreSQL:

- query 1: first with a column that does not exist; only a feedback turn carrying
  PostgreSQL's own error (``column "missing_col_q1" does not exist``) gets gold's text;
- query 2: gold's text at once;
- query 3: first ``SELECT pg_sleep(30)``, which the 2 s time limit stops; the feedback turn
  gets an answer that runs but returns another result (``SELECT 1``).

So (ves, ex, ves@retry, ex@retry, retries_used) is (0, 0, 1, 1, 1), (1, 1, 1, 1, 0) and
(0, 0, 1, 0, 1): gold's own text returns gold's result (tests/tpcds/test_postgres.py), the
others do not run or return one row of 1 where gold (query 3, at sf 0.01) returns none.
Then, on what the run wrote: ``score tpcds_postgres RUN`` scores the run as it was run (its
items, its engine) and agrees with the run item by item; ``verify``
re-scores it on PostgreSQL and records the engine; ``report`` prints the paper's Table 3 beside
the run's count and, beside a score of the same answers on DuckDB, the verdicts that change
with the engine.
"""

from __future__ import annotations

import ast
import json

import pytest
from support.openai_server import ScriptedOpenAIServer
from support.repair_run import run_repair

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.paths import tasks_dir
from sqlbench_lmeval.scoring.metrics import R_VES

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

SF = 0.01
BROKEN = "SELECT missing_col_q1 FROM store"
SLEEP = "SELECT pg_sleep(30)"
WRONG = "SELECT 1"
EXPECTED = {  # (ves, ex, ves@retry, ex@retry, retries_used)
    1: (0, 0, 1, 1, 1),
    2: (1, 1, 1, 1, 0),
    3: (0, 0, 1, 0, 1),
}


def test_tpcds_postgres_natively_with_retries(tpcds_postgres, tpcds_cache, tmp_path, capsys):
    gold = {int(n): g["sql"] for n, g in tpcds_postgres["gold"].items()}
    # Gold returns rows for 1 and 2; 3's is empty at sf 0.01 (one row of 1 is not empty).
    statuses = [tpcds_postgres["gold"][str(n)]["status"] for n in (1, 2, 3)]
    assert statuses == ["ok", "ok", "empty"]
    from sqlbench_lmeval.tpcds.questions import load_questions

    number_by_question = {q: n for n, q in load_questions().items()}

    def answer(prompt: str) -> str:
        if 'column "missing_col_q1" does not exist' in prompt:  # PostgreSQL's own message
            return f"```sql\n{gold[1]}\n```"
        if "ran past the answers' limit of 2 s" in prompt:  # a timeout, also run again alone
            return f"```sql\n{WRONG}\n```"
        for question, number in number_by_question.items():
            if f"Question: {question}\n" in prompt:
                first = {1: BROKEN, 3: SLEEP}.get(number, gold[number])
                return f"```sql\n{first}\n```"
        raise AssertionError("prompt without a known question")

    metadata = {"scale_factor": SF, "cache_dir": str(tpcds_cache), "engine": "postgres"}
    with ScriptedOpenAIServer(answer) as server:
        results, samples = run_repair(
            server,
            "tpcds_postgres",
            tmp_path,
            extra_args=[
                "--include_path", str(tasks_dir()), "--limit", "3",
                "--metadata", json.dumps(metadata),
            ],
            env={"SQLBENCH_LMEVAL_CACHE": str(tpcds_cache), "SQLBENCH_LMEVAL_TIMEOUT": "2"},
        )  # fmt: skip
        prompts = [r.prompt for r in server.requests]
    run = tmp_path / "out"  # the lm-eval output folder
    logged = samples["tpcds_postgres"]
    by_number = {s["doc"]["query_nr"]: s for s in logged}
    assert sorted(by_number) == [1, 2, 3]
    names = ("ves", "ex", "ves@retry", "ex@retry", "retries_used")
    for number, expected in EXPECTED.items():
        sample = by_number[number]
        assert tuple(sample[k] for k in names) == expected, number
        assert (
            sample["doc"]["engine"] == "postgres"
            and "-postgres" in sample["doc"]["dataset_version"]
        )
        assert "You are given a PostgreSQL database" in str(sample["arguments"])
    attempts = {
        n: ast.literal_eval(s["filtered_resps"][0])["attempts"] for n, s in by_number.items()
    }
    assert [a["status"] for a in attempts[1]] == ["error", "ok"]
    assert [a["status"] for a in attempts[3]] == ["timeout", "ok"]
    assert any(attempts[1][0]["error"] in prompt for prompt in prompts)  # the feedback turn
    metrics = results["results"]["tpcds_postgres"]
    assert metrics["ves,score"] == pytest.approx(1 / 3)
    # PostgreSQL counts no work: r_ves is not defined there, so lm-eval's table has no r_ves
    # row (not a 0) and no sample carries it; the run still ends with its other metrics.
    assert not [key for key in metrics if key.startswith(R_VES)]
    assert all(R_VES not in s and R_VES not in s["metrics"] for s in logged)
    assert metrics["ves@retry,score"] == 1.0
    assert metrics["ex@retry,score"] == pytest.approx(2 / 3)
    assert metrics["retries_used,score"] == pytest.approx(2 / 3)
    # No password anywhere in what the run wrote.
    from sqlbench_lmeval.execution.postgres_admin import read_passfile
    from sqlbench_lmeval.tpcds import postgres

    database = postgres.database_name(SF)
    password = read_passfile(
        postgres.passfile_path(tpcds_cache, database), postgres.reader_role(database)
    )
    written = "".join(p.read_text() for p in run.rglob("*") if p.is_file())
    assert password and password not in written

    # Offline: `score TASK RUN` scores the run as it was run (its task, its 3 items, its
    # engine, the logged attempts), in agreement item by item.
    limit = ["--timeout", "2"]  # the run's
    data = ["--scale-factor", str(SF), "--cache-dir", str(tpcds_cache), *limit, "--no-progress"]
    as_run = tmp_path / "as-run.json"
    assert main(["score", "tpcds_postgres", str(run), *data, "-o", str(as_run)]) == 0
    scored = json.loads(as_run.read_text())
    assert (scored["task"], scored["engine"]) == ("tpcds_postgres", "postgres")
    items = {item["id"]: item for item in scored["items"]}
    assert sorted(items) == [1, 2, 3]
    compared = (*names, "structural_similarity")
    for sample in logged:
        item = items[sample["doc"]["id"]]
        assert {n: item[n] for n in compared} == {n: sample[n] for n in compared}
        assert R_VES not in item
    assert R_VES not in scored["metrics"]
    assert "r_ves: not defined on postgres: it counts no work" in capsys.readouterr().out
    # The same answers on DuckDB (translated from PostgreSQL): another engine's run, which
    # counts work: every item has r_ves, and the wrong first answer to query 1 scores 0.
    on_duckdb = tmp_path / "on-duckdb.json"
    command = ["score", "tpcds_postgres", str(run), "--engine", "duckdb", *data]
    assert main([*command, "-o", str(on_duckdb)]) == 0
    duckdb_run = json.loads(on_duckdb.read_text())
    assert duckdb_run["engine"] == "duckdb"
    duckdb_items = {item["id"]: item for item in duckdb_run["items"]}
    assert all(R_VES in item for item in duckdb_items.values())
    assert duckdb_items[1]["ex"] == 0 and duckdb_items[1][R_VES] == 0
    assert "not defined" not in capsys.readouterr().out

    # verify: re-scored on PostgreSQL under the run's limit, the engine recorded as run.
    from sqlbench_lmeval.submission.logged import read_submissions
    from sqlbench_lmeval.submission.verify import run_limits, verify_submission

    (submission,) = read_submissions(str(run))
    assert run_limits(submission).timeout_s == 60.0  # the postgres engine's default
    verification = verify_submission(
        submission, cache_dir=tpcds_cache, limits=run_limits(submission, timeout_s=2), workers=2
    )
    (task,) = verification.tasks
    assert task.facts["engine"] == "postgres" and "-postgres" in task.dataset_version
    assert not [f for f in task.findings if f.check == "rescoring" and f.severity != "info"]
    assert task.metrics_logged["ex@retry"] == pytest.approx(2 / 3)
    from sqlbench_lmeval.report.tables import to_markdown
    from sqlbench_lmeval.submission.verify_report import sections

    reason = "not defined on postgres: it counts no work"
    assert R_VES not in task.metrics
    assert f"| {R_VES} | {reason} | {reason} |" in to_markdown("verify", sections(verification))

    # The report: the run's count after 3 retries beside the paper's Table 3, and the verdicts
    # that change with the engine.
    report = tmp_path / "report"
    runs = [f"postgres={run}", f"duckdb={on_duckdb}"]
    assert main(["report", *runs, "-o", str(report)]) == 0
    text = (report / "report.md").read_text()
    assert "arXiv:2407.19517, Table 3" in text and "| gpt-4 | 94 |" in text
    assert "| codellama-7b | 17 |" in text
    # The lm_eval run is a --limit run: the report marks its name wherever it appears.
    assert "postgres [--limit 3] on postgres against duckdb [--limit 3] on duckdb" in text
    # R-VES beside DuckDB's numbers: not defined for the PostgreSQL run, never a 0.
    assert f"R-VES (work) of postgres [--limit 3]: {reason}." in text
