"""The statement rule (README, Metrics, "One statement rule"), as data shared by its tests.

Each :class:`Row` is an answer (``{gold}``: the gold query of the item it answers, in the dialect
the answer was asked in) and what it must become in each setting of :data:`SETTINGS`:

- ``EX 1``: it runs (status ``ok``) and matches gold;
- ``ok, <value>``: it runs and its first cell is ``<value>`` (comment syntax decides it);
- ``error``: it runs and the engine refuses it (status ``error``, an execution error);
- ``not_read_only``, ``multiple_statements``, ``executable_comment``: refused before it runs
  (status ``error`` with that reason, nothing executed);
- ``-``: not applicable (a LogicCat gold query on TPC-DS).

The expected cells follow from the rule and the engines' documented syntax (SQLite, DuckDB and
PostgreSQL: ``--`` starts a comment, ``#`` is an error (an operator on PostgreSQL),
``(SELECT ...)`` is an error on SQLite only; DuckDB and PostgreSQL: ``/* */`` comments nest,
``$$ ... $$`` and ``E'...'`` (backslash escapes) are strings; MySQL/MariaDB: ``--`` needs
whitespace after it, ``#`` starts a comment, executable comments run on the server, ``$`` is a
character of names, strings take backslash escapes; SQLite: ``$name`` is a parameter), never
from the scoring code under test. :func:`readme_table` renders the
table README.md shows; ``tests/test_statement_rule.py`` checks that they are the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

#: Where the rule is tested: (key, README column heading, engine, dialect asked for).
SETTINGS = (
    ("sqlite", "SQLite (`logiccat`)", "sqlite", "sqlite"),
    ("sqlite_mysql", "SQLite, asked in MySQL (`logiccat_mysql`)", "sqlite", "mysql"),
    ("duckdb", "DuckDB (`tpcds`)", "duckdb", "duckdb"),
    ("mariadb", "MariaDB (`logiccat_mysql`, engine `mysql`)", "mysql", "mysql"),
    ("postgres", "PostgreSQL (`tpcds_postgres`, engine `postgres`)", "postgres", "postgres"),
)
REFUSALS = ("not_read_only", "multiple_statements", "executable_comment")
NOT_APPLICABLE = "-"


@dataclass(frozen=True)
class Row:
    """One answer and its outcome per setting (``sqlite``, ``sqlite_mysql``, ``duckdb``,
    ``mariadb``, ``postgres``). ``item``: the LogicCat item it answers (its own gold given as
    the answer), or None for any item whose gold runs and matches itself."""

    case: str
    answer: str
    sqlite: str
    sqlite_mysql: str
    duckdb: str
    mariadb: str
    postgres: str
    item: int | None = None

    def expected(self, setting: str) -> str:
        return getattr(self, setting)


def everywhere(case: str, answer: str, outcome: str, item: int | None = None) -> Row:
    return Row(case, answer, outcome, outcome, outcome, outcome, outcome, item)


def on_logiccat(case: str, answer: str, outcome: str, item: int) -> Row:
    return Row(case, answer, outcome, outcome, NOT_APPLICABLE, outcome, NOT_APPLICABLE, item)


ROWS = [
    # A query: SELECT, WITH ... SELECT, or either in parentheses (the engine decides).
    everywhere("query", "{gold}", "EX 1"),
    everywhere("query_then_comment", "{gold};\n-- done", "EX 1"),
    Row("parenthesised_query", "({gold})", "error", "error", "EX 1", "EX 1", "EX 1"),
    # Every statement that is not a query, whatever engine would run it.
    everywhere("show", "SHOW TABLES", "not_read_only"),
    everywhere("set", "SET @x = 1", "not_read_only"),
    everywhere(
        "set_statement_for",
        "SET STATEMENT max_statement_time=0 FOR SELECT SLEEP(60)",
        "not_read_only",
    ),
    everywhere(
        "set_statement_for_after_prose",
        "Here is the query:\nSET STATEMENT max_statement_time=0 FOR {gold}",
        "not_read_only",
    ),
    everywhere("do", "DO SLEEP(1)", "not_read_only"),
    everywhere("call", "CALL p()", "not_read_only"),
    everywhere("kill", "KILL 1", "not_read_only"),
    everywhere("handler", "HANDLER t OPEN", "not_read_only"),
    everywhere("lock", "LOCK TABLES t READ", "not_read_only"),
    everywhere("prepare", "PREPARE s FROM 'SELECT 1'", "not_read_only"),
    everywhere("execute", "EXECUTE s", "not_read_only"),
    everywhere("execute_immediate", "EXECUTE IMMEDIATE 'SELECT 1'", "not_read_only"),
    everywhere("grant", "GRANT ALL ON *.* TO reader", "not_read_only"),
    everywhere("create_user", "CREATE USER x IDENTIFIED BY 'pw'", "not_read_only"),
    everywhere("explain", "EXPLAIN {gold}", "not_read_only"),
    everywhere("update", "UPDATE t SET a = 1", "not_read_only"),
    everywhere("drop_fenced", "```sql\nDROP TABLE t;\n```", "not_read_only"),
    everywhere("insert_select", "INSERT INTO t {gold}", "not_read_only"),
    everywhere("pragma", "PRAGMA table_info(t)", "not_read_only"),
    # SQL before or after the query.
    everywhere("set_then_query", "SET SESSION sql_mode = ''; {gold}", "multiple_statements"),
    everywhere("query_then_query", "{gold}; {gold}", "multiple_statements"),
    on_logiccat("gold_340_select_select", "{gold}", "multiple_statements", item=340),
    on_logiccat("gold_1400_set_with", "{gold}", "multiple_statements", item=1400),
    on_logiccat("gold_1402_set_with", "{gold}", "multiple_statements", item=1402),
    # Comments: the syntax of the dialect the answer was asked in.
    Row("dash_dash_digit", "SELECT 1 --1", "ok, 1", "ok, 2", "ok, 1", "ok, 2", "ok, 1"),
    Row(
        "dash_dash_digit_then_drop",
        "SELECT 1 --1; DROP TABLE t",
        "ok, 1",
        "multiple_statements",
        "ok, 1",
        "multiple_statements",
        "ok, 1",
    ),
    Row("hash_comment", "{gold} # the answer", "error", "EX 1", "error", "EX 1", "error"),
    Row(
        "hash_comment_then_drop",
        "{gold} # the answer; DROP TABLE t",
        "multiple_statements",
        "EX 1",
        "multiple_statements",
        "EX 1",
        "multiple_statements",
    ),
    # Comments that nest (DuckDB, PostgreSQL): the ';' inside is no end there.
    Row(
        "nested_comment",
        "{gold} /* a /* nested */ comment; DROP TABLE t */",
        "multiple_statements",
        "multiple_statements",
        "EX 1",
        "multiple_statements",
        "EX 1",
    ),
    # Strings of DuckDB and PostgreSQL that other engines do not have.
    Row("dollar_quoted", "SELECT $$a;b$$", "error", "error", "ok, a;b", "error", "ok, a;b"),
    Row(
        "escape_string",
        "SELECT E'a\\';b'",
        "error",
        "error",
        "ok, a';b",
        "error",
        "ok, a';b",
    ),
    # Executable comments: code on MySQL-family servers, a comment elsewhere.
    Row(
        "executable_comment",
        "SELECT 1 /*! + 1 */",
        "ok, 1",
        "executable_comment",
        "ok, 1",
        "executable_comment",
        "ok, 1",
    ),
    Row(
        "versioned_executable_comment",
        "{gold} /*!50000 LIMIT 0 */",
        "EX 1",
        "executable_comment",
        "EX 1",
        "executable_comment",
        "EX 1",
    ),
    Row(
        "mariadb_executable_comment",
        "/*M! SET STATEMENT max_statement_time=0 FOR */ {gold}",
        "EX 1",
        "executable_comment",
        "EX 1",
        "executable_comment",
        "EX 1",
    ),
]


def rows_for(setting: str) -> list[Row]:
    return [row for row in ROWS if row.expected(setting) != NOT_APPLICABLE]


def answer_text(row: Row, gold: str) -> str:
    """The answer of ``row`` to an item whose gold (in the dialect asked for) is ``gold``."""
    return row.answer.format(gold=gold.strip().rstrip(";").strip())


def check(row: Row, setting: str, score: dict) -> None:
    """Assert that ``score`` (a score dict) is ``row``'s outcome in ``setting``."""
    expected = row.expected(setting)
    where = f"{row.case} on {setting}: {json.dumps(score.get('error'))}"
    if expected in REFUSALS:
        assert (score["status"], score["reason"]) == ("error", expected), where
        assert score["executed_sql"] is None, where  # refused answers never run
    elif expected == "EX 1":
        assert (score["status"], score["ex"]) == ("ok", 1), where
    elif expected.startswith("ok, "):
        assert score["status"] == "ok", where
        assert score["prediction_preview"]["rows"][0][0] == expected.removeprefix("ok, "), where
    elif expected == "error":
        assert score["status"] == "error", where
        assert score["reason"] not in REFUSALS and score["executed_sql"] is not None, where
    else:
        raise AssertionError(f"unknown expectation {expected!r}")
    if score["status"] != "ok":
        assert (score["ves"], score["ex"]) == (0, 0), where


