"""Prompts that cannot fit the model's context, found where the run records the context.

lm-eval's ``hf`` model keeps only the last ``max_length - max_gen_toks`` tokens of a longer
prompt, so the start of the TPC-DS schema is lost without a word. A real run through
``lm_eval --model hf`` (by the ``hf_python`` fixture's interpreter) of the tiny random model
(``support.tiny_hf_model``; its tokenizer is trained on the two prompts) with
``max_length=512`` and ``max_gen_toks=16`` records ``max_length`` 512; each TPC-DS prompt (24
CREATE TABLE statements) is far above 496 tokens, so ``verify`` must flag both items, counting
with the run's own tokenizer, loaded offline.
"""

from __future__ import annotations

import json

import pytest
from conftest import TPCDS_SCALE_FACTOR
from support.lm_eval_run import run_hf_lm_eval

from sqlbench_lmeval.submission.logged import read_submissions
from sqlbench_lmeval.submission.verify import verify_submission

pytestmark = pytest.mark.slow

MAX_LENGTH, MAX_GEN_TOKS = 512, 16


def test_prompts_beyond_the_context_are_flagged(tpcds_cache, hf_python, tmp_path):
    from support.hf_python import write_tiny_causal_lm

    from sqlbench_lmeval.tpcds.task import doc_to_text, documents

    cache = tpcds_cache
    docs = documents(scale_factor=TPCDS_SCALE_FACTOR, cache_dir=cache)[:2]
    prompts = [doc_to_text(doc) for doc in docs]
    model = write_tiny_causal_lm(hf_python, tmp_path / "tiny", prompts)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model), local_files_only=True)
    lengths = [len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts]
    assert min(lengths) > MAX_LENGTH - MAX_GEN_TOKS  # the premise of the test

    output = run_hf_lm_eval(
        f"pretrained={model},dtype=float32,max_length={MAX_LENGTH}",
        "tpcds",
        tmp_path,
        [
            "--limit",
            "2",
            "--gen_kwargs",
            f"max_gen_toks={MAX_GEN_TOKS}",
            "--metadata",
            json.dumps({"scale_factor": TPCDS_SCALE_FACTOR}),
        ],
        {"SQLBENCH_LMEVAL_CACHE": str(cache)},
        python=hf_python,
    )

    (submission,) = read_submissions(str(output))
    assert submission.settings["max_length"] == MAX_LENGTH
    verification = verify_submission(submission, cache_dir=cache, workers=1)
    (task,) = verification.tasks
    (finding,) = [f for f in task.findings if f.code == "prompt_exceeds_context"]
    assert finding.items == (1, 2) and finding.severity == "finding"
    assert f"{MAX_LENGTH - MAX_GEN_TOKS} tokens" in finding.message
    assert task.facts["prompt_tokens_max"] == max(lengths)
    assert task.facts["context_check"] == f"counted with {model}"
    # The run itself stands: our prompts, as built (no chat template), two items of 99.
    assert {item["prompt"] for item in task.items if item["verdict"] != "missing"} == {"same"}
    assert task.facts["chat_template"] == "off"
    assert verification.verdict == "verified with findings"
