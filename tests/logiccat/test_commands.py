"""`sqlbench-lmeval prepare logiccat` and `sqlbench-lmeval gold logiccat`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sqlbench_lmeval import cli
from sqlbench_lmeval.logiccat import bundle
from sqlbench_lmeval.logiccat.benchmark import items_from_bundle
from sqlbench_lmeval.paths import gold_cache_dir
from sqlbench_lmeval.scoring.metrics import names

LAYOUT = Path(__file__).resolve().parents[2] / "fixtures" / "logiccat" / "shared_layout"


def cached(fixture_bundle, tmp_path) -> Path:
    cache = tmp_path / "cache"
    shutil.copytree(fixture_bundle.root, bundle.bundle_dir(cache))
    return cache


def test_prepare_reports_a_cached_bundle(fixture_bundle, tmp_path, capsys):
    cache = cached(fixture_bundle, tmp_path)
    assert cli.main(["prepare", "logiccat", "--cache-dir", str(cache)]) == 0
    out = capsys.readouterr().out
    assert "gold status: all_null 1, empty 1, error 1, non_select 1, ok 8" in out
    assert f"bundle at {bundle.bundle_dir(cache)}" in out


def test_prepare_refuses_data_that_is_not_the_pinned_commit(tmp_path, capsys):
    code = cli.main(["prepare", "logiccat", "--source", str(LAYOUT), "--cache-dir", str(tmp_path)])
    assert code == 2
    assert "sha256 check failed" in capsys.readouterr().err


def test_gold_writes_one_line_per_item(fixture_bundle, tmp_path, capsys):
    cache = cached(fixture_bundle, tmp_path)
    output = tmp_path / "gold.jsonl"
    code = cli.main(
        ["gold", "logiccat", "--cache-dir", str(cache), "--output", str(output), "--no-progress"]
    )
    assert code == 0
    lines = [json.loads(line) for line in output.read_text("utf-8").splitlines()]
    assert [line["id"] for line in lines] == list(range(1, 13))
    assert set(lines[0]) == {
        "id", "db_id", "question", "gold_sql", "gold_status", "flags", "status", "error",
        "columns", "rows",
    }  # fmt: skip
    # Each line carries its item's question, as the task prompts it.
    items = {item.id: item for item in items_from_bundle(fixture_bundle)}
    assert all(line["question"] == items[line["id"]].question for line in lines)
    assert lines[0]["question"] == (
        "What is the rated capacity times the efficiency of North Hub, times 14?"
    )  # fixtures/logiccat/shared_layout/records-4036.json, idx 1
    assert lines[8]["rows"] == [[None]]
    assert "gold results of 12 items" in capsys.readouterr().out


def test_score_prints_the_registry_summary_metrics_the_run_has(fixture_bundle, tmp_path, capsys):
    cache = cached(fixture_bundle, tmp_path)
    gold = tmp_path / "gold.jsonl"
    base = ["--cache-dir", str(cache), "--no-progress"]
    assert cli.main(["gold", "logiccat", *base, "--output", str(gold)]) == 0
    answers = [json.loads(line) for line in gold.read_text("utf-8").splitlines()]
    single, sampled = tmp_path / "single.jsonl", tmp_path / "sampled.jsonl"
    lines = [json.dumps({"id": a["id"], "prediction": a["gold_sql"]}) for a in answers]
    single.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sampled.write_text("\n".join(lines + lines) + "\n", encoding="utf-8")  # 2 samples per item
    capsys.readouterr()

    def summary(*args) -> list[str]:
        output = tmp_path / "scores.json"
        assert cli.main(["score", "logiccat", *args, *base, "--output", str(output)]) == 0
        first = capsys.readouterr().out.splitlines()[0]
        shown = first.split(" items, ", 1)[1].split("; wrote", 1)[0]
        return [part.split("=")[0] for part in shown.split(", ")]

    summary_metrics = names(in_summary=True)
    assert summary(str(single)) == [
        "ves",
        "ex",
        "ex_strict",
        "ex_set",
        "ex_on_healthy_gold",
        "r_ves",
    ]
    sampled_shown = summary(str(sampled), "--samples")
    # The aggregate's EX on healthy gold is shown for sampled runs too (it is over their EX).
    assert sampled_shown == [
        "ves", "ex", "ex_strict", "ex_set", "ex_on_healthy_gold", "r_ves", "ex_maj", "pass_at_1"
    ]  # fmt: skip
    assert set(sampled_shown) <= set(summary_metrics)
    # In the registry's order.
    assert sampled_shown == sorted(sampled_shown, key=summary_metrics.index)


def test_gold_and_score_create_a_missing_output_folder(fixture_bundle, tmp_path, capsys):
    cache = cached(fixture_bundle, tmp_path)
    base = ["--cache-dir", str(cache), "--no-progress"]
    gold = tmp_path / "nodir" / "deeper" / "g.jsonl"
    assert cli.main(["gold", "logiccat", *base, "-o", str(gold)]) == 0
    answers = [json.loads(line) for line in gold.read_text("utf-8").splitlines()]
    predictions = tmp_path / "predictions.jsonl"
    lines = [json.dumps({"id": a["id"], "prediction": a["gold_sql"]}) for a in answers]
    # Written with a UTF-8 byte order mark, as some Windows editors save files.
    predictions.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode("utf-8") + b"\n")
    scores = tmp_path / "newdir" / "s.json"
    assert cli.main(["score", "logiccat", str(predictions), *base, "-o", str(scores)]) == 0
    result = json.loads(scores.read_text("utf-8"))
    assert result["metrics"]["n"] == 12
    assert result["missing_ids"] == []
    assert f"wrote {scores}" in capsys.readouterr().out


def test_an_output_file_that_is_a_folder_is_refused_before_any_work(
    fixture_bundle, tmp_path, capsys
):
    cache = cached(fixture_bundle, tmp_path)
    folder = tmp_path / "existing"
    folder.mkdir()
    # The predictions file does not exist: the command stops on --output before reading it.
    absent = tmp_path / "absent.jsonl"
    for command in (
        ["score", "logiccat", str(absent)],
        ["gold", "logiccat"],
    ):
        code = cli.main([*command, "--cache-dir", str(cache), "--no-progress", "-o", str(folder)])
        err = capsys.readouterr().err
        assert code == 2
        assert f"--output {folder} is a folder; give the path of a file to write" in err
        assert "Traceback" not in err
    assert list(folder.iterdir()) == []
    # Nothing was run: no gold result was cached.
    assert not gold_cache_dir(cache).exists()
