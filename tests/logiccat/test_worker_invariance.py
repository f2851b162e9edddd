"""A LogicCat score is a function of the answers alone: the same answers give byte-identical score
files on 1, 2 and 4 workers (docs/failures.md#an-answer-that-runs-out-of-time,
docs/engines.md#no-answer-changes-another).

Two sets of answers, each scored with ``sqlbench-lmeval score`` on every worker count:

- gold as the answer on every item (4,036 less the four flagged ``random``): the most
  data-dependence runs on the perturbed copies there can be, every answer matching;
- a mix over every third of those items (every database still among them; the suite's time),
  by item id: gold, a count of gold's rows, gold's first row (``LIMIT 1``: part of gold's rows,
  which the copies judge), a failing query and a constant.

What each run does in parallel (which worker runs which answer, when an answer's runs on the
copies start) differs between worker counts; the files must not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.offline import task_items
from sqlbench_lmeval.scoring.answer import UNREPEATABLE_FLAGS

WORKER_COUNTS = (1, 2, 4)
#: The mix answers every third item: ids 0, 3, 6, ... still cover each kind of answer (id % 5).
MIX_EVERY = 3

pytestmark = pytest.mark.slow  # builds the real LogicCat bundle (tests/logiccat/conftest.py)


def mixed(item) -> str:
    """One answer per item, of five kinds chosen by its id."""
    kind = item.id % 5
    if kind == 0:
        return item.gold_sql
    if kind == 1:
        return f"SELECT COUNT(*) FROM ({item.gold_sql}) AS t"
    if kind == 2:
        return f"SELECT * FROM ({item.gold_sql}) AS t LIMIT 1"
    if kind == 3:
        return "SELECT no_such_column FROM no_such_table"
    return "SELECT 1"


@pytest.fixture(scope="module")
def repeatable(logiccat_cache):
    """Every item whose gold gives the same result on every run."""
    items = task_items("logiccat", cache_dir=logiccat_cache)
    return [item for item in items if not UNREPEATABLE_FLAGS & set(item.flags)]


def score(cache: Path, answers: dict[int, str], folder: Path, workers: int) -> bytes:
    """The score file of ``answers`` (id -> SQL) on ``workers`` workers."""
    predictions = folder / "predictions.jsonl"
    if not predictions.exists():
        predictions.write_text(
            "".join(json.dumps({"id": i, "prediction": sql}) + "\n" for i, sql in answers.items())
        )
    output = folder / f"scores-{workers}.json"
    command = ["score", "logiccat", str(predictions), "--cache-dir", str(cache), "--no-progress"]
    assert main([*command, "--workers", str(workers), "-o", str(output)]) == 0
    return output.read_bytes()


@pytest.mark.parametrize("answers", ["gold", "mix"])
def test_logiccat_scores_are_the_same_on_any_worker_count(
    answers, repeatable, logiccat_cache, tmp_path
):
    if answers == "gold":
        chosen = {item.id: item.gold_sql for item in repeatable}
    else:
        mixed_items = [item for item in repeatable if item.id % MIX_EVERY == 0]
        databases = {item.database.path for item in repeatable}
        assert {item.database.path for item in mixed_items} == databases  # every database
        chosen = {item.id: mixed(item) for item in mixed_items}
    files = {workers: score(logiccat_cache, chosen, tmp_path, workers) for workers in WORKER_COUNTS}
    everything = json.loads(files[1])["items"]  # the unanswered items too, never submitted
    scores = [score for score in everything if score["id"] in chosen]
    assert len(scores) == len(chosen) > (4000 if answers == "gold" else 4000 // MIX_EVERY)
    differing = [workers for workers in WORKER_COUNTS if files[workers] != files[1]]
    assert not differing, f"score files differ from 1 worker's on {differing} workers: " + (
        _differences(everything, json.loads(files[differing[0]])["items"])
    )
    by_id = {score["id"]: score for score in scores}
    if answers == "gold":  # every healthy gold matches itself and reads the data
        healthy = [s for s in scores if s["gold_status"] == "ok"]
        assert healthy and all(s["ex"] == 1 and not s["reads_no_table"] for s in healthy)
    else:  # each kind of answer is there, and judged as what it is
        assert {by_id[i]["status"] for i in chosen if i % 5 == 3} == {"error"}
        assert any(by_id[i]["ex"] == 0 for i in chosen if i % 5 == 1)
        first_rows = {by_id[i]["ex"] for i in chosen if i % 5 == 2}
        assert first_rows == {0, 1}  # right where gold has one row only


def _differences(before: list[dict], after: list[dict]) -> str:
    shown = []
    for one, other in zip(before, after, strict=True):
        keys = sorted(k for k in one.keys() | other.keys() if one.get(k) != other.get(k))
        if keys:
            shown.append(f"item {one['id']}: { ({k: (one.get(k), other.get(k)) for k in keys}) }")
    return "; ".join(shown[:10])
