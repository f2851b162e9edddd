"""Scripted LogicCat answers for end-to-end runs: find the item a prompt asks about, and the
(VES, EX) its gold query earns as an answer.

``scripted_model(records, respond)`` turns ``respond(record) -> output text`` into the
``answer(prompt)`` callable of ``support.lm_eval_run.run_lm_eval``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

QUESTION = re.compile(r"\nQuestion: (.*?)\n\n", re.S)
# Gold statuses whose gold result a correct query can match.
MATCHABLE = {"ok", "empty", "all_null"}


def scripted_model(records: Iterable, respond: Callable) -> Callable[[str], str]:
    """``answer(prompt)``: ``respond`` called with the record whose question the prompt asks."""
    by_question = {}
    for record in records:
        by_question.setdefault(record.question.strip(), record)

    def answer(prompt: str) -> str:
        return respond(by_question[QUESTION.search(prompt).group(1).strip()])

    return answer


def gold_answer_scores(record) -> tuple[int, int]:
    """(VES, EX) of the gold query given as the answer: it runs iff gold health lets it, and
    matches itself unless its result is random."""
    runs = record.gold_status in MATCHABLE
    repeatable = "random" not in record.flags
    return int(runs), int(runs and repeatable)
