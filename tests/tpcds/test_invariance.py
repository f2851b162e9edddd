"""A score is a function of the answers alone: the same answers give byte-identical score files
whatever the worker count, and no answer changes another's score, not even one that tries to
change its worker's DuckDB connection for the answers after it
(docs/engines.md#no-answer-changes-another).

The answers are TPC-DS's 99 gold queries (q67 among them), scored with ``sqlbench-lmeval score``
on 1, 2 and 4 workers, with q1's answer replaced by a state-changing query: every other item
must score exactly as in the run of gold alone, and the whole score file must be the same bytes
on every worker count.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import TPCDS_SCALE_FACTOR

from sqlbench_lmeval.cli import main

#: Answers that changed a DuckDB connection for every later query on it: logging to a file
#: (every later query failed with "Permission Error"), profiling off (later queries counted
#: another query's work, so r_ves moved).
STATE_CHANGING = {
    "enable_logging": "SELECT * FROM enable_logging(storage = 'file', storage_path = '{folder}')",
    "disable_profiling": "SELECT * FROM disable_profiling()",
}
WORKER_COUNTS = (1, 2, 4)


def score(tpcds_cache: Path, answers: dict[int, str], folder: Path, workers: int) -> bytes:
    """The score file of ``answers`` (id -> SQL) on ``workers`` workers."""
    predictions = folder / "predictions.jsonl"
    predictions.write_text(
        "".join(json.dumps({"id": i, "prediction": sql}) + "\n" for i, sql in answers.items())
    )
    output = folder / f"scores-{workers}.json"
    command = ["score", "tpcds", str(predictions), "--cache-dir", str(tpcds_cache)]
    command += ["--scale-factor", str(TPCDS_SCALE_FACTOR), "--no-progress"]
    assert main([*command, "--workers", str(workers), "-o", str(output)]) == 0
    return output.read_bytes()


def items(score_file: bytes) -> dict[int, str]:
    """Each item's score dict as the file holds it, by id."""
    return {item["id"]: json.dumps(item) for item in json.loads(score_file)["items"]}


@pytest.fixture(scope="module")
def gold_answers(tpcds_items) -> dict[int, str]:
    return {item.id: item.gold_sql for item in tpcds_items}


@pytest.fixture(scope="module")
def gold_alone(tpcds_cache, gold_answers, tmp_path_factory) -> dict[int, str]:
    """The items of the gold answers scored on one worker (every answer matches)."""
    folder = tmp_path_factory.mktemp("gold-alone")
    scored = items(score(tpcds_cache, gold_answers, folder, workers=1))
    assert {json.loads(item)["ex"] for item in scored.values()} == {1}
    return scored


@pytest.mark.parametrize("case", sorted(STATE_CHANGING))
def test_a_state_changing_answer_changes_no_score_on_any_worker_count(
    case, tpcds_cache, gold_answers, gold_alone, tmp_path
):
    answers = dict(gold_answers)
    answers[1] = STATE_CHANGING[case].format(folder=tmp_path / "log")
    files = {}
    for workers in WORKER_COUNTS:
        folder = tmp_path / f"workers-{workers}"
        folder.mkdir()
        files[workers] = score(tpcds_cache, answers, folder, workers)
    scored = items(files[1])
    # Every other answer scores as it does beside gold alone, key for key; and the whole score
    # file is the same bytes on every worker count (both said at once when both fail).
    changed = sorted(i for i in gold_answers if i != 1 and scored[i] != gold_alone[i])
    differing = [workers for workers in WORKER_COUNTS if files[workers] != files[1]]
    assert (changed, differing) == ([], []), (
        f"{case}: {len(changed)} items scored differently beside it ({changed[:5]}...); "
        f"score files differ from 1 worker's on {differing} workers"
    )
    # The answer itself is refused before it runs, so it wrote nothing.
    assert json.loads(scored[1])["status"] == "error"
    assert not (tmp_path / "log").exists()
