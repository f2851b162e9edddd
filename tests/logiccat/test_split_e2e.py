"""``lm_eval --tasks logiccat_dev,logiccat_test --limit 3`` through the real CLI and the loopback
server, then what a user does with it: ``score``, ``verify``, ``leaderboard``, ``report``, the
explorer and ``submission``, each of which keeps the two splits apart and says on the test split
that its gold is our local copy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import logiccat_source
from support import logiccat_answers as answers

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.errors import ExitCode, UserError
from sqlbench_lmeval.lmeval.task_specs import task_groups
from sqlbench_lmeval.logiccat.board import GOLD_NOTE
from sqlbench_lmeval.logiccat.bundle import load_bundle
from sqlbench_lmeval.logiccat.split import split_of_version
from sqlbench_lmeval.report import read_runs, write_report
from sqlbench_lmeval.report.explorer import explorer_data
from sqlbench_lmeval.report.runs import score_dict_of
from sqlbench_lmeval.submission.board_file import write_submission
from sqlbench_lmeval.submission.leaderboard import GOLD_COPY_SHARE, build_leaderboard

pytestmark = pytest.mark.slow

LIMIT = 3  # per category task: 12 items of each split
SPLITS = ("logiccat_dev", "logiccat_test")


@pytest.fixture(scope="module")
def split_run(logiccat_cache, tmp_path_factory):
    """(results, samples, the run's output folder, records by id) of the run; the scripted
    model answers each item with its known answer, gold being the upstream MySQL gold (the
    prompts ask MySQL)."""
    workdir = tmp_path_factory.mktemp("split-run")
    records = load_bundle(logiccat_cache).records
    model = answers.known_answers_model(records, gold="gold_sql_mysql")
    results, samples = answers.run_logiccat(
        ",".join(SPLITS), logiccat_cache, model, workdir, "--limit", str(LIMIT)
    )
    return results, samples, workdir / "lm_eval_output", {r.id: r for r in records}


def _score(task: str, run: Path, cache: Path, output: Path, capsys) -> tuple[dict, str]:
    code = main(
        ["score", task, str(run), "-o", str(output), "--cache-dir", str(cache), "--no-progress"]
    )
    assert code == 0
    return json.loads(output.read_text(encoding="utf-8")), capsys.readouterr().out


def test_the_run_reports_each_split_by_category_and_the_test_group_names_its_gold(split_run):
    results, samples, _, by_id = split_run
    for group in SPLITS:
        members = task_groups()[group]
        assert set(members) <= set(samples)
        for member in members:
            answers.check_known_answers(samples[member], by_id)
            assert len(samples[member]) == LIMIT
            docs = [s["doc"] for s in samples[member]]
            assert {d["split"] for d in docs} == {group.removeprefix("logiccat_")}
            assert {d["prediction_dialect"] for d in docs} == {"mysql"}
            assert "Write one MySQL query" in str(samples[member][0]["arguments"])
        assert "ex,score" in results["results"][group]
    # lm-eval's table names the test group with the note.
    assert GOLD_NOTE in results["results"]["logiccat_test"]["alias"]
    assert GOLD_NOTE not in results["results"]["logiccat_dev"]["alias"]


def test_score_of_each_split_names_its_split_and_the_test_split_its_gold(
    split_run, logiccat_cache, tmp_path, capsys
):
    _, samples, run, _ = split_run
    test, printed = _score("logiccat_test", run, logiccat_cache, tmp_path / "t.json", capsys)
    assert test["task"] == "logiccat_test" and len(test["items"]) == 4 * LIMIT
    assert split_of_version(test["dataset_version"]) == "test"
    assert test["gold_note"] == GOLD_NOTE
    assert f"logiccat_test: {GOLD_NOTE}" in printed
    assert set(test["tasks"]) == set(task_groups()["logiccat_test"])
    dev, printed = _score("logiccat_dev", run, logiccat_cache, tmp_path / "d.json", capsys)
    assert split_of_version(dev["dataset_version"]) == "dev"
    assert "gold_note" not in dev and GOLD_NOTE not in printed
    answers.assert_same_scores([s for m in task_groups()["logiccat_dev"] for s in samples[m]], dev)
    # A predictions file of the test answers, scored as the test group: every test item
    # counts, the unanswered ones 0, and the logged answers score as the run scored them.
    test_samples = [s for m in task_groups()["logiccat_test"] for s in samples[m]]
    as_file = answers.write_predictions(tmp_path / "test.jsonl", test_samples)
    filed, printed = _score("logiccat_test", as_file, logiccat_cache, tmp_path / "f.json", capsys)
    assert filed["metrics"]["n"] == 800 and len(filed["missing_ids"]) == 800 - 4 * LIMIT
    assert filed["gold_note"] == GOLD_NOTE and f"logiccat_test: {GOLD_NOTE}" in printed
    answers.assert_same_scores(test_samples, filed)
    assert filed["metrics"]["ex"] == pytest.approx(sum(s["ex"] for s in test_samples) / 800)
    # Answers to dev items are no answers to test items: a file of them is refused.
    predictions = answers.write_predictions(
        tmp_path / "dev.jsonl", [s for m in task_groups()["logiccat_dev"] for s in samples[m]]
    )
    out = tmp_path / "refused.json"
    code = main(["score", "logiccat_test", str(predictions), "-o", str(out), "--no-progress"])
    assert code == 2 and not out.exists()
    assert "are not logiccat_test items" in capsys.readouterr().err


def test_verify_leaderboard_report_and_explorer_keep_the_splits_apart(
    split_run, logiccat_cache, tmp_path, capsys
):
    _, _, run, _ = split_run
    board_dir = tmp_path / "board"
    build_leaderboard([str(run)], board_dir, cache_dir=logiccat_cache, resamples=200)
    data = json.loads((board_dir / "leaderboard.json").read_text(encoding="utf-8"))
    boards = {board["task"]: board for board in data["tasks"]}
    assert {"logiccat_dev", "logiccat_test"} <= set(boards)
    for group in SPLITS:
        board = boards[group]
        assert split_of_version(board["dataset_version"]) == group.removeprefix("logiccat_")
        assert board["n_items"] == 800
        assert board["categories"] == sorted(
            ["physical", "mathematical", "commonsense", "hypothetical"]
        )
        # A third of the answers are gold (the known-answers model): the run is listed apart
        # as gold copies, never ranked (docs/verify.md#the-leaderboard-and-unranked-runs).
        (model,) = board["not_ranked"]
        assert board["models"] == [] and model["gold_copy_share"] >= GOLD_COPY_SHARE
    assert boards["logiccat_test"]["gold_note"] == GOLD_NOTE
    assert boards["logiccat_dev"]["gold_note"] is None
    assert GOLD_NOTE in (board_dir / "leaderboard.md").read_text(encoding="utf-8")
    # verify: the run's items are 3 per category of 800; the split is named.
    (cached,) = (board_dir / "verifications").glob("cache-*.json")
    verification = json.loads(cached.read_text(encoding="utf-8"))
    tasks = {task["task"]: task for task in verification["tasks"]}
    test_physical = tasks["logiccat_test_physical"]
    assert test_physical["facts"]["split"] == "test"
    missing = [f for f in test_physical["findings"] if f["code"] == "missing_items"]
    assert missing and "of the test split" in missing[0]["message"]
    assert verification["verdict"] in ("verified", "verified with findings")

    runs = read_runs([str(run)])
    files = write_report(runs, tmp_path / "report", resamples=200)
    report = Path(files.markdown).read_text(encoding="utf-8")
    assert f"scored with the {GOLD_NOTE}" in report
    assert "logiccat_test" in report and "logiccat_dev" in report
    rows = explorer_data(runs)["items"]
    shown = {(row["task"], row["category"]) for row in rows}
    for group in SPLITS:
        for member in task_groups()[group]:
            category = member.rsplit("_", 1)[1]
            assert (member, category) in shown


def test_verify_rejects_a_run_whose_documents_are_of_another_split(
    split_run, logiccat_cache, tmp_path, capsys
):
    _, _, run, _ = split_run
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    (samples_file,) = copy.rglob("samples_logiccat_test_physical_*.jsonl")
    lines = [json.loads(line) for line in samples_file.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        line["doc"]["split"] = "dev"
    samples_file.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    code = main(
        ["verify", str(copy), "-o", str(tmp_path / "v"), "--cache-dir", str(logiccat_cache)]
        + ["--no-progress"]
    )
    printed = capsys.readouterr().out
    assert code == ExitCode.REJECTED, printed  # 6: rejected, never a crash's 1
    assert "[reject] logiccat_test_physical: split:" in printed


def test_the_submission_file_holds_every_test_record_in_order_with_the_runs_sql(
    split_run, logiccat_cache, tmp_path, capsys
):
    _, samples, run, by_id = split_run
    output = tmp_path / "predictions.json"
    code = main(
        ["submission", "logiccat_test", str(run), "--output", str(output)]
        + ["--cache-dir", str(logiccat_cache)]
    )
    assert code == 0
    printed = capsys.readouterr().out.strip().splitlines()
    records = json.loads(output.read_text(encoding="utf-8"))
    transcribed = json.loads((logiccat_source() / "splits-2026.json").read_text("utf-8"))
    assert len(records) == 800
    assert [record["idx"] for record in records] == transcribed["test"]  # upstream's order
    assert {record["format"] for record in records} == {"MySQL"}
    upstream = {
        r["idx"]: r
        for r in json.loads((logiccat_source() / "records-4036.json").read_text("utf-8"))
    }
    for record in records:
        original = upstream[record["idx"]]
        assert {k: record[k] for k in ("db_id", "type", "question")} == {
            k: original[k] for k in ("db_id", "type", "question")
        }
    logged = {s["doc"]["id"]: s for m in task_groups()["logiccat_test"] for s in samples[m]}
    for record in records:
        sample = logged.get(record["idx"])
        if sample is None:
            assert record["query"] == ""
            continue
        # The SQL the run's own scoring extracted and executed from, as it logged it.
        logged_sql = score_dict_of(sample["filtered_resps"])["extracted_sql"]
        assert record["query"] == (logged_sql or ""), record["idx"]
        kind = answers.answer_kind(record["idx"])
        if kind == "wrong":
            assert record["query"] == answers.WRONG_SQL
        elif kind == "gold":
            gold = by_id[record["idx"]].gold_sql_mysql
            assert record["query"] and record["query"] in gold, record["idx"]
        else:
            assert record["query"] == ""
    n_prose = sum(answers.answer_kind(i) == "prose" for i in logged)
    assert printed == [
        f"logiccat_test: wrote 800 records to {output}: {len(logged) - n_prose} with the run's "
        f"SQL, {800 - len(logged) + n_prose} empty ({800 - len(logged)} not in the run, "
        f"{n_prose} without SQL, 0 not translatable to the board's dialect)"
    ]
    # Only the board's test set has a file, and only a run of it fills one.
    with pytest.raises(UserError, match="not the test set of a leaderboard"):
        write_submission("logiccat_dev", str(run), tmp_path / "x.json")
    dev_only = tmp_path / "dev-only"
    shutil.copytree(run, dev_only)
    for path in dev_only.rglob("samples_logiccat_test_*.jsonl"):
        path.unlink()
    with pytest.raises(UserError):
        write_submission("logiccat_test", str(dev_only), tmp_path / "y.json")
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "y.json").exists()
