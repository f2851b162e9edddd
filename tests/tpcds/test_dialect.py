"""TPC-DS asked in PostgreSQL, as the paper prompted: the prompt names it, sqlglot translates
each prediction to DuckDB before it runs, structure is read from the PostgreSQL as written, and
a prediction that is not PostgreSQL is an error outcome of its item.

All on the session's sf 0.01 database (``conftest.py``).
"""

from __future__ import annotations

import json

import pytest

from sqlbench_lmeval import cli
from sqlbench_lmeval.paths import tasks_dir
from sqlbench_lmeval.scoring.hooks import Hooks
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.translate import TRANSPILE_ERROR
from sqlbench_lmeval.tpcds.benchmark import item_metrics, load_items, transpile_prediction
from sqlbench_lmeval.tpcds.task import doc_to_text, load_dataset

SF = 0.01

# Query 12 (web sales of Sports, Books and Home items between 1999-02-22 and 1999-03-24, with
# each item's share of its class's revenue) in PostgreSQL-only spellings:
# - ILIKE without wildcards is case-insensitive equality, and the TPC-DS categories differ by
#   more than case, so the OR of three ILIKEs is gold's IN ('Sports', 'Books', 'Home');
# - 1999-02-22 + 30 days is 1999-03-24 (February 1999 has 28 days: 6 + 24), so the BETWEEN is
#   gold's date range (DATE + INTERVAL is a timestamp at midnight, which includes 03-24);
# - to_char(d_date, 'YYYY') = '1999' holds for every day of that range: it removes no row,
#   and DuckDB has no to_char, so the text cannot run untranslated.
# Joins with ON instead of commas, aliases, and the same ORDER BY and LIMIT: gold's rows.
Q12_POSTGRES = """\
SELECT i.i_item_id, i.i_item_desc, i.i_category, i.i_class, i.i_current_price,
       SUM(ws.ws_ext_sales_price) AS itemrevenue,
       SUM(ws.ws_ext_sales_price) * 100.0000
         / SUM(SUM(ws.ws_ext_sales_price)) OVER (PARTITION BY i.i_class) AS revenueratio
FROM web_sales ws
JOIN item i ON ws.ws_item_sk = i.i_item_sk
JOIN date_dim d ON ws.ws_sold_date_sk = d.d_date_sk
WHERE (i.i_category ILIKE 'sports' OR i.i_category ILIKE 'books' OR i.i_category ILIKE 'home')
  AND d.d_date::date BETWEEN '1999-02-22'::date AND DATE '1999-02-22' + INTERVAL '30 days'
  AND to_char(d.d_date, 'YYYY') = '1999'
GROUP BY i.i_item_id, i.i_item_desc, i.i_category, i.i_class, i.i_current_price
ORDER BY i.i_category, i.i_class, i.i_item_id, i.i_item_desc, revenueratio
LIMIT 100"""


@pytest.fixture(scope="module")
def postgres_items(tpcds_cache):
    return {item.id: item for item in load_items(tpcds_cache, SF, dialect="postgres")}


def score(items, answers):
    return Scorer(
        progress=False, hooks=Hooks(transpile=transpile_prediction, item_metrics=item_metrics)
    ).score(items, answers)


def test_the_prompt_names_the_dialect_asked_for(tpcds_cache):
    default = load_dataset(SF, cache_dir=str(tpcds_cache))["test"][0]
    postgres = load_dataset(SF, cache_dir=str(tpcds_cache), dialect="postgresql")["test"][0]
    assert (default["prediction_dialect"], postgres["prediction_dialect"]) == ("duckdb", "postgres")
    assert "PostgreSQL" not in doc_to_text(default)
    prompt = doc_to_text(postgres)
    assert "You are given a PostgreSQL database" in prompt and "one PostgreSQL SQL query" in prompt
    assert "DuckDB" not in prompt


