"""The explorer's data (``report.explorer``): verdicts, joined items, details, safe embedding."""

from __future__ import annotations

import json
import math

from support.explorer_runs import ANSWERS, scripted_runs
from support.lmeval_samples import lmeval_tracker, logged_sample

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.report import read_runs
from sqlbench_lmeval.report.explorer import (
    explorer_data,
    render_explorer,
    script_json,
    verdict,
    verdict_label,
)
from sqlbench_lmeval.scoring import gold_ties
from sqlbench_lmeval.scoring.metrics import ACCEPTABLE, GOLD_WORK, TIE_STATUS, WORK
from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.scoring.tie_compare import TIE_EQUIVALENT


def test_verdicts(score_item):
    def of(score):
        item = ScoredItem.from_score(score)
        return verdict(item), verdict_label(item)

    assert of(score_item(1, 1)) == ("correct", "correct")
    assert of(score_item(1, 0)) == ("wrong_result", "wrong result")
    # A cut-off output is "truncated" unless it was right anyway.
    assert of(score_item(1, 0, truncated=True)) == ("truncated", "truncated")
    assert of(score_item(1, 1, truncated=True)) == ("correct", "correct")
    assert of(score_item(1, 0, "error", error="no such column: t.x")) == (
        "error",
        "error: no such column",
    )
    assert of(score_item(1, 0, "timeout")) == ("timeout", "timeout")
    assert of(score_item(1, 0, "no_sql")) == ("no_sql", "no sql")


def test_script_json_cannot_end_its_script_element():
    data = {"q": "</script><!-- & <img onerror='x'>", "lone": "\ud800", "nested": [{"a": "<"}]}
    text = script_json(data)
    assert not set("<>&") & set(text)
    assert json.loads(text) == data


def test_items_are_joined_across_runs_by_task_and_id(score_item, write_score_file):
    gold_preview = {"columns": ["n"], "rows": [["1"]], "row_count": 1}
    a = write_score_file(
        "a",
        [
            score_item(1, 1, gold_preview=gold_preview, raw_output="SELECT 1"),
            score_item(2, 0, sim_joins=0.5, sim_tables=math.nan),
        ],
    )
    b = write_score_file("b", [score_item(2, 1)])
    data = explorer_data(read_runs([f"A={a}", f"B={b}"]))
    assert data["runs"] == ["A", "B"]
    one, two = data["items"]
    assert (one["key"], two["key"]) == ("logiccat/1", "logiccat/2")
    assert one["results"][1] is None  # B has no item 1
    assert one["gold_preview"] == gold_preview
    assert one["results"][0]["raw_output"] == "SELECT 1"
    assert [result["verdict"] for result in two["results"]] == ["wrong_result", "correct"]
    # Per-feature similarities by their report label; NaN (not computable) becomes null.
    assert two["results"][0]["similarity"] == {"Joins": 0.5, "Tables": None}
    assert two["results"][1]["similarity"] is None
    assert "NaN" not in render_explorer(data)


def test_lmeval_samples_give_question_prompt_and_raw_output(tmp_path):
    folders = scripted_runs(tmp_path)
    data = explorer_data(read_runs([f"{name}={path}" for name, path in folders.items()]))
    first = data["items"][0]
    assert first["question"].startswith("Names and prices of products")
    assert first["prompt"].startswith("Schema: product(id, name, price)")
    assert first["db_path"] == "shop.db"  # outside the cache: named by its file
    assert [r["raw_output"] for r in first["results"]] == [ANSWERS["alpha"][1], ANSWERS["beta"][1]]
    assert first["results"][1]["preview"]["rows"] == [["dates", "8.0"], ["cheese", "14.5"]]


