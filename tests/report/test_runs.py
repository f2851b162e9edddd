"""Reading runs: score JSON files and lm-eval output folders (written by lm-eval's own tracker)."""

import json
import math
import subprocess
import sys

import pytest

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.report.runs import parse_python_literal, read_run, read_runs
from sqlbench_lmeval.scoring.metrics import EX_ON_HEALTHY_GOLD


def test_a_score_file_is_one_run_named_after_the_file(write_score_file, score_item):
    path = write_score_file(
        "model-a",
        [
            score_item(1, 1, category="physical"),
            score_item(2, 0, "error", category="physical", error="no such column: x"),
            score_item(3, 0, "missing", category="mathematical"),
        ],
    )
    (run,) = read_run(str(path))
    assert run.name == "model-a"
    assert run.comparison_version == "1"
    (task,) = run.tasks
    assert (task.name, task.dataset_version) == ("logiccat", "data-v1")
    assert [(item.id, item.status, item.ex, item.ves) for item in task.items] == [
        (1, "ok", 1.0, 1.0),
        (2, "error", 0.0, 0.0),
        (3, "missing", 0.0, 0.0),
    ]
    assert task.items[1].error == "no such column: x"
    assert task.items[2].category == "mathematical"


def test_name_equals_path_names_the_run(write_score_file, score_item):
    path = write_score_file("out", [score_item(1, 1)])
    (run,) = read_run(f"Qwen 7B={path}")
    assert run.name == "Qwen 7B"


def test_two_runs_with_one_name_are_refused(write_score_file, score_item):
    path = write_score_file("out", [score_item(1, 1)])
    with pytest.raises(UserError, match="two runs are named 'x'.*NAME=PATH"):
        read_runs([f"x={path}", f"x={path}"])


def test_extra_numbers_are_kept_and_nan_survives(write_score_file, score_item):
    path = write_score_file(
        "t", [score_item(1, 1, sim_tables=0.5, join_count=2.0, gold_join_count=4.0)], task="tpcds"
    )
    (run,) = read_run(str(path))
    item = run.tasks[0].items[0]
    # A score from before items carried EX on healthy gold gets it from its gold health.
    numbers = {"sim_tables": 0.5, "join_count": 2.0, "gold_join_count": 4.0}
    assert dict(item.numbers) == {**numbers, EX_ON_HEALTHY_GOLD: 1.0}


def test_ex_on_healthy_gold_is_read_or_derived_only_where_gold_is_healthy(
    write_score_file, score_item
):
    empty = {**score_item(2, 1), "gold_status": "empty"}
    random_gold = {**score_item(3, 0), "flags": ["random"]}
    carried = {**score_item(4, 0), EX_ON_HEALTHY_GOLD: 0}
    path = write_score_file("h", [score_item(1, 1), empty, random_gold, carried])
    (run,) = read_run(str(path))
    got = [item.numbers.get(EX_ON_HEALTHY_GOLD) for item in run.tasks[0].items]
    assert got == [1.0, None, None, 0.0]


def test_items_with_different_comparison_versions_are_refused(write_score_file, score_item):
    path = write_score_file("mixed", [score_item(1, 1, version="1"), score_item(2, 1, version="2")])
    with pytest.raises(UserError, match="different versions \\(1, 2\\)"):
        read_run(str(path))


def test_missing_paths_and_foreign_json_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        read_run(str(tmp_path / "absent"))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": 1}))
    with pytest.raises(UserError, match="neither"):
        read_run(str(other))
    with pytest.raises(UserError, match="no lm-eval results"):
        read_run(str(tmp_path))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{'a': 1, 'b': None, 'c': True, 'd': [1, 'x'], 'e': (2, 3)}", None),
        ("{'sim': nan, 'low': -inf, 'high': inf, 'neg': -2.5}", None),
    ],
)
def test_python_literals_with_nan_parse(text, expected):
    value = parse_python_literal(text)
    if "nan" in text:
        assert math.isnan(value["sim"]) and value["low"] == -math.inf
        assert value["high"] == math.inf and value["neg"] == -2.5
    else:
        assert value == {"a": 1, "b": None, "c": True, "d": [1, "x"], "e": [2, 3]}


@pytest.mark.parametrize("text", ["__import__('os')", "{'a': f(1)}", "-'x'", "[1, *x]"])
def test_python_literal_parsing_never_evaluates_code(text):
    with pytest.raises(ValueError):
        parse_python_literal(text)


# --- lm-eval output folders --------------------------------------------------------------------


def test_an_lmeval_folder_reads_like_a_score_file(write_lmeval_run, score_item):
    output = write_lmeval_run(
        "org/model-a",
        {
            "tpcds": [
                score_item(1, 1, sim_tables=1.0, structural_similarity=0.9),
                score_item(2, 0, "timeout", sim_tables=math.nan, structural_similarity=0.0),
            ]
        },
    )
    model_folder = output / "org__model-a"
    assert sorted(path.name.split("_")[0] for path in model_folder.iterdir()) == [
        "results",
        "samples",
    ]
    # lm-eval's quirks are really there: a str() of our dict, and a bare NaN.
    line = next(model_folder.glob("samples_*.jsonl")).read_text().splitlines()[1]
    assert "'status': 'timeout'" in line and "NaN" in line

    for spec in (output, model_folder, next(model_folder.glob("results_*.json"))):
        (run,) = read_run(str(spec))
        assert run.name == "org/model-a"  # lm-eval's model_name, not the sanitised folder
        assert run.comparison_version == "1"
        (task,) = run.tasks
        assert (task.name, task.dataset_version) == ("tpcds", "data-v1")
        first, second = task.items
        assert (first.id, first.status, first.ex, first.numbers["sim_tables"]) == (1, "ok", 1, 1)
        assert (second.status, second.ex) == ("timeout", 0)
        assert math.isnan(second.numbers["sim_tables"])


