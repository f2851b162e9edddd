"""Natural-language questions for the 99 TPC-DS queries (ours, or a user's file in the same
format); why our own questions, and the rule that ties them to gold (every constant of the gold
query appears in its question, which ``tests/support/question_constants.py`` checks):
docs/tpcds.md#questions."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.jsonl import read_objects

#: The questions we ship.
QUESTIONS_FILE = Path(__file__).with_name("questions.jsonl")

QUERY_COUNT = 99


def load_questions(path: str | Path | None = None) -> dict[int, str]:
    """``{query_nr: question}`` from ``path`` (default: ours); a UserError names any problem."""
    source = Path(path) if path is not None else QUESTIONS_FILE
    questions: dict[int, str] = {}
    records = read_objects(source, "TPC-DS questions", required=("query_nr", "question"))
    for where, record in records:
        query_nr, question = record["query_nr"], record["question"]
        if isinstance(query_nr, bool) or not isinstance(query_nr, int):
            raise UserError(f"{where}: query_nr must be an integer, got {query_nr!r}")
        if not 1 <= query_nr <= QUERY_COUNT:
            raise UserError(f"{where}: query_nr must be between 1 and {QUERY_COUNT}")
        if not isinstance(question, str) or not question.strip():
            raise UserError(f"{where}: question must be a non-empty string")
        if query_nr in questions:
            raise UserError(f"{where}: query_nr {query_nr} appears more than once")
        questions[query_nr] = question.strip()
    missing = sorted(set(range(1, QUERY_COUNT + 1)) - set(questions))
    if missing:
        shown = ", ".join(map(str, missing[:20])) + (" ..." if len(missing) > 20 else "")
        raise UserError(f"{source}: no question for query_nr {shown}")
    return questions


def questions_fingerprint(path: str | Path | None = None) -> str:
    """The first 12 hex digits of the SHA-256 of a questions file (part of the dataset version)."""
    source = Path(path) if path is not None else QUESTIONS_FILE
    return hashlib.sha256(source.read_bytes()).hexdigest()[:12]