def test_explore_command_reports_a_missing_run(tmp_path, capsys):
    assert main(["explore", str(tmp_path / "nope"), "--output", str(tmp_path / "out")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_logiccat_schema_is_kept_once_per_database(score_item, tmp_path):
    # Two items on database "shop" whose documents carry its schema (as LogicCat's do).
    schema = "CREATE TABLE product (id INTEGER, name TEXT);"
    tracker = lmeval_tracker(tmp_path / "run", "m")
    tracker.save_results_aggregated(
        results={"results": {"t": {}}, "group_subtasks": {"t": []}}, samples=None
    )
    samples = [
        logged_sample(
            index,
            {"id": item_id, "question": f"q{item_id}", "db_id": "shop", "schema": schema},
            "SELECT 1",
            f"{schema}\nq{item_id}",
            "SELECT 1",
            score_item(item_id, 1),
        )
        for index, item_id in enumerate((1, 2))
    ]
    tracker.save_results_samples(task_name="t", samples=samples)
    data = explorer_data(read_runs([str(tmp_path / "run")]))
    assert data["schemas"] == {"shop": schema}
    assert [(item["db_id"], "prompt" in item) for item in data["items"]] == [
        ("shop", False),
        ("shop", False),
    ]


def test_the_verdict_is_explained_in_words(score_item, write_score_file):
    """Per run: the reason, gold's ties (``acceptable`` kept a decimal string however large)
    and r_ves with its work counts, or why the engine gives no r_ves."""
    huge = str(math.factorial(100))  # 158 digits: no float, no JavaScript number holds it
    tied = {TIE_STATUS: gold_ties.ANSWERS, ACCEPTABLE: huge, WORK: 500, GOLD_WORK: 1200}
    on_sqlite = write_score_file(
        "sqlite",
        [
            score_item(1, 1, reason=TIE_EQUIVALENT, r_ves=math.sqrt(1.25), **tied),
            score_item(2, 0, r_ves=0.0, **{TIE_STATUS: gold_ties.NONE, WORK: 10, GOLD_WORK: 10}),
        ],
        engine="sqlite",
    )
    # PostgreSQL counts no work: its items carry no r_ves (scoring leaves it out).
    on_postgres = write_score_file(
        "postgres", [score_item(1, 1), score_item(2, 1)], engine="postgres"
    )
    data = explorer_data(read_runs([f"S={on_sqlite}", f"P={on_postgres}"]))
    first, second = data["items"]
    tie, postgres = first["results"]
    assert tie["label"] == "correct (tie resolution)"
    assert tie["reason_text"].startswith("correct under tie-aware EX")
    assert tie[ACCEPTABLE] == huge and f"{huge} different answers are right" in tie["ties_text"]
    # Gold's 1,200 against 500: ratio 2.4, BIRD's reward 1.25, r_ves its square root.
    assert tie["efficiency_text"] == (
        "R-VES (work) 1.118: gold's work 1,200, this answer's 500, ratio 2.40; "
        "BIRD's reward for it is 1.25, square-rooted"
    )
    wrong = second["results"][0]
    assert wrong["ties_text"].startswith("gold has no ORDER BY and no LIMIT")
    assert wrong["efficiency_text"] == (
        "R-VES (work) 0.000: the answer is not correct (gold's work 10, this answer's 10)"
    )
    assert postgres["efficiency_text"] == "R-VES (work): not defined on postgres: it counts no work"
    assert postgres["ties_text"] is None and postgres[ACCEPTABLE] is None
    # In the page the count is a JSON string, never a number.
    assert f'"{ACCEPTABLE}":"{huge}"' in render_explorer(data)


def test_data_dependence_on_a_server_and_an_r_ves_a_zero_count_decided(
    score_item, write_score_file
):
    """A MariaDB answer that matched gold was not run on a perturbed copy (``not_tested``: the
    server keeps none). An answer whose work counted 0 rows beside gold's 3 gets r_ves from the
    convention that takes 0 as one unit (ratio 3, reward 1.25), but less than one row's work
    would only raise the ratio, so the bucket is the queries'; one row against gold's 0 could
    be any ratio under 1, so there the convention picked the bucket and the page says so."""
    path = write_score_file(
        "mariadb",
        [
            score_item(
                1,
                1,
                r_ves=math.sqrt(1.25),
                data_dependence="not_tested",
                work=0,
                gold_work=3,
                reads_no_table=False,
            ),
            score_item(2, 1, r_ves=1.0, data_dependence="not_tested", work=1, gold_work=0),
            score_item(
                3,
                1,
                r_ves=0.0,
                data_dependence="no_table",
                reads_no_table=True,
                work=0,
                gold_work=0,
            ),
        ],
        engine="mysql",
    )
    data = explorer_data(read_runs([path]))
    first, second, third = (item["results"][0] for item in data["items"])
    words = data["data_dependence_words"]  # once per page, not per answer
    assert first["data_dependence"] == "not_tested" and "reads_no_table" not in first
    assert words["not_tested"]["label"] == "not tested"
    assert words["not_tested"]["text"] == (
        "Data dependence: not tested on the data: this engine (a server) keeps no perturbed "
        "copy of the database; the answer names a table, so it is not flagged"
    )
    assert first["efficiency_text"] == (
        "R-VES (work) 1.118: gold's work 3, this answer's 0, ratio 3.00; "
        "BIRD's reward for it is 1.25, square-rooted"
    )
    assert second["efficiency_text"] == (
        "R-VES (work) 1.000: gold's work 0, this answer's 1, ratio 1.00; "
        "BIRD's reward for it is 1, square-rooted; not resolved by the counts: a count of 0 "
        "was taken as one unit, and less work than one unit could fall in another bucket"
    )
    assert third["reads_no_table"] and third["data_dependence"] == "no_table"
    assert words["no_table"]["label"] == "no table named"
    assert words["no_table"]["text"] == (
        "Data dependence: does not read the data: it names no table (a constant); flagged, "
        "so EX reads data and R-VES (work) score 0"
    )
    assert third["efficiency_text"] == (
        "R-VES (work) 0.000: the answer does not read the data (gold's work 0, this answer's 0)"
    )


def test_similarity_and_shared_paths_of_score_files(score_item, write_score_file, tmp_path):
    from sqlbench_lmeval.paths import shared_path

    cache = tmp_path / "cache"
    inside = cache / "tpcds" / "sf0.01" / "tpcds.duckdb"
    # In the cache: relative to it; elsewhere: the file's name; a server URL: unchanged.
    assert shared_path(str(inside), cache) == "tpcds/sf0.01/tpcds.duckdb"
    assert shared_path(str(tmp_path / "mine" / "shop.db"), cache) == "shop.db"
    url = "postgresql://reader@127.0.0.1:5432/tpcds"
    assert shared_path(url, cache) == url
    items = [
        score_item(1, 1, structural_similarity=0.75, db_path=str(tmp_path / "x" / "t.duckdb")),
        score_item(2, 0),
    ]
    data = explorer_data(read_runs([str(write_score_file("m", items, task="tpcds"))]))
    first, second = data["items"]
    assert first["results"][0]["structural_similarity"] == 0.75
    assert second["results"][0]["structural_similarity"] is None
    assert first["db_path"] == "t.duckdb"  # an old score file's absolute path, not shown
    assert str(tmp_path) not in render_explorer(data)
