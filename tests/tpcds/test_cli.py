"""``sqlbench-lmeval prepare tpcds``, ``sqlbench-lmeval complexity`` and ``score``'s efficiency
numbers."""

from __future__ import annotations

import json

import pytest
from conftest import TPCDS_SCALE_FACTOR

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.scoring.metrics import GOLD_WORK, R_VES, WORK
from sqlbench_lmeval.tpcds.data import empty_gold_summary


def test_prepare_tpcds_reports_the_database_and_its_empty_gold_queries(
    tpcds_cache, tpcds_manifest, capsys
):
    code = main(["prepare", "tpcds", "--cache-dir", str(tpcds_cache), "--scale-factor", "0.01"])
    out = capsys.readouterr().out
    assert code == 0
    assert "tpcds: scale factor 0.01 database at " in out
    # Query numbers, never mistaken for a count.
    empty = [n for n, rows in tpcds_manifest["gold_row_counts"].items() if rows == 0]
    assert f"{len(empty)} gold queries return no rows at this scale: q3, q4, q8," in out
    assert out.count("return no rows at this scale") == 1  # said once


def test_a_fresh_prepare_names_the_empty_gold_queries_once(tmp_path, capsys):
    """A build's own progress lines and prepare's summary: the empty gold queries once."""
    cache = tmp_path / "cache"
    code = main(["prepare", "tpcds", "--cache-dir", str(cache), "--scale-factor", "0.01"])
    out = capsys.readouterr().out
    assert code == 0
    assert "building the TPC-DS database at scale factor 0.01" in out
    assert out.count("return no rows at this scale") == 1, out


@pytest.mark.parametrize(
    ("numbers", "said"),
    [
        ([], "every gold query returns rows at this scale"),
        ([17], "1 gold query returns no rows at this scale: q17"),
        ([3, 17], "2 gold queries return no rows at this scale: q3, q17"),
    ],
)
def test_empty_gold_queries_are_named_not_counted(numbers, said):
    assert empty_gold_summary(numbers) == said


def test_prepare_with_a_bad_scale_factor_is_a_user_error(tmp_path, capsys):
    code = main(["prepare", "tpcds", "--cache-dir", str(tmp_path), "--scale-factor", "0"])
    assert code == 2
    assert "scale factor must be" in capsys.readouterr().err


def test_complexity_prints_the_means_of_the_gold_workload(capsys):
    assert main(["complexity", "tpcds"]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:8] == [
        "workload",
        "queries",
        "distinct_column_count",
        "join_count",
        "where_predicate_count",
        "cte_count",
        "function_call_count",
        "subquery_count",
    ]
    # The gold means of tests/sql/test_complexity_counts.py::GOLD_MEANS (reasons for them there).
    assert row.split() == ["tpcds", "99", "18.74", "5.59", "13.67", "0.67", "5.32", "1.57", "0.68"]


def test_complexity_of_an_unknown_workload_is_a_user_error(capsys):
    assert main(["complexity", "nosuch"]) == 2
    assert "nosuch" in capsys.readouterr().err


def test_gold_tpcds_writes_every_gold_result(tpcds_cache, tmp_path, capsys):
    import json

    output = tmp_path / "gold.jsonl"
    code = main(
        ["gold", "tpcds", "--cache-dir", str(tpcds_cache), "--scale-factor", "0.01",
         "--output", str(output), "--no-progress"]
    )  # fmt: skip
    assert code == 0
    lines = [json.loads(line) for line in output.read_text("utf-8").splitlines()]
    assert [line["id"] for line in lines] == list(range(1, 100))
    assert {line["status"] for line in lines} == {"ok"}
    # At sf 0.01 query 3 returns no rows (see the prepare test above); it is judged, not hidden.
    assert lines[2]["gold_status"] == "empty" and lines[2]["rows"] == []
    assert lines[0]["columns"] and lines[0]["gold_status"] == "ok"
    assert "tpcds: gold results of 99 items" in capsys.readouterr().out


def test_score_tpcds_reports_structure_and_execution(tpcds_cache, tpcds_items, tmp_path, capsys):
    import json

    gold = {item.id: item.gold_sql for item in tpcds_items}
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        json.dumps({"id": 1, "prediction": f"```sql\n{gold[1]}\n```"}) + "\n"
        + json.dumps({"id": 2, "prediction": "SELECT 1"}) + "\n"
    )  # fmt: skip
    output = tmp_path / "scores.json"
    code = main(
        ["score", "tpcds", str(predictions), "--cache-dir", str(tpcds_cache),
         "--scale-factor", "0.01", "--output", str(output), "--no-progress"]
    )  # fmt: skip
    assert code == 0
    result = json.loads(output.read_text("utf-8"))
    items = {item["id"]: item for item in result["items"]}
    assert (items[1]["ex"], items[1]["structural_similarity"]) == (1, 1.0)
    assert items[2]["ves"] == 1 and items[2]["ex"] == 0 and items[2]["structural_similarity"] < 0.5
    assert items[3]["status"] == "missing" and items[3]["structural_similarity"] == 0.0
    assert len(result["missing_ids"]) == 97
    assert result["metrics"]["n"] == 99
    assert result["metrics"]["ex"] == 1 / 99
    # The summary line shows TPC-DS's primary metric beside the execution ones.
    summary = capsys.readouterr().out.splitlines()[0]
    similarity = result["metrics"]["structural_similarity"]
    assert 1 / 99 <= similarity < 1.5 / 99  # item 1 scores 1.0, item 2 below 0.5, the rest 0
    assert f"structural_similarity={similarity:.4f}" in summary


