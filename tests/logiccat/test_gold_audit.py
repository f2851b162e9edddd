"""`sqlbench-lmeval gold-card` and `audit-gold` through the CLI, on the fixture bundle and on a
copy of it with one gold planted wrong (docs/gold-audit.md)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from sqlbench_lmeval import cli
from sqlbench_lmeval.logiccat import bundle

LAYOUT = Path(__file__).resolve().parents[2] / "fixtures" / "logiccat" / "shared_layout"
# Item 6 of the fixture asks for the total capacity if every station doubled its capacity.
RIGHT_6 = "SELECT SUM(Capacity_Kw * 2) AS Total FROM Stations"
PLANTED_6 = "SELECT SUM(Capacity_Kw * 3) AS Total FROM Stations;"


def _cache_of(fixture_bundle, tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    shutil.copytree(fixture_bundle.root, bundle.bundle_dir(cache))
    return cache


def _records() -> list[dict]:
    return json.loads((LAYOUT / "records-4036.json").read_text("utf-8"))


def _write_predictions(path: Path, answers: dict[int, str]) -> Path:
    path.write_text(
        "".join(json.dumps({"id": i, "prediction": sql}) + "\n" for i, sql in answers.items()),
        encoding="utf-8",
    )
    return path


def _score(cache: Path, predictions: Path, output: Path, *extra: str) -> dict:
    code = cli.main(
        ["score", "logiccat", str(predictions), "--output", str(output)]
        + ["--cache-dir", str(cache), "--no-progress", "--workers", "1", *extra]
    )
    assert code == 0
    return json.loads(output.read_text("utf-8"))


def test_the_card_equals_a_separate_gold_as_answer_score_run(fixture_bundle, tmp_path, capsys):
    cache = _cache_of(fixture_bundle, tmp_path)
    assert (
        cli.main(
            ["gold-card", "logiccat", "--dialect", "mysql", "--output", str(tmp_path / "card")]
            + ["--cache-dir", str(cache), "--no-progress", "--workers", "1"]
        )
        == 0
    )
    card = json.loads((tmp_path / "card" / "gold-card.json").read_text("utf-8"))
    # The published gold (upstream's records, word for word) as answers, scored by `score`.
    published = {record["idx"]: record["query"] for record in _records()}
    predictions = _write_predictions(tmp_path / "published.jsonl", published)
    scored = _score(cache, predictions, tmp_path / "s.json", "--dialect", "mysql")
    expected = {
        name: round(value, 4)
        for name, value in scored["metrics"].items()
        if isinstance(value, float) and not name.startswith("n_")
    }
    assert card["ceiling"] == expected
    assert {"ex", "ves", "ex_on_healthy_gold"} <= set(card["ceiling"])
    misses = {item["id"] for item in scored["items"] if item["ex"] != 1}
    assert {miss["id"] for miss in card["published_gold_misses"]} == misses
    # Gold health as the bundle has it (tests/logiccat/test_commands.py prints the same counts).
    assert card["gold_status"] == {"ok": 8, "all_null": 1, "empty": 1, "error": 1, "non_select": 1}
    assert {u["id"]: u["gold_status"] for u in card["unhealthy"]} == {
        item.id: item.gold_status for item in _items(fixture_bundle) if item.gold_status != "ok"
    }
    assert card["dataset_version"] == scored["dataset_version"]
    assert card["reference_points"][0]["value"] == 0.9505  # the board's human EX
    page = (tmp_path / "card" / "gold-card.md").read_text("utf-8")
    assert f"| ex | {card['ceiling']['ex']:.4f} |" in page
    assert "human" in page and "0.9505" in page
    assert (tmp_path / "card" / "gold-card.html").read_text("utf-8").startswith("<!DOCTYPE html>")
    assert "gold card of logiccat (sqlite, read as mysql)" in capsys.readouterr().out


def _items(fixture_bundle):
    from sqlbench_lmeval.logiccat.benchmark import items_from_bundle

    return items_from_bundle(fixture_bundle)


@pytest.fixture
def planted(tmp_path, source_from) -> Path:
    """A cache whose bundle is the fixture with item 6's gold planted wrong (x3, not x2)."""
    layout = tmp_path / "layout"
    shutil.copytree(LAYOUT, layout)
    records = _records()
    assert records[5]["idx"] == 6
    records[5]["query"] = PLANTED_6
    (layout / "records-4036.json").write_text(json.dumps(records), encoding="utf-8")
    gold_lines = layout / "MySQL" / "data.sql"  # upstream's gold file: query TAB db_id per line
    lines = gold_lines.read_text("utf-8").split("\n")
    lines[5] = "\t".join([PLANTED_6, *lines[5].split("\t")[1:]])
    gold_lines.write_text("\n".join(lines), encoding="utf-8")
    cache = tmp_path / "planted-cache"
    bundle.build_bundle(source_from(layout), cache, progress=False, workers=0)
    return cache


