"""Our 99 TPC-DS questions: complete, carrying every constant of gold, naming no schema objects."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest
from support.question_constants import missing_constants, numbers_in, required_constants

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.tpcds.data import gold_queries, schema_mapping
from sqlbench_lmeval.tpcds.questions import QUESTIONS_FILE, load_questions, questions_fingerprint


@pytest.fixture(scope="module")
def questions():
    return load_questions()


def test_one_question_per_query_shipped_inside_the_package(questions):
    assert QUESTIONS_FILE.parent.name == "tpcds" and QUESTIONS_FILE.parent.parent.name == (
        "sqlbench_lmeval"
    )
    assert sorted(questions) == list(range(1, 100))
    assert all(len(question) > 80 for question in questions.values())


@pytest.mark.parametrize("query_nr", range(1, 100))
def test_every_constant_of_gold_appears_in_the_question(query_nr, questions):
    assert missing_constants(query_nr, gold_queries()[query_nr], questions[query_nr]) == []


def test_questions_name_no_tables_or_columns(questions):
    """Schema names (all have an underscore) only where gold returns them as a value."""
    names = set(schema_mapping()) | {c for cols in schema_mapping().values() for c in cols}
    for number, question in questions.items():
        constants = required_constants(number, gold_queries()[number])
        literals = {c.strings[0] for c in constants if c.strings}
        for word in re.findall(r"[A-Za-z0-9_]+", question):
            if word.lower() in names and "_" in word:
                assert word in literals, (number, word)


def test_questions_say_what_limit_gold_has(questions):
    for number, sql in gold_queries().items():
        if re.search(r"\bLIMIT\s+100\b", sql, flags=re.IGNORECASE):
            assert "100" in questions[number], number


# ---------------------------------------------------------------- the "appears" rule

RULE_CASES = [
    # (gold SQL, question, missing)
    ("SELECT a FROM t WHERE a = 100.00", "at least 100", []),
    ("SELECT a FROM t WHERE a = 100", "at least 100.0", []),
    ("SELECT a FROM t WHERE a = 100", "at least 1000", ["100"]),
    ("SELECT a FROM t WHERE y = 2001+1", "in 2002", []),  # folded: 2001 and 1 both satisfied
    ("SELECT a FROM t WHERE y = 2001+1", "in 2001", ["1"]),
    ("SELECT a FROM t WHERE o = -5", "GMT offset -5", []),
    ("SELECT a FROM t WHERE g = 'M'", "for Men", ["'M'"]),  # not inside a longer word
    ("SELECT a FROM t WHERE g = 'M'", "gender 'M'", []),
    ("SELECT a FROM t WHERE s = 'TX'", "state tx", ["'TX'"]),  # case-sensitive
    ("SELECT a FROM t WHERE d = '2000-08-23'", "from 2000-08-23 on", []),
    ("SELECT a FROM t WHERE d = '2000-08-23'", "from August 23, 2000", ["'2000-08-23'"]),
    ("SELECT a FROM t WHERE p LIKE 'Unknown%'", "starting with Unknown", []),
    ("SELECT concat(a, ', ', coalesce(b, '')) FROM t", "a, ', ' and b or ''", []),
    ("SELECT a FROM t WHERE p = '>10000'", "potential '>10000'", []),
    # exempt: type parameters, ORDER BY positions, SUBSTRING start 1, x * 1.0
    ("SELECT CAST(a AS DECIMAL(7, 2)) * 1.000, SUBSTRING(z, 1, 5) FROM t ORDER BY 1", "5", []),
]


@pytest.mark.parametrize(("sql", "question", "missing"), RULE_CASES)
def test_the_appears_rule(sql, question, missing):
    assert missing_constants(0, sql, question) == missing


def test_channel_tags_of_queries_4_11_74_are_exempt():
    for number in (4, 11, 74):
        written = {c.written for c in required_constants(number, gold_queries()[number])}
        assert not written & {"'s'", "'c'", "'w'"}, number


def test_numbers_in_text_read_a_minus_sign_both_ways():
    assert numbers_in("offset -5, 1999-2001, 1.49.") == {
        Decimal(v) for v in ("-5", "5", "1999", "2001", "1.49")
    }
    assert numbers_in("columns B1_LP and h8_30_to_9") == set()


# ---------------------------------------------------------------- user-supplied files


def write(tmp_path, records):
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def all_records():
    return [{"query_nr": n, "question": f"Question number {n}?"} for n in range(1, 100)]


def test_a_custom_questions_file(tmp_path):
    path = write(tmp_path, all_records())
    assert load_questions(path)[42] == "Question number 42?"
    assert questions_fingerprint(path) != questions_fingerprint()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda rs: rs[:-1], "no question for query_nr 99"),
        (
            lambda rs: [*rs, {"query_nr": 5, "question": "again"}],
            "query_nr 5 appears more than once",
        ),
        (lambda rs: [*rs, {"query_nr": 100, "question": "x"}], "between 1 and 99"),
        (lambda rs: [*rs, {"query_nr": "7", "question": "x"}], "query_nr must be an integer"),
        (lambda rs: [*rs, {"query_nr": 7}], 'expected an object with "query_nr" and "question"'),
        (lambda rs: [{"query_nr": 1, "question": " "}, *rs[1:]], "non-empty string"),
    ],
)
def test_bad_questions_files_are_user_errors(tmp_path, change, message):
    path = write(tmp_path, change(all_records()))
    with pytest.raises(UserError, match=re.escape(message)):
        load_questions(path)


def test_unreadable_or_invalid_files_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="cannot read TPC-DS questions"):
        load_questions(tmp_path / "absent.jsonl")
    (tmp_path / "bad.jsonl").write_text("{nope\n", encoding="utf-8")
    with pytest.raises(UserError, match="bad.jsonl:1: not valid JSON"):
        load_questions(tmp_path / "bad.jsonl")