def test_a_postgres_answer_scores_on_its_own_item_only(postgres_items, tpcds_manifest):
    assert tpcds_manifest["gold_row_counts"]["12"] > 0  # gold has rows to match at sf 0.01
    right, other = score([postgres_items[12], postgres_items[98]], [Q12_POSTGRES] * 2)
    assert (right["status"], right["ves"], right["ex"], right["reason"]) == ("ok", 1, 1, "match")
    assert other["ex"] == 0  # query 98 asks about store sales
    assert right["extracted_sql"] == Q12_POSTGRES
    assert "to_char" not in right["executed_sql"] and "STRFTIME" in right["executed_sql"]
    # Structure is read from the text as written, in PostgreSQL.
    assert right["parsed"] == 1.0 and right["parsed_dialect"] == "postgres"
    assert right["prediction_dialect"] == "postgres"


def test_untranslated_the_same_answer_fails(tpcds_items):
    (plain,) = Scorer(progress=False).score([tpcds_items[11]], [Q12_POSTGRES])
    assert plain["status"] == "error" and "to_char" in plain["error"]
    assert plain["executed_sql"] == plain["extracted_sql"]


def test_an_answer_that_is_not_postgres_is_a_transpile_error(postgres_items):
    mysql_only = "SELECT `i_item_id` FROM `item` LIMIT 100"  # backticks: not PostgreSQL
    (result,) = score([postgres_items[12]], [mysql_only])
    assert (result["status"], result["reason"], result["ves"], result["ex"]) == (
        "error",
        TRANSPILE_ERROR,
        0,
        0,
    )
    assert result["error"].startswith("cannot translate postgres to duckdb: ")
    assert result["extracted_sql"] == mysql_only and result["executed_sql"] is None
    # Structure still reads it, with the parse fallback: after postgres, the first of its
    # dialects (postgres, spark, mysql, ...) that quotes names with backticks is spark.
    assert result["parsed"] == 1.0 and result["parsed_dialect"] == "spark"


def test_the_tpcds_postgres_yaml_as_lm_eval_reads_it():
    from lm_eval.tasks._yaml_loader import load_yaml

    main = load_yaml(tasks_dir() / "tpcds" / "tpcds.yaml")
    paper = load_yaml(tasks_dir() / "tpcds" / "tpcds_postgres.yaml")
    assert paper["task"] == "tpcds_postgres" and paper["metadata"]["dialect"] == "postgres"
    assert "dialect" not in main["metadata"]
    # Everything else is shared through _tpcds_template_yaml.
    differ = {key for key in main.keys() | paper.keys() if main.get(key) != paper.get(key)}
    assert differ == {"task", "metadata"}


def test_score_dialect_postgres_through_the_cli(
    tpcds_cache, postgres_items, postgres_gold, tmp_path, capsys
):
    written = postgres_gold
    predictions = tmp_path / "predictions.jsonl"
    lines = [json.dumps({"id": n, "prediction": sql}) for n, sql in sorted(written.items())]
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    output = tmp_path / "scores.json"
    argv = ["score", "tpcds", str(predictions), "-o", str(output), "--dialect", "postgres"]
    assert cli.main([*argv, "--cache-dir", str(tpcds_cache), "--scale-factor", str(SF),
                     "--no-progress"]) == 0  # fmt: skip
    assert "tpcds (postgres): 99 items" in capsys.readouterr().out
    result = json.loads(output.read_text(encoding="utf-8"))
    assert result["prediction_dialect"] == "postgres"
    assert [(s["id"], s["reason"]) for s in result["items"] if s["ex"] != 1] == []
    for item in result["items"]:
        assert item["raw_output"] == written[item["id"]]
        assert item["parsed"] == 1.0 and item["prediction_dialect"] == "postgres"
        # What ran is the translation of what was extracted (here: the whole submission).
        asked = postgres_items[item["id"]]
        assert item["executed_sql"] == transpile_prediction(asked, written[item["id"]])


def test_an_unknown_dialect_is_a_clear_cli_error(tpcds_cache, tmp_path, capsys):
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"id": 1, "prediction": "SELECT 1"}\n', encoding="utf-8")
    argv = ["score", "tpcds", str(predictions), "-o", str(tmp_path / "o.json")]
    code = cli.main([*argv, "--dialect", "postgress", "--cache-dir", str(tpcds_cache)])
    assert code == 2
    assert "unknown SQL dialect 'postgress'" in capsys.readouterr().err
