"""The scanner of ``lexis`` finds the same statement ends (``;``) as sqlglot's own tokenizer of
each dialect, on SQL built from the pieces where dialects differ: strings and quoted names
holding ``;``, ``--`` with and without a space after it, ``#``, backslash escapes, ``$$``
strings (after a blank: glued to a name, ``a$$`` is part of the name, which the scanner does
not follow), ``E'...'`` escape strings (after a blank too), comments nested in comments. (The
scanner also reads prose, megabytes of it, and an unclosed quote; there sqlglot's tokenizer
raises, so those texts are not compared.) Deterministic: a fixed seed."""

from __future__ import annotations

import random

import pytest
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from sqlbench_lmeval.sql.lexis import code_start, executable_comment, first_keyword, lexis

PIECES = (
    "SELECT ", "1", " ", "a", "-", ",", "(", ")", "\n", "\r\n", ";", " ;",
    "'a;b'", "'it''s;'", "'\\\\';'", '"x;y"', "`q;r`", "[s;t]", " $$u;v$$",
    "-- c;\n", "--1", "-- ;", "--;\n", "# h;\n", "#1;", "/* c; */", "/*+ hint; */",
    "/* n /* m; */ o; */", " E'e\\';f'", " e'g;'",
)  # fmt: skip
DIALECTS = ("sqlite", "duckdb", "mysql", "postgres", "bigquery")
TEXTS = 400


def texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 14))) for _ in range(TEXTS)]


def sqlglot_ends(text: str, dialect: str) -> list[int] | None:
    try:
        tokens = Dialect.get_or_raise(dialect).tokenizer().tokenize(text)
    except TokenError:
        return None
    return [token.start for token in tokens if token.token_type == TokenType.SEMICOLON]


def scanner_ends(text: str, dialect: str) -> list[int]:
    rules = lexis(dialect)
    return [m.start() for m in rules.marks(text) if m.lastgroup == "semicolon"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_scanner_ends_statements_where_sqlglot_does(dialect):
    compared = 0
    for text in texts(seed=DIALECTS.index(dialect)):
        expected = sqlglot_ends(text, dialect)
        if expected is None:
            continue  # sqlglot cannot tokenize it (an unclosed quote, '#' where it is no comment)
        assert scanner_ends(text, dialect) == expected, repr(text)
        compared += 1
    assert compared >= TEXTS // 4  # the comparison is not vacuous


@pytest.mark.parametrize(
    ("text", "dialect", "found"),
    [
        ("SELECT 1 /*! + 1 */", "mysql", "/*!"),
        ("SELECT 1 /*M!100000 + 1 */", "mysql", "/*M!"),
        ("SELECT '/*!' AS a -- /*!\n", "mysql", None),  # in a string and in a comment
        ("SELECT 1 /*! + 1 */", "sqlite", None),  # an ordinary comment there
        ("SELECT 1 /*+ hint */", "mysql", None),  # an optimizer hint is a comment
    ],
)
def test_executable_comments_are_found_in_mysql_only(text, dialect, found):
    assert executable_comment(text, lexis(dialect)) == found


def test_template_comments_are_text():
    # sqlglot reads {# ... #} (Jinja) as a comment in every dialect; no engine does.
    assert scanner_ends("SELECT '{#'; SELECT 1 {# ; #}", "sqlite") == [11, 25]


@pytest.mark.parametrize(
    ("text", "dialect", "keyword"),
    [
        ("  -- note\n/* a /* nested */ comment */ ((select 1))", "postgres", "SELECT"),
        ("/* a /* nested */ select 1", "postgres", ""),  # the outer comment never closes
        ("/* a /* b */ select 1", "mysql", "SELECT"),  # no nesting: the comment is closed
        ("/* a /* b */ select 1", "duckdb", ""),
        ("# note\nSELECT 1", "mysql", "SELECT"),
        ("# note\nSELECT 1", "postgres", ""),  # '#' is an operator there, not a comment
        ("--1\nSELECT 1", "mysql", ""),  # '--' needs a blank after it on MySQL: minus minus 1
        ("--1\nSELECT 1", "postgres", "SELECT"),
        ("/*! SELECT */ 1", "mysql", ""),  # an executable comment is code
        ("/*+ hint */ with x as (select 1) select * from x", "mysql", "WITH"),
        ("E'SELECT'", "postgres", "E"),
        ("", "postgres", ""),
        # The mysql engine's cases.
        ("select 1", "mysql", "SELECT"),
        ("  -- note\n# other\n/* c */ ((select 1))", "mysql", "SELECT"),
        ("/*!SET x=1*/ SELECT 1", "mysql", ""),
        ("/*M!100000 DROP TABLE t */", "mysql", ""),
        ("'SELECT'", "mysql", ""),
        # The postgres engine's cases.
        ("WITH x AS (SELECT 1) SELECT * FROM x", "postgres", "WITH"),
        ("VALUES (1)", "postgres", "VALUES"),
        ("TABLE t", "postgres", "TABLE"),
        ("/* unclosed", "postgres", ""),
        ("'SELECT'", "postgres", ""),
    ],
)
def test_the_first_keyword_a_server_engine_is_sent(text, dialect, keyword):
    assert first_keyword(text, lexis(dialect)) == keyword


@pytest.mark.parametrize(
    ("text", "dialect", "start"),
    [
        ("/* a /* b */ c */", "postgres", 17),  # all comment: nothing to run
        ("/* a /* b */ c */", "sqlite", 13),
        (" ( (\n-- x\n SELECT", "duckdb", 11),
        ("/*!50000 SELECT */", "mysql", 0),
    ],
)
def test_where_the_code_starts(text, dialect, start):
    assert code_start(text, lexis(dialect)) == start
