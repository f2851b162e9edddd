"""Which requests the repair model retries, and the follow-up turns it builds."""

from __future__ import annotations

import json

from lm_eval.api.instance import Instance
from lm_eval.models.api_models import JsonChatStr

from sqlbench_lmeval.lmeval.repair import NO_SQL_FEEDBACK, feedback, follow_up, is_retried

OUR_DOC = {"id": 1, "gold_sql": "SELECT 1", "db_path": "/x.sqlite", "engine": "sqlite"}


def request(doc, context="Q?", repeats=1) -> Instance:
    return Instance("generate_until", doc, (context, {"until": []}), 0, ("t", 0, repeats))


def test_only_our_single_answer_requests_are_retried():
    assert is_retried(request(OUR_DOC))
    assert not is_retried(request(OUR_DOC, repeats=8))  # a sampled task: passed through
    assert not is_retried(request({"question": "2 + 3?", "answer": "5"}))
    assert not is_retried(request({}))


def test_a_chat_context_gains_the_answer_and_the_error_as_turns():
    first = [{"role": "user", "content": "Q?"}]
    retried = follow_up(request(OUR_DOC, JsonChatStr(json.dumps(first))), "SELECT x", "boom")
    context, gen_kwargs = retried.args
    assert isinstance(context, JsonChatStr) and gen_kwargs == {"until": []}
    assert json.loads(context.prompt) == [
        *first,
        {"role": "assistant", "content": "SELECT x"},
        {"role": "user", "content": "boom"},
    ]
    assert (retried.doc, retried.task_name, retried.doc_id) == (OUR_DOC, "t", 0)


def test_a_text_context_gets_both_appended():
    context, _ = follow_up(request(OUR_DOC, "Q?\nSQL: "), "SELECT x", "boom").args
    assert context == "Q?\nSQL: SELECT x\n\nboom\n\n"


def test_feedback_names_the_error_or_asks_for_sql():
    assert feedback({"extracted_sql": None, "status": "error"}) == NO_SQL_FEEDBACK
    text = feedback({"extracted_sql": "SELECT x", "status": "error", "error": "no such column: x"})
    assert "no such column: x" in text and "(error)" in text