def test_groups_become_views_over_their_tasks(write_lmeval_run, score_item):
    output = write_lmeval_run(
        "m",
        {
            "logiccat_physical": [score_item(1, 1, category="physical")],
            "logiccat_mathematical": [score_item(2, 0, category="mathematical")],
        },
        groups={"logiccat": ["logiccat_physical", "logiccat_mathematical"]},
    )
    (run,) = read_run(str(output))
    views = run.views()
    assert list(views) == ["logiccat", "logiccat_physical", "logiccat_mathematical"]
    assert sorted(item.id for item in views["logiccat"].items) == [1, 2]
    assert views["logiccat"].dataset_version == "data-v1"


def test_two_samples_files_of_a_task_stop_until_one_is_named(write_lmeval_run, score_item):
    output = write_lmeval_run("m", {"tpcds": [score_item(1, 0)], "other": [score_item(5, 1)]})
    write_lmeval_run("m", {"tpcds": [score_item(1, 1)]}, output=output)
    first, second = sorted((output / "m").glob("samples_tpcds_*.jsonl"))
    with pytest.raises(UserError, match="logged by 2 samples files") as raised:
        read_run(str(output))
    assert first.name in str(raised.value) and second.name in str(raised.value)
    (run,) = read_run(f"later={second}")  # the named file alone: its task, that invocation
    assert [task.name for task in run.tasks] == ["tpcds"]
    assert run.name == "later" and run.tasks[0].items[0].ex == 1
    (run,) = read_run(str(first))
    assert run.tasks[0].items[0].ex == 0


def test_an_empty_samples_file_is_an_input_error(write_lmeval_run, score_item):
    output = write_lmeval_run("m", {"tpcds": [score_item(1, 0)]})
    (samples,) = (output / "m").glob("samples_tpcds_*.jsonl")
    samples.write_text("\n", encoding="utf-8")
    with pytest.raises(UserError, match="empty samples file"):
        read_run(str(output))


def test_a_folder_with_several_models_gives_several_runs(write_lmeval_run, score_item):
    output = write_lmeval_run("a", {"tpcds": [score_item(1, 1)]})
    write_lmeval_run("b", {"tpcds": [score_item(1, 0)]}, output=output)
    assert [run.name for run in read_run(str(output))] == ["a", "b"]
    with pytest.raises(UserError, match="holds 2 models"):
        read_run(f"x={output}")


def test_results_without_samples_ask_for_log_samples(write_lmeval_run, score_item):
    output = write_lmeval_run("m", {"tpcds": [score_item(1, 1)]})
    for samples in output.glob("*/samples_*"):
        samples.unlink()
    with pytest.raises(UserError, match="--log_samples"):
        read_run(str(output))


def test_an_unreadable_score_dict_falls_back_to_the_logged_metrics(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    line = {
        "doc_id": 0,
        "doc": {"id": 7, "category": "physical"},
        "filtered_resps": ["not a dict"],
        "ves": 1,
        "ex": 1,
        "ex_strict": 0,
        "ex_set": 1,
    }
    (folder / "samples_t_2025-01-01T00-00-00.000001.jsonl").write_text(json.dumps(line) + "\n")
    (run,) = read_run(str(folder))
    (item,) = run.tasks[0].items
    assert (item.id, item.status, item.ex, item.ex_strict, item.category) == (
        7,
        "unknown",
        1,
        0,
        "physical",
    )


def test_another_projects_task_beside_ours_is_left_out(write_lmeval_run, score_item):
    """lm_eval runs our task and someone else's in one invocation: the report reads ours; a
    folder holding only foreign tasks is an error that says so."""
    output = write_lmeval_run("m", {"tpcds": [score_item(1, 1)]})
    folder = next(output.iterdir())
    foreign = {"doc_id": 0, "doc": {"question": "2+2?"}, "filtered_resps": ["4"], "acc": 1.0}
    (folder / "samples_arith_2025-01-01T00-00-00.000001.jsonl").write_text(json.dumps(foreign))
    (run,) = read_run(str(output))
    assert [task.name for task in run.tasks] == ["tpcds"]
    for ours in folder.glob("samples_tpcds_*"):
        ours.unlink()
    with pytest.raises(UserError, match="no scored samples"):
        read_run(str(folder))


def test_reading_runs_does_not_load_the_report_writer():
    # score and verify read logged runs (report.runs, through submission.logged); the
    # statistics and charts of report.build (numpy, matplotlib) load only when asked for.
    code = (
        "import sys\n"
        "import sqlbench_lmeval.offline, sqlbench_lmeval.submission.logged\n"
        "heavy = ('numpy', 'matplotlib', 'sqlbench_lmeval.report.build')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "from sqlbench_lmeval.report import ReportFiles, write_report\n"
        "print(write_report.__module__, ReportFiles.__module__, 'numpy' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[]",
        "sqlbench_lmeval.report.build sqlbench_lmeval.report.build True",
    ]