def test_the_audit_finds_the_planted_gold_and_no_item_where_runs_disagree(planted, tmp_path):
    # Three models answer item 6 rightly, each in its own words; on item 2 they disagree (each
    # wrong in its own way); on item 3 only two agree, on item 1 one matches gold.
    answers = {
        "a": {
            6: RIGHT_6,
            2: "SELECT SUM(Cost) FROM charging_sessions",
            3: "SELECT -7",
            1: "SELECT 0",
        },
        "b": {
            6: "SELECT 2 * SUM(Capacity_Kw) FROM Stations",
            2: "SELECT AVG(Cost) FROM charging_sessions",
            3: "SELECT -7",
            1: "SELECT 0",
        },
        "c": {
            6: "SELECT SUM(Capacity_Kw) + SUM(Capacity_Kw) AS t FROM Stations",
            2: "SELECT MAX(Cost) FROM charging_sessions",
            3: "SELECT -8",
            1: "SELECT Efficiency * 14 AS Scaled FROM Stations WHERE Name = 'north hub'",
        },
    }
    runs = []
    for name, run in answers.items():
        predictions = _write_predictions(tmp_path / f"{name}.jsonl", run)
        scored = _score(planted, predictions, tmp_path / f"{name}.json")
        assert {i["id"]: i["ex"] for i in scored["items"] if i["id"] == 6} == {6: 0}
        runs.append(f"{name}={tmp_path / f'{name}.json'}")
    output = tmp_path / "audit"
    assert (
        cli.main(
            ["audit-gold", *runs, "--output", str(output), "--cache-dir", str(planted)]
            + ["--no-progress", "--workers", "1"]
        )
        == 0
    )
    audit = json.loads((output / "audit-gold.json").read_text("utf-8"))
    assert [item["id"] for item in audit["suspect"]] == [6]
    suspect = audit["suspect"][0]
    assert suspect["agreeing_runs"] == ["a", "b", "c"] and suspect["agreeing_models"] == 3
    assert suspect["gold_sql"].count("* 3") == 1
    assert suspect["gold_result"]["rows"] != suspect["agreed_result"]["rows"]
    with (output / "audit-gold.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(row["task"], row["id"], row["agreeing_models"]) for row in rows] == [
        ("logiccat", "6", "3")
    ]
    unhealthy = {item["id"] for item in audit["unhealthy"]}
    assert 6 not in unhealthy and unhealthy <= set(range(1, 13))
    assert "Suspect gold (1)" in (output / "audit-gold.md").read_text("utf-8")

    # With --agree 2, item 3 (two runs return -7) is listed too; item 2 still is not.
    again = tmp_path / "audit2"
    assert (
        cli.main(
            [
                "audit-gold",
                *runs,
                "--output",
                str(again),
                "--cache-dir",
                str(planted),
                "--agree",
                "2",
            ]
            + ["--no-progress", "--workers", "1"]
        )
        == 0
    )
    audit = json.loads((again / "audit-gold.json").read_text("utf-8"))
    assert [item["id"] for item in audit["suspect"]] == [3, 6]


def test_the_audit_needs_two_runs_to_agree(tmp_path, capsys):
    code = cli.main(
        ["audit-gold", f"a={tmp_path / 'x.json'}", "--output", str(tmp_path / "o")]
        + ["--agree", "1"]
    )
    assert code == 2
    assert "--agree must be at least 2" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()  # a refused command leaves no folder
