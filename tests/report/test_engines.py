"""The report's cross-engine section: runs of the same items on two engines, paired by id,
list the items whose verdict differs.

Two tests: score files written by hand (the listing rules, no engine needed), and a real one:
the same four LogicCat answers scored by ``sqlbench-lmeval score`` on SQLite and on a private
MariaDB (marked ``mysql``), then ``report`` on the two score files.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.report import read_runs, write_report
from sqlbench_lmeval.report.analysis import check_comparable
from sqlbench_lmeval.report.sections.engines import engine_comparisons


def test_items_whose_verdict_differs_between_engines_are_listed(
    write_score_file, score_item, tmp_path
):
    def score(item_id, status, ex, gold_status="ok", error=None):
        return score_item(item_id, ex, status, category="c", error=error, gold_status=gold_status)

    on_sqlite = [
        score(4, "ok", 1),  # correct on both: not listed
        score(3, "error", 0, error="no such function: INET_ATON"),  # error vs wrong result
        score(2, "ok", 0),  # wrong result vs correct
        score(1, "ok", 1),  # correct vs error, and gold itself failed on MySQL
        score(5, "no_sql", 0),  # no SQL on both: not listed
    ]
    on_mysql = [
        score(1, "error", 0, gold_status="error", error="(1305) FUNCTION x does not exist"),
        score(2, "ok", 1),
        score(3, "ok", 0),
        score(4, "ok", 1),
        score(5, "no_sql", 0),
        score(6, "ok", 1),  # only in this run: not a common item
    ]
    lite = write_score_file("a", on_sqlite, dataset="logiccat-abc-builder4", engine="sqlite")
    maria = write_score_file("b", on_mysql, dataset="logiccat-abc-mysql-10.11", engine="mysql")
    runs = read_runs([f"lite={lite}", f"maria={maria}"])
    check_comparable(runs)  # dataset versions differ by the engine: comparable
    (comparison,) = engine_comparisons(runs)
    assert (comparison.a, comparison.engine_a, comparison.b, comparison.engine_b) == (
        "lite",
        "sqlite",
        "maria",
        "mysql",
    )
    assert comparison.n_common == 5
    listed = [
        (d.id, d.a.outcome, d.b.outcome, d.a.gold_status, d.b.gold_status)
        for d in comparison.differences
    ]
    assert listed == [
        (1, "correct", "error", "ok", "error"),
        (2, "wrong_result", "correct", "ok", "ok"),
        (3, "error", "wrong_result", "ok", "ok"),
    ]
    text = write_report(runs, tmp_path / "report", resamples=200).markdown.read_text()
    assert "## Cross-engine verdicts" in text
    assert "3 of 5 common items differ in verdict" in text
    assert "| 3 | c | error (no such function) | wrong result (values) | ok | ok |" in text


def test_same_engine_runs_get_no_section_and_other_data_is_still_refused(
    write_score_file, score_item
):
    items = [score_item(1, 1), score_item(2, 0)]
    a = write_score_file("a", items, engine="sqlite")
    b = write_score_file("b", items[::-1], engine="sqlite")
    assert engine_comparisons(read_runs([f"a={a}", f"b={b}"])) == []
    other = write_score_file("c", items, dataset="logiccat-x", engine="sqlite")
    with pytest.raises(UserError, match="dataset version"):
        check_comparable(read_runs([f"a={a}", f"c={other}"]))
    # Unrecorded engines (older files) are not "different engines" either.
    unknown = write_score_file("d", items, dataset="logiccat-y")
    with pytest.raises(UserError, match="dataset version"):
        check_comparable(read_runs([f"a={a}", f"d={unknown}"]))


# --- a real pair of runs: SQLite and MariaDB --------------------------------------------------

# The same MySQL-dialect answers on both engines (``--dialect mysql``: transpiled for SQLite).
# Item 3524's gold is ``SELECT 1000 * 200 * 50 * 1 AS Displacement``, 541's
# ``SELECT 50000 * 0.85 AS TotalMass``, 1092's ``SELECT 10000 / 1000 AS lab_density`` (one
# row, one column, a number on both engines).
ANSWERS = {
    # gold's own query: correct on both engines (each compares with its own gold run)
    3524: "```sql\nSELECT 1000 * 200 * 50 * 1 AS Displacement\n```",
    # prose: no SQL on both
    3432: "I cannot tell from the schema.",
    # INET_ATON is MySQL's: an error on SQLite (no such function, not in our MySQL shims);
    # on MariaDB it runs, but two columns cannot equal gold's one: wrong result
    541: "```sql\nSELECT INET_ATON('10.0.0.1') AS x, 'sqlbench' AS y\n```",
    # MySQL compares strings case-insensitively by default, SQLite does not: on MariaDB the
    # row 10 comes back, equal to gold's 10 (10000 / 1000); on SQLite no row: wrong result
    1092: "```sql\nSELECT lab_density FROM (SELECT 10 AS lab_density) AS t WHERE 'a' = 'A'\n```",
}


@pytest.mark.mysql
@pytest.mark.slow
def test_sqlite_and_mariadb_runs_list_the_items_whose_verdict_differs(
    mysql_prepared, logiccat_cache, tmp_path
):
    pytest.importorskip("pymysql")
    from sqlbench_lmeval.logiccat.bundle import load_bundle

    server_gold = mysql_prepared.document["gold_status"]
    records = {r.id: r for r in load_bundle(logiccat_cache).records}
    for item_id in ANSWERS:  # preconditions of the reasoning above
        assert records[item_id].gold_status == "ok" == server_gold[str(item_id)], item_id
        assert not records[item_id].flags, item_id
    assert records[3524].gold_sql_mysql.rstrip(";") == "SELECT 1000 * 200 * 50 * 1 AS Displacement"
    assert records[1092].gold_sql_mysql.rstrip(";") == "SELECT 10000 / 1000 AS lab_density"

    predictions = tmp_path / "answers.jsonl"
    predictions.write_text("".join(json.dumps({"id": i, "prediction": a}) + "\n"
                                   for i, a in ANSWERS.items()))  # fmt: skip
    outputs = {}
    for engine in ("sqlite", "mysql"):
        outputs[engine] = tmp_path / f"{engine}.json"
        subprocess.run(
            [sys.executable, "-m", "sqlbench_lmeval", "score", "logiccat", str(predictions),
             "--engine", engine, "--dialect", "mysql", "--output", str(outputs[engine]),
             "--cache-dir", str(logiccat_cache), "--no-progress"],
            check=True,
        )  # fmt: skip
    runs = read_runs([f"lite={outputs['sqlite']}", f"maria={outputs['mysql']}"])
    (comparison,) = engine_comparisons(runs)
    assert (comparison.engine_a, comparison.engine_b) == ("sqlite", "mysql")
    listed = {d.id: (d.a.outcome, d.b.outcome) for d in comparison.differences}
    assert listed == {541: ("error", "wrong_result"), 1092: ("wrong_result", "correct")}
    assert "INET_ATON" in next(d for d in comparison.differences if d.id == 541).a.error.upper()

    report = tmp_path / "report"
    subprocess.run(
        [sys.executable, "-m", "sqlbench_lmeval", "report", f"lite={outputs['sqlite']}",
         f"maria={outputs['mysql']}", "-o", str(report), "--resamples", "200"],
        check=True,
    )  # fmt: skip
    text = (report / "report.md").read_text(encoding="utf-8")
    assert f"2 of {comparison.n_common} common items differ in verdict" in text
    # Why: on MariaDB two columns against gold's one; on SQLite no row against gold's one.
    assert (
        "| 541 | physical | error (no such function) | wrong result (column count) | ok | ok |"
        in text
    )
    assert "| 1092 | hypothetical | wrong result (row count) | correct | ok | ok |" in text
