"""Extraction from realistic model outputs: one table, read as the specification."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.hostile_outputs import hostile_outputs, hostile_text, named_outputs, truncated_names

from sqlbench_lmeval.sql.extract import (
    EXECUTABLE_COMMENT,
    MULTIPLE_STATEMENTS,
    NOT_READ_ONLY,
    Extraction,
    ends_in_loop,
    extract_sql,
)

Q = "SELECT name FROM singer WHERE age > 30"

# (case id, model output, prompt tail, expected sql, expected method[, problem, truncated])
CASES = [
    ("bare_query", Q, "", Q, "plain"),
    ("bare_with_semicolon", Q + ";", "", Q, "plain"),
    ("fenced_sql", f"Here is the query:\n\n```sql\n{Q};\n```", "", Q, "fenced_sql"),
    ("fenced_sqlite_label", f"```sqlite\n{Q}\n```", "", Q, "fenced_sql"),
    ("fenced_unlabelled", f"```\n{Q}\n```\nThis returns the names.", "", Q, "fenced"),
    (
        "last_fence_wins",
        f"First attempt:\n```sql\nSELECT * FROM singer\n```\nCorrected:\n```sql\n{Q}\n```",
        "",
        Q,
        "fenced_sql",
    ),
    (
        "sql_fence_beats_later_other_fence",
        f"```sql\n{Q}\n```\nOutput:\n```\nname\n----\nBob\n```",
        "",
        Q,
        "fenced_sql",
    ),
    # Cut off by the token limit inside the fence: the query is kept, the cut is reported.
    ("truncated_fence", f"```sql\n{Q}", "", Q, "fenced_sql", None, True),
    (
        "think_then_fence",
        f"<think>\nMaybe SELECT * FROM singer? No, filter by age.\n</think>\n\n```sql\n{Q}\n```",
        "",
        Q,
        "after_think+fenced_sql",
    ),
    (
        "think_then_plain",
        f"<think>The user wants singers over 30.</think>\n{Q}",
        "",
        Q,
        "after_think+plain",
    ),
    (
        "think_without_open_tag",  # R1-style: the template already opened the think block
        f"We need age > 30. SELECT * FROM singer is wrong.\n</think>\n\n{Q};",
        "",
        Q,
        "after_think+plain",
    ),
    (
        "unclosed_think",
        "<think>\nLet me try SELECT name FROM singer",
        "",
        None,
        "unclosed_think",
        None,
        True,
    ),
    ("answer_is", f"Thinking about ages...\nThe answer is: {Q};", "", Q, "answer_marker"),
    ("final_answer", f"Draft: SELECT 1\nFinal answer: {Q}", "", Q, "answer_marker"),
    ("sql_colon", f"SQL: {Q}\nExplanation: filters by age.", "", Q, "answer_marker"),
    (
        "leading_prose",
        f"To find singers older than 30, select from the singer table.\n\n{Q}",
        "",
        Q,
        "after_prose",
    ),
    (
        "trailing_explanation_no_semicolon",
        f"{Q}\n\nThis query selects the names of singers whose age is above 30.",
        "",
        Q,
        "plain",
    ),
    (
        "trailing_explanation_same_paragraph",
        f"{Q}\nThis query returns every singer older than 30.",
        "",
        Q,
        "plain",
    ),
    (
        "several_statements_refused",  # sqlite3 cursors (the seed's peers) refuse them too
        f"{Q};\nSELECT count(*) FROM singer;",
        "",
        f"{Q};\nSELECT count(*) FROM singer",
        "plain",
        MULTIPLE_STATEMENTS,
    ),
    (
        "semicolon_inside_string",
        "SELECT name FROM singer WHERE note = 'a;b';\nDROP TABLE singer;",
        "",
        "SELECT name FROM singer WHERE note = 'a;b';\nDROP TABLE singer",
        "plain",
        MULTIPLE_STATEMENTS,
    ),
    (
        "subquery_not_carved",
        "Use a subquery:\nSELECT name FROM singer WHERE age > (SELECT avg(age) FROM singer)",
        "",
        "SELECT name FROM singer WHERE age > (SELECT avg(age) FROM singer)",
        "after_prose",
    ),
    (
        "cte",
        "```sql\nWITH old AS (\n  SELECT * FROM singer WHERE age > 30\n)\n\n"
        "SELECT name FROM old\n```",
        "",
        "WITH old AS (\n  SELECT * FROM singer WHERE age > 30\n)\n\nSELECT name FROM old",
        "fenced_sql",
    ),
    (
        "union_after_blank_line",
        "SELECT name FROM singer\n\nUNION\n\nSELECT name FROM band",
        "",
        "SELECT name FROM singer\n\nUNION\n\nSELECT name FROM band",
        "plain",
    ),
    (
        "leading_comment_line",
        f"```sql\n-- singers older than 30\n{Q}\n```",
        "",
        Q,
        "fenced_sql",
    ),
    (
        "comment_mentioning_select",
        f"-- select the names\n{Q}",
        "",
        Q,
        "plain",
    ),
    (
        "multiline_keeps_newlines",
        "```sql\nSELECT name -- the name\nFROM singer\nWHERE age > 30\n```",
        "",
        "SELECT name -- the name\nFROM singer\nWHERE age > 30",
        "fenced_sql",
    ),
    (
        "prompt_ends_in_select",
        " name FROM singer WHERE age > (SELECT avg(age) FROM singer);\n\nDone.",
        "Question: who is older than average?\nSQL: SELECT",
        "SELECT name FROM singer WHERE age > (SELECT avg(age) FROM singer)",
        "prompt_continuation",
    ),
    (
        "prompt_ends_in_select_but_model_restarts",
        f"{Q};",
        "SQL: SELECT",
        Q,
        "plain",
    ),
    (
        "prompt_ends_in_select_chat_model_fences",
        f"```sql\n{Q}\n```",
        "SQL: SELECT",
        Q,
        "fenced_sql",
    ),
    ("inline_code", f"The answer is `{Q}`.", "", Q, "inline_code"),
    (
        "fence_then_markdown_explanation",
        f"**SQL Query:**\n```sql\n{Q}\n```\n\n### Explanation\n- `age > 30` filters.",
        "",
        Q,
        "fenced_sql",
    ),
    ("mysql_backticks", "SELECT `name` FROM `singer`", "", "SELECT `name` FROM `singer`", "plain"),
    (
        "non_select_in_sql_fence",
        "```sql\nDROP TABLE singer;\n```",
        "",
        "DROP TABLE singer",
        "fenced_sql",
        NOT_READ_ONLY,
    ),
    (
        "unparseable_one_line_taken_whole",
        "SELECT name FROM singer WHERE age >> >> 30",
        "",
        "SELECT name FROM singer WHERE age >> >> 30",
        "plain",
    ),
    (
        "unparseable_query_after_prose",
        "My attempt:\nSELECT name\nFROM singer WHERE age >> >> 30",
        "",
        "SELECT name\nFROM singer WHERE age >> >> 30",
        "unparsed",
    ),
    # A sentence that starts like a statement is prose before the query ...
    (
        "sentence_starting_with_show",
        f"Show the names of singers older than 30:\n{Q}",
        "",
        Q,
        "after_prose",
    ),
    ("sentence_starting_with_set", f"Set up the filter as follows.\n\n{Q}", "", Q, "after_prose"),
    # ... a statement written as SQL is one, and a query inside it is never carved out.
    (
        "set_statement_for",
        f"SET STATEMENT max_statement_time=0 FOR {Q}",
        "",
        f"SET STATEMENT max_statement_time=0 FOR {Q}",
        "plain",
        NOT_READ_ONLY,
    ),
    (
        "explain_after_prose",
        f"The plan:\nexplain {Q}",
        "",
        f"explain {Q}",
        "after_prose",
        NOT_READ_ONLY,
    ),
    (
        "show_then_prose",
        "SHOW TABLES\n\nThis lists the tables.",
        "",
        "SHOW TABLES",
        "plain",
        NOT_READ_ONLY,
    ),
    (
        "set_then_query",
        f"SET @x = 1;\n{Q};",
        "",
        f"SET @x = 1;\n{Q}",
        "plain",
        MULTIPLE_STATEMENTS,
    ),
    (
        "second_statement_sqlglot_cannot_parse",  # LogicCat gold 340's shape: Range is a keyword
        f"{Q}; SELECT * FROM cars WHERE Battery_Capacity / Range < 0.1;",
        "",
        f"{Q};\nSELECT * FROM cars WHERE Battery_Capacity / Range < 0.1",
        "plain",
        MULTIPLE_STATEMENTS,
    ),
    ("parenthesised_query", f"({Q})", "", f"({Q})", "plain"),
    # A clause that starts a line inside a query that does not parse is not a statement.
    (
        "statement_word_inside_unparsed_query",
        "My attempt:\n"
        "SELECT name FROM singer\nWHERE age >> >> 30 AND\nreplace(name, 'a', 'b') = 'x'",
        "",
        "SELECT name FROM singer\nWHERE age >> >> 30 AND\nreplace(name, 'a', 'b') = 'x'",
        "unparsed",
    ),
    ("comment_only_fence", "```sql\n-- cannot be answered\n```", "", None, "no_sql_found"),
    ("comment_only", "-- nothing here", "", None, "no_sql_found"),
    ("refusal_prose", "I'm sorry, I can't help with that.", "", None, "no_sql_found"),
    ("empty", "", "", None, "empty"),
    ("blank", "  \n\t ", "", None, "empty"),
]


@pytest.mark.parametrize(
    ("output", "prompt_tail", "expected"),
    [(case[1], case[2], Extraction(*case[3:])) for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_extraction_table(output, prompt_tail, expected):
    assert extract_sql(output, prompt_tail=prompt_tail) == expected


@settings(max_examples=300, deadline=None, derandomize=True)
@given(hostile_text(), st.sampled_from(["", "SELECT", "SQL: SELECT"]))
def test_never_raises(output, tail):
    # derandomize: the same 300 examples every run (the old random draw found a NUL crash in
    # about one run of six, so CI failed at random).
    result = extract_sql(output, prompt_tail=tail)
    assert result.sql is None or result.sql.strip() == result.sql
    assert result.problem in (None, MULTIPLE_STATEMENTS, NOT_READ_ONLY)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(hostile_text(), st.sampled_from(["mysql", "duckdb", "postgres"]))
def test_never_raises_in_other_dialects(output, dialect):
    result = extract_sql(output, dialect=dialect)
    assert result.sql is None or result.sql.strip() == result.sql
    allowed = (None, MULTIPLE_STATEMENTS, NOT_READ_ONLY)
    assert result.problem in (*allowed, EXECUTABLE_COMMENT) if dialect == "mysql" else allowed


HOSTILE = hostile_outputs()


@pytest.mark.parametrize(("name", "output"), HOSTILE, ids=[name for name, _ in HOSTILE])
def test_hostile_outputs_give_an_extraction(name, output):
    result = extract_sql(output)
    assert result.sql is None or result.sql.strip() == result.sql
    assert result.problem in (None, MULTIPLE_STATEMENTS, NOT_READ_ONLY)
    if name in NAMED:  # truncation by construction (see support.hostile_outputs)
        assert result.truncated == (name in TRUNCATED)


NAMED = {name for name, _ in named_outputs()}
TRUNCATED = truncated_names()


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["```sql\n{}\n```", "{}", "The answer is: {};", "<think>x</think>{}"]))
def test_query_survives_every_wrapper(wrapper):
    assert extract_sql(wrapper.format(Q)).sql == Q


# Comments follow the dialect the answer was asked in: (output, dialect, sql, problem).
DIALECT_CASES = [
    ("SELECT 1 --1; DROP TABLE t", "sqlite", "SELECT 1 --1; DROP TABLE t", None),
    ("SELECT 1 --1; DROP TABLE t", "mysql", "SELECT 1 --1;\nDROP TABLE t", MULTIPLE_STATEMENTS),
    (
        "SELECT 1 # note; DROP TABLE t",
        "sqlite",
        "SELECT 1 # note;\nDROP TABLE t",
        MULTIPLE_STATEMENTS,
    ),
    ("SELECT 1 # note; DROP TABLE t", "mysql", "SELECT 1 # note; DROP TABLE t", None),
    ("SELECT 'it\\'s; DROP TABLE t'", "mysql", "SELECT 'it\\'s; DROP TABLE t'", None),
    ("# the answer\nSELECT 1", "mysql", "SELECT 1", None),
    ("SELECT $$a;b$$", "duckdb", "SELECT $$a;b$$", None),
    ("SELECT 1 /*! + 1 */", "sqlite", "SELECT 1 /*! + 1 */", None),
    ("SELECT 1 /*! + 1 */", "mysql", "SELECT 1 /*! + 1 */", EXECUTABLE_COMMENT),
    ("/*M!100000 SET x = 1 */ SELECT 1", "mysql", "SELECT 1", EXECUTABLE_COMMENT),
    ("SELECT 1; /*!50000 DROP TABLE t */", "mysql", "SELECT 1", EXECUTABLE_COMMENT),
    ("SELECT '/*! not code' AS x", "mysql", "SELECT '/*! not code' AS x", None),
]


@pytest.mark.parametrize(("output", "dialect", "sql", "problem"), DIALECT_CASES)
def test_comments_of_the_answers_dialect(output, dialect, sql, problem):
    result = extract_sql(output, dialect=dialect)
    assert (result.sql, result.problem) == (sql, problem)


def test_a_truncated_output_that_repeats_itself_is_a_repetition_loop():
    loop = "<think>\nThe table has a column age. " + "Let me check the schema again. " * 40
    assert extract_sql(loop) == Extraction(
        None, "unclosed_think", truncated=True, repetition_loop=True
    )
    cut = "<think>\n" + " ".join(f"step {i}: add column c{i} to the total." for i in range(60))
    assert extract_sql(cut) == Extraction(None, "unclosed_think", truncated=True)
    # Not truncated: a loop in a finished answer is no advice about the budget.
    assert extract_sql(Q + "\n" + "Done. " * 100).repetition_loop is False


@pytest.mark.parametrize(
    ("text", "loops"),
    [
        ("x " * 150, True),  # a two-character piece, 300 characters
        ("\n" * 250, True),  # blank lines until the limit
        ("SELECT 0, " + "0, " * 100, True),  # cut anywhere inside the last copy
        ("abc" * 50, False),  # 150 characters: too short to call it a loop
        ("SELECT a FROM t WHERE " + " OR ".join(f"b = {i}" for i in range(100)), False),
    ],
)
def test_ends_in_loop(text, loops):
    assert ends_in_loop(text) is loops
