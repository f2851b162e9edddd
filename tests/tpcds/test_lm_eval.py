"""The TPC-DS tasks through the real ``lm_eval`` CLI, one run for every test here (lm-eval's
start-up is paid once): ``tpcds`` and ``tpcds_postgres`` answered with gold, and ``tpcds_sc``,
the sampled variant (``sqlbench_lmeval/scoring/sampled.py``), with planned answers; then
``verify`` on what that run wrote for ``tpcds_sc`` (its own sampling settings are not a finding,
every sample is re-scored, the voted numbers the run claims agree with ours)."""

from __future__ import annotations

import ast
import glob
import json
from collections import defaultdict
from pathlib import Path

import pytest
from support.lm_eval_run import run_lm_eval
from support.openai_server import RequestAnswer

from sqlbench_lmeval.paths import tasks_dir
from sqlbench_lmeval.report.runs import read_runs
from sqlbench_lmeval.report.sections.complexity import complexity_rows
from sqlbench_lmeval.sql.complexity import COMPLEXITY
from sqlbench_lmeval.sql.structure import SIMILARITY_METRICS
from sqlbench_lmeval.submission.logged import read_submissions
from sqlbench_lmeval.submission.verify import verify_submission
from sqlbench_lmeval.tpcds.benchmark import load_items, transpile_prediction

pytestmark = pytest.mark.slow


SF = 0.01  # the session database (conftest.py)
# Documents per task: queries 1-4, two of whose gold results are empty at sf 0.01 (3 and 4),
# two not. Gold against itself and the PostgreSQL round trip of all 99 queries are checked
# in-process (tests/tpcds/test_benchmark.py, test_dialect.py); this run checks the lm_eval path.
LIMIT = 4
POSTGRES_ASK = "Write one PostgreSQL SQL query"
WRONG_SQL = "SELECT 42 AS answer"
PROSE = "I cannot write this query."
SAMPLED = "tpcds_sc"


@pytest.fixture(scope="module")
def tpcds_run(tpcds_cache, tpcds_items, postgres_gold, tmp_path_factory):
    """One ``lm_eval --tasks tpcds,tpcds_postgres,tpcds_sc`` run on the first ``LIMIT``
    documents of each. The greedy requests (``tpcds``, ``tpcds_postgres``; temperature 0) get
    gold in a fenced block: DuckDB's gold when the prompt asks for DuckDB, gold as sqlglot's
    PostgreSQL writer writes it when the prompt asks for PostgreSQL (a wrong pick fails the
    SQL and dialect assertions below). The sampled task's requests (temperature 0.7) get, per
    question, 5 gold answers, 1 wrong query and 2 prose answers, in that order. Returns
    (results, samples, greedy prompts, the model folder lm-eval wrote)."""
    number_by_question = {item.question: item.id for item in tpcds_items}
    gold = {item.id: item.gold_sql for item in tpcds_items}
    prompts = []
    asked = defaultdict(int)

    def number_asked(prompt: str) -> int:
        for question, number in number_by_question.items():
            if f"Question: {question}\n" in prompt:
                return number
        raise AssertionError("prompt without a known question")

    def answer(prompt: str, body: dict) -> str:
        number = number_asked(prompt)
        if body["temperature"] == 0:
            prompts.append(prompt)
            written = postgres_gold if POSTGRES_ASK in prompt else gold
            return f"Here you go:\n```sql\n{written[number]}\n```"
        index = asked[number] % 8
        asked[number] += 1
        return f"```sql\n{gold[number]}\n```" if index < 5 else WRONG_SQL if index == 5 else PROSE

    workdir = tmp_path_factory.mktemp("tpcds_lm_eval")
    metadata = {"scale_factor": SF, "cache_dir": str(tpcds_cache)}
    results, samples = run_lm_eval(
        ["tpcds", "tpcds_postgres", SAMPLED],
        answer=RequestAnswer(answer),
        include_path=tasks_dir(),
        workdir=workdir,
        extra_args=["--limit", str(LIMIT), "--metadata", json.dumps(metadata)],
        env={"SQLBENCH_LMEVAL_CACHE": str(tpcds_cache)},
    )
    (folder,) = [
        Path(p).parent for p in glob.glob(str(workdir / "lm_eval_output" / "*" / "results_*.json"))
    ]
    return results, samples, prompts, folder


def prompt_of(record: dict) -> str:
    """The prompt text lm-eval sent for a logged sample (completions: the first argument)."""
    return record["arguments"]["gen_args_0"]["arg_0"]


def test_gold_answers_score_ex_and_similarity_one(tpcds_run):
    results, samples, _, _ = tpcds_run
    metrics = results["results"]["tpcds"]
    assert metrics["ves,score"] == 1.0
    for name in SIMILARITY_METRICS:
        assert metrics[f"{name},score"] == 1.0, name
    records = samples["tpcds"]
    assert len(records) == LIMIT
    assert metrics["ex,score"] == 1.0  # gold's own result, even where it is empty at sf 0.01
    for record in records:
        assert POSTGRES_ASK not in prompt_of(record)
        assert record["doc"]["id"] == record["doc"]["query_nr"]
        assert record["ex"] == 1.0
        assert record["parsed"] == 1.0
        # Gold's counts are in the item's score dict only, not among lm-eval's numbers.
        logged = ast.literal_eval(record["filtered_resps"][0])
        assert record["join_count"] == logged["join_count"] == logged["gold_join_count"]
        assert "gold_join_count" not in record
    assert not [key for key in metrics if key.startswith("gold_")]