def test_score_reports_r_ves_and_on_request_birds_timed_r_ves(
    tpcds_cache, tpcds_items, tmp_path, capsys
):
    (gold,) = [item for item in tpcds_items if item.id == 1]
    predictions = tmp_path / "predictions.jsonl"
    lines = [{"id": 1, "prediction": gold.gold_sql}, {"id": 2, "prediction": "SELECT 1"}]
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "scores.json"
    common = ["score", "tpcds", str(predictions), "--cache-dir", str(tpcds_cache)]
    common += ["--scale-factor", str(TPCDS_SCALE_FACTOR), "--no-progress", "--workers", "1"]
    assert main([*common, "-o", str(out), "--r-ves-time", "3"]) == 0
    result = json.loads(out.read_text())
    by_id = {score["id"]: score for score in result["items"]}
    assert result["work_unit"] and result["r_ves_time_iterations"] == 3
    assert by_id[1][R_VES] == 1.0 and by_id[1][WORK] == by_id[1][GOLD_WORK] > 0
    assert by_id[1]["r_ves_time"] > 0 and by_id[2]["r_ves_time"] == 0.0
    assert "r_ves=" in capsys.readouterr().out
    # Without the option nothing is timed.
    assert main([*common, "-o", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["r_ves_time_iterations"] is None
    assert all("r_ves_time" not in score for score in result["items"])


def _recording_execution(monkeypatch) -> list:
    """The SQL of every query the gold cache sends to the worker pool from now on (the pool
    still runs them)."""
    from sqlbench_lmeval.execution import cache

    sent = []
    run = cache.execute_many

    def record(jobs, *args, **kwargs):
        jobs = list(jobs)
        sent.extend(job.sql for job in jobs)
        return run(jobs, *args, **kwargs)

    monkeypatch.setattr(cache, "execute_many", record)
    return sent


def test_prepare_tpcds_fills_the_gold_cache_that_gold_and_score_read(
    tpcds_cache, tpcds_manifest, tmp_path, monkeypatch, capsys
):
    import shutil

    from sqlbench_lmeval.paths import gold_cache_dir
    from sqlbench_lmeval.tpcds.data import gold_queries

    gold_sql = set(gold_queries().values())
    base = ["--scale-factor", str(TPCDS_SCALE_FACTOR)]
    fresh, copied = tmp_path / "fresh", tmp_path / "copied"
    # A first build runs the gold sandboxed through the cache (and counts its rows from it).
    assert main(["prepare", "tpcds", "--cache-dir", str(fresh), *base]) == 0
    assert gold_cache_dir(fresh).is_dir()
    assert "running the 99 gold queries once" in capsys.readouterr().out
    # A database built without a gold cache beside it (another cache's, an older build, a
    # cleared cache): prepare runs the gold into the cache, and builds nothing.
    shutil.copytree(tpcds_cache / "tpcds", copied / "tpcds")
    sent = _recording_execution(monkeypatch)
    assert main(["prepare", "tpcds", "--cache-dir", str(copied), *base]) == 0
    assert "building" not in capsys.readouterr().out
    assert gold_sql <= set(sent)  # and gold's tie probes

    sent.clear()
    output = tmp_path / "gold.jsonl"
    command = ["gold", "tpcds", "--cache-dir", str(copied), *base, "-o", str(output)]
    assert main([*command, "--no-progress"]) == 0
    assert sent == []  # every gold result came from the cache
    lines = [json.loads(line) for line in output.read_text("utf-8").splitlines()]
    assert len(lines) == 99
    empty = [line["id"] for line in lines if line["gold_status"] == "empty"]
    assert empty == [int(n) for n, rows in tpcds_manifest["gold_row_counts"].items() if not rows]

    # Scoring reads the same entries, and the records of gold's ties (one score: each costs
    # seconds of structure parsing).
    sent.clear()
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"id": 1, "prediction": "SELECT 1"}) + "\n")
    command = ["score", "tpcds", str(predictions), "--cache-dir", str(fresh), *base]
    assert main([*command, "-o", str(tmp_path / "scores.json"), "--no-progress"]) == 0
    assert sent == ["SELECT 1"]  # only the answer ran