def readme_table() -> str:
    """The README's table of the rule: one line per row, one column per setting."""
    header = ["answer", *(heading for _, heading, _, _ in SETTINGS)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in ROWS:
        answer = row.answer.replace("\n", "\\n").replace("|", "\\|")
        if row.item is not None:
            answer = f"gold of item {row.item}: `{GOLD_SHOWN[row.item]}`"
        elif "`" in answer:
            answer = f"`` {answer} ``"
        else:
            answer = f"`{answer}`"
        cells = [_cell(row.expected(key)) for key, _, _, _ in SETTINGS]
        lines.append("| " + " | ".join([answer, *cells]) + " |")
    return "\n".join(lines)


# What README shows of the LogicCat gold queries given as answers (the rows above use the real
# text of those items).
GOLD_SHOWN = {
    340: "SELECT ... AS Energy_Consumption_Per_km; SELECT * FROM cars WHERE ...;",
    1400: "SET SESSION cte_max_recursion_depth = 1000000; WITH RECURSIVE ... SELECT ...;",
    1402: "SET SESSION cte_max_recursion_depth = 1000000; WITH RECURSIVE ... SELECT ...;",
}


def _cell(outcome: str) -> str:
    return f"`{outcome}`" if outcome in REFUSALS else outcome


# -- running the table -----------------------------------------------------------------------

#: What must never reach stderr while the table is scored: every answer's outcome is its
#: item's status, not a traceback or a library's warning.
NOISE = ("Traceback", "Exception ignored", "Falling back to parsing as a 'Command'")


def cases_for(setting: str, items, gold_text, usable) -> list[tuple]:
    """``(row, item, answer)`` for each row of ``setting``: the row's own item (``Row.item``),
    else the next item ``usable(item)`` accepts, each item answering one row (a predictions
    file names each id once). ``gold_text(item)``: its gold in the dialect asked for."""
    by_id = {item.id: item for item in items}
    fixed = {row.item for row in ROWS}
    spare = (item for item in items if item.id not in fixed and usable(item))
    cases = []
    for row in rows_for(setting):
        item = by_id[row.item] if row.item is not None else next(spare)
        cases.append((row, item, answer_text(row, gold_text(item))))
    return cases


def score_with_filter(benchmark: str, cases) -> list[dict]:
    """The lm-eval filter's score dicts of the cases' answers (one document each)."""
    from sqlbench_lmeval.lmeval.hooks import ExecuteAndScore

    docs = [item.to_doc() for _, item, _ in cases]
    return ExecuteAndScore(benchmark).apply([[answer] for _, _, answer in cases], docs)


def score_with_command(benchmark: str, cases, folder, *options: str) -> list[dict]:
    """``sqlbench-lmeval score`` of the cases' answers as a predictions file; their items'
    score dicts, in case order."""
    from sqlbench_lmeval.cli import main

    predictions, output = folder / "predictions.jsonl", folder / "scores.json"
    lines = [json.dumps({"id": item.id, "prediction": answer}) for _, item, answer in cases]
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    command = ["score", benchmark, str(predictions), "--output", str(output), "--no-progress"]
    assert main([*command, *options]) == 0
    by_id = {score["id"]: score for score in json.loads(output.read_text("utf-8"))["items"]}
    return [by_id[item.id] for _, item, _ in cases]


def check_all(setting: str, cases, scores) -> None:
    assert len(scores) == len(cases)
    for (row, _, _), score in zip(cases, scores, strict=True):
        check(row, setting, score)


def assert_quiet(stderr: str) -> None:
    for noise in NOISE:
        assert noise not in stderr, stderr[-2000:]
