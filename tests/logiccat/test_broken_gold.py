"""Gold the benchmark recorded as broken when its data was prepared (gold status ``error`` or
``non_select``) is never a model's ``wrong_result``: an answer that ran gets the verdict and
reason ``broken_gold`` (EX 0, in the denominator), an answer that failed keeps its own verdict
(the rule: docs/scoring.md, "Verdicts"). The expected verdicts below come from that rule.

The fast test uses the hand-written fixture bundle and the real CLI (``score``, ``report``)
and reads the run as ``explore`` does; the slow one the real upstream data.
"""

from __future__ import annotations

import json
import shutil

import pytest

from sqlbench_lmeval import cli
from sqlbench_lmeval.logiccat import bundle
from sqlbench_lmeval.logiccat.benchmark import items_from_bundle
from sqlbench_lmeval.report.analysis import outcome_of
from sqlbench_lmeval.report.explorer import REASONS, explorer_data, verdict_label
from sqlbench_lmeval.report.runs import read_runs
from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.verdicts import aggregate
from sqlbench_lmeval.submission.verify import _item_row

# Real LogicCat item 1701 (database yacht): its gold reads yachts.Fuel_Efficiency, a column
# the table does not have, so it errored when the data was prepared (gold status error).
BROKEN = 1701
RUNS = "SELECT Engine_Power, Fuel_Capacity FROM yachts WHERE Yacht_ID = 2"  # columns it has
ERRS = "SELECT Fuel_Economy FROM yachts"  # no such column either
CUT = "```sql\nSELECT Engine_Power FROM yachts"  # cut off inside its code fence: truncated


@pytest.mark.slow
def test_answers_to_a_real_item_whose_gold_broke_at_build_time(real_bundle):
    (item,) = [item for item in items_from_bundle(real_bundle) if item.id == BROKEN]
    assert item.gold_status == "error" and "Fuel_Efficiency" in item.gold_sql
    answers = [item.gold_sql, RUNS, ERRS, CUT, None]
    scores = Scorer(workers=1, progress=False).score([item] * len(answers), answers)
    got = [(s["status"], s["reason"], s["ves"], s["ex"]) for s in scores]
    assert got == [
        ("error", "pred_error", 0, 0),  # (a) gold itself fails as gold does: the answer's error
        ("ok", "broken_gold", 1, 0),  # (b) it ran: not compared with gold that gave nothing
        ("error", "pred_error", 0, 0),  # (c) an answer that errors: its own error
        ("ok", "truncated", 1, 0),  # it ran, but was cut off: that came first
        ("missing", "missing", 0, 0),
    ]
    assert "no such column: Fuel_Efficiency" in scores[0]["error"]
    ran = scores[1]
    assert ran["ex_strict"] == ran["ex_set"] == ran["ex_reads_data"] == ran["r_ves"] == 0
    assert "ex_on_healthy_gold" not in ran and ran["gold_status"] == "error"
    metrics = aggregate(scores)
    assert metrics["verdict_counts"] == {
        "error": 2,
        "broken_gold": 1,
        "truncated": 1,
        "missing": 1,
    }
    assert (metrics["n"], metrics["ex"], metrics["n_healthy_gold"]) == (5, 0, 0)
    # The report, the explorer and verify class each item the same way.
    expected = ["error", "broken_gold", "error", "truncated", "missing"]
    assert [outcome_of(ScoredItem.from_score(s)) for s in scores] == expected
    rows = [_item_row(ScoredItem.from_score(s), None, None, None) for s in scores]
    assert [row["verdict"] for row in rows] == expected
    assert verdict_label(ScoredItem.from_score(ran)) == "broken gold"


def cached(fixture_bundle, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(fixture_bundle.root, bundle.bundle_dir(cache))
    return cache


def test_score_report_and_explore_count_broken_gold_apart(fixture_bundle, tmp_path, capsys):
    # Fixture items (fixtures/logiccat/shared_layout/records-4036.json): 1 asks for North Hub's
    # efficiency times 14; 7's gold is an UPDATE (non_select); 10's gold reads
    # Stations.Wattage, a column the table does not have (error).
    cache = cached(fixture_bundle, tmp_path)
    items = {item.id: item for item in items_from_bundle(fixture_bundle)}
    assert (items[7].gold_status, items[10].gold_status) == ("non_select", "error")
    predictions = tmp_path / "predictions.jsonl"
    answers = {
        1: items[1].gold_sql,
        7: "SELECT Name, Efficiency FROM Stations",  # runs
        10: "SELECT Capacity_Kw FROM Stations",  # runs
    }
    predictions.write_text(
        "".join(json.dumps({"id": i, "prediction": sql}) + "\n" for i, sql in answers.items()),
        encoding="utf-8",
    )
    scores = tmp_path / "scores.json"
    base = ["--cache-dir", str(cache), "--no-progress"]
    assert cli.main(["score", "logiccat", str(predictions), *base, "-o", str(scores)]) == 0
    printed = capsys.readouterr().out
    # 12 items: 1 right, 2 ran on broken gold, 9 never answered.
    assert "verdicts: correct 1, broken_gold 2, missing 9" in printed
    result = json.loads(scores.read_text("utf-8"))
    metrics = result["metrics"]
    assert metrics["verdict_counts"] == {"correct": 1, "broken_gold": 2, "missing": 9}
    assert metrics["ex"] == pytest.approx(1 / 12)  # broken gold stays in the denominator
    by_id = {s["id"]: s for s in result["items"]}
    assert [(by_id[i]["status"], by_id[i]["reason"]) for i in (7, 10)] == [
        ("ok", "broken_gold"),
        ("ok", "broken_gold"),
    ]

    report = tmp_path / "report"
    assert cli.main(["report", f"run={scores}", "-o", str(report), "--resamples", "100"]) == 0
    outcomes = (report / "report.md").read_text("utf-8")
    header = next(line for line in outcomes.splitlines() if "| wrong result |" in line)
    row = next(line for line in outcomes.splitlines() if line.startswith("| run | 12 |"))
    cells = dict(zip(_cells(header), _cells(row), strict=True))
    assert (cells["correct"], cells["wrong result"], cells["broken gold"]) == ("1", "0", "2")

    data = explorer_data(read_runs([f"run={scores}"]))
    assert "broken_gold" in data["verdicts"]  # a column of its counts, a filter choice
    shown = {row["id"]: row["results"][0] for row in data["items"]}
    assert [shown[i]["verdict"] for i in (1, 7, 10)] == ["correct", "broken_gold", "broken_gold"]
    assert shown[10]["reason_text"] == REASONS["broken_gold"]


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]
