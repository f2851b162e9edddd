"""The explorer over two ``sqlbench-lmeval score`` files of real LogicCat items (the real
upstream data, built once per session; slow)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from sqlbench_lmeval import cli
from sqlbench_lmeval.logiccat import bundle
from sqlbench_lmeval.report import read_runs
from sqlbench_lmeval.report.explorer import explorer_data

pytestmark = pytest.mark.slow


def _gold_rows(path: str, sql: str) -> list[tuple]:
    # Read-only and independent of the scorer: what SQLite itself returns for gold.
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        return connection.execute(sql).fetchall()


def test_score_files_over_real_items_carry_what_the_explorer_shows(logiccat_cache, tmp_path):
    records = [r for r in bundle.load_bundle(logiccat_cache).records if r.gold_sql][:2]
    first, second = records
    answers = {
        # "echo" answers both items with gold's SQL; "broken" names a table that does not exist.
        "echo": {r.id: f"```sql\n{r.gold_sql}\n```" for r in records},
        "broken": {r.id: "SELECT * FROM no_such_table_here" for r in records},
    }
    scores = {}
    for name, predictions in answers.items():
        path = tmp_path / f"{name}.jsonl"
        lines = (json.dumps({"id": i, "prediction": p}) for i, p in predictions.items())
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        scores[name] = tmp_path / f"{name}.json"
        argv = ["score", "logiccat", str(path), "-o", str(scores[name]), "--preview-rows", "3"]
        assert cli.main([*argv, "--cache-dir", str(logiccat_cache), "--no-progress"]) == 0
    data = explorer_data(read_runs([f"{name}={path}" for name, path in scores.items()]))
    by_id = {item["id"]: item for item in data["items"]}
    assert len(by_id) == len(bundle.load_bundle(logiccat_cache).records)  # every item is a row
    item = by_id[first.id]
    assert item["question"] == first.question
    assert item["gold_sql"] == first.gold_sql
    # The score file names the database relative to the cache, never by this machine's folders.
    assert not item["db_path"].startswith("/")
    assert str(logiccat_cache) not in scores["echo"].read_text(encoding="utf-8")
    rows = _gold_rows(str(logiccat_cache / item["db_path"]), first.gold_sql)
    assert item["gold_preview"]["row_count"] == len(rows)
    assert len(item["gold_preview"]["rows"]) == min(3, len(rows))
    echo, broken = item["results"]
    assert echo["preview"] == item["gold_preview"]
    assert broken["verdict"] == "error"
    assert broken["label"] == "error: no such table"
    assert broken["error"] == "no such table: no_such_table_here"
    # An item neither model was given is "missing" in both runs.
    unanswered = next(i for i in data["items"] if i["id"] not in (first.id, second.id))
    assert [r["verdict"] for r in unanswered["results"]] == ["missing", "missing"]