def test_the_report_reads_golds_counts_from_the_samples_log(tpcds_run):
    """Gold's complexity counts are in no row of lm-eval's table: the report's complexity
    section reads them from each item's score dict. Every ``tpcds`` answer is gold's own
    text, so each count's mean equals gold's over all ``LIMIT`` items (ratio 1)."""
    _, _, _, folder = tpcds_run
    (run,) = read_runs([str(folder)])
    (row,) = [row for row in complexity_rows([run]) if row.view == "tpcds"]
    assert set(row.counts) == set(COMPLEXITY)
    for name, (model, gold, items) in row.counts.items():
        assert (model, items) == (gold, LIMIT), name
    assert row.counts["join_count"][1] > 0  # queries 1-4 each join tables
    assert row.ratio("join_count") == 1.0


def test_tpcds_postgres_prompts_and_translates(tpcds_run, tpcds_cache, postgres_gold):
    """The paper's setting: the prompt asks for PostgreSQL, each answer (gold as sqlglot's
    PostgreSQL writer writes it) runs translated to DuckDB, and the log keeps both texts."""
    results, samples, prompts, _ = tpcds_run
    written = postgres_gold
    asked = {item.id: item for item in load_items(tpcds_cache, SF, dialect="postgres")}
    assert len(prompts) == 2 * LIMIT  # one greedy request per document of each task
    assert sum(POSTGRES_ASK in prompt for prompt in prompts) == LIMIT
    assert results["results"]["tpcds_postgres"]["ex,score"] == 1.0
    records = samples["tpcds_postgres"]
    assert len(records) == LIMIT
    for record in records:
        assert POSTGRES_ASK in prompt_of(record)
        (logged,) = record["filtered_resps"]  # lm-eval logs our score dict as its repr
        logged = ast.literal_eval(logged)
        number = record["doc"]["id"]
        assert record["doc"]["prediction_dialect"] == "postgres"
        assert logged["prediction_dialect"] == "postgres" and logged["parsed_dialect"] == "postgres"
        assert logged["extracted_sql"] == written[number].strip()
        assert logged["executed_sql"] == transpile_prediction(asked[number], written[number])
        assert record["ex"] == 1.0


def test_tpcds_sc_reports_voted_and_mean_similarity(tpcds_run):
    # Gold's group (5) outvotes the wrong one (1): ex_maj 1, and the voted answer is
    # gold, whose structural similarity to gold is 1. Prose has no SQL and scores 0 on every
    # similarity; the wrong query's similarity s is logged in its sample. So the mean over
    # samples is (5 * 1 + s + 2 * 0) / 8. c = 5 of 8: pass@1 5/8, pass@4 1 (8-5 < 4).
    results, samples, _, _ = tpcds_run
    records = samples[SAMPLED]
    assert len(records) == LIMIT
    for record in records:
        score = ast.literal_eval(record["filtered_resps"][0])
        wrong = [s for s in score["samples"] if s["extracted_sql"] == WRONG_SQL]
        assert len(wrong) == 1
        assert record["ex_maj"] == 1
        assert record["structural_similarity"] == 1.0
        assert record["structural_similarity_mean"] == pytest.approx(
            (5 + wrong[0]["structural_similarity"]) / 8
        )
        assert wrong[0]["structural_similarity"] < 1.0
        assert record["pass_at_1"] == pytest.approx(5 / 8) and record["pass_at_4"] == 1.0
        assert score["vote"]["n_distinct"] == 3  # gold, the wrong query, prose
    task = results["results"][SAMPLED]
    assert task["structural_similarity,score"] == 1.0
    assert task["ex_maj,score"] == 1.0


def test_a_sampled_run_verifies_with_its_own_settings(tpcds_run, tpcds_cache):
    """``verify`` on the run above (8 answers per item at temperature 0.7): no finding about
    its sampling settings or its numbers; the items it did not run are missing, and the ones
    it ran are found pasting gold (5 of each item's 8 samples are gold's own text)."""
    _, samples, _, folder = tpcds_run
    (submission,) = read_submissions(str(folder), task=SAMPLED)
    (logged,) = submission.tasks
    assert [len(answer.outputs) for answer in logged.answers] == [8] * LIMIT
    verification = verify_submission(submission, cache_dir=tpcds_cache, workers=2)
    (task,) = verification.tasks
    problems = {f.code: f.items for f in task.findings if f.severity != "info"}
    ran = {record["doc"]["id"] for record in samples[SAMPLED]}
    assert set(problems) == {"missing_items", "gold_verbatim"}
    assert len(problems["missing_items"]) == 99 - LIMIT
    assert ran.isdisjoint(problems["missing_items"])
    assert set(problems["gold_verbatim"]) == ran
    # The numbers the run claims, which verify re-computed without a finding, by hand: gold
    # wins the vote on every item (ex_maj 1); c = 5 correct samples of 8 (pass@1 5/8,
    # pass@8 1).
    assert task.metrics_logged["ex_maj"] == 1 and task.metrics_logged["pass_at_8"] == 1
    assert task.metrics_logged["pass_at_1"] == pytest.approx(5 / 8)
    assert task.metrics_logged["n"] == LIMIT and task.facts["repeats"] == 8
