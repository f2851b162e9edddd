"""``sqlbench-metered`` over a model that is not an API model (lm-eval's ``dummy``, which answers
"lol"): each of our requests is asked alone and timed, counted by the named tokenizer, and
answered with the envelope; another task's request gets the base model's answer unchanged."""

from __future__ import annotations

import re

from lm_eval.api.instance import Instance

from sqlbench_lmeval.lmeval.metered import MeteredModel
from sqlbench_lmeval.scoring.cost import TOKENIZER, unwrap

WORDS = re.compile(r"\w+|[^\w\s]+")
OURS = {"gold_sql": "SELECT 1", "db_path": "x.db", "engine": "sqlite", "id": 1}


def request(doc: dict, context: str, idx: int) -> Instance:
    return Instance("generate_until", doc, (context, {"until": ["\n\n"]}), idx, ("t", idx, 1))


def write_word_tokenizer(folder) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0, "lol": 1}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]").save_pretrained(folder)


def test_a_local_model_is_metered_one_request_at_a_time_by_its_tokenizer(tmp_path):
    write_word_tokenizer(tmp_path)
    model = MeteredModel(base="dummy", tokenizer=str(tmp_path))
    contexts = ["Question: how many pumps, in all?\nSQL:", "Which pump is (still) running?"]
    answers = model.generate_until(
        [request(OURS, contexts[0], 0), request({"question": "q"}, contexts[1], 1)]
    )
    output, cost = unwrap(answers[0])
    assert output == "lol"
    assert (cost.prompt_tokens, cost.completion_tokens) == (len(WORDS.findall(contexts[0])), 1)
    assert cost.tokens_from == TOKENIZER and cost.latency_s >= 0 and cost.requests == 1
    assert answers[1] == "lol"  # not one of our tasks: no envelope


def test_no_usage_and_no_tokenizer_counts_nothing_and_says_so():
    model = MeteredModel(base="dummy")
    (answer,) = model.generate_until([request(OURS, "Question: anything?", 0)])
    output, cost = unwrap(answer)
    assert output == "lol"
    assert (cost.prompt_tokens, cost.completion_tokens, cost.tokens_from) == (None, None, None)
    assert cost.latency_s is not None
