"""The README's main command, for real: ``lm_eval --model hf --apply_chat_template`` on LogicCat.

The command is read from README.md's quickstart block (``support.markdown_docs``), so the test
runs what the README says: its task and flags, with a tiny local model instead of the README's.

A real Hugging Face model goes through lm-eval's ``hf`` backend (tokenizer, chat template,
``generate``, stop sequences) and our filter scores what it wrote. The model is built on the
spot (``support.tiny_hf_model``): a BPE tokenizer trained on the task's own prompts with a
ChatML template, and a 2-layer Qwen2 with seeded random weights, so nothing comes from a hub
and generation takes seconds. Random weights write text, never SQL that answers the question:
the test checks that the run completes and that every item got an outcome with a reason.

lm-eval's ``hf`` extra (torch, accelerate) is not in the suite's environment: the run and the
model's making go through the ``hf_python`` fixture's interpreter (``support.hf_python``).
"""

from __future__ import annotations

import ast
import shlex

import pytest
from support.lm_eval_run import read_outputs, run_hf_lm_eval
from support.markdown_docs import REPO, block_with

from sqlbench_lmeval.lmeval import discovery
from sqlbench_lmeval.logiccat.task import doc_to_text, load_dataset

pytestmark = pytest.mark.slow

README_MARK = "lm_eval --model hf"
LIMIT = 8
MAX_GEN_TOKS = 32  # the task's 512 would only make random text longer


def readme_command() -> tuple[str, list[str]]:
    """The task and the flags of the README's ``lm_eval --model hf`` command; the model, the
    output folder and ``--log_samples`` are the runner's own (``run_hf_lm_eval``)."""
    (line,) = [c for c in block_with(REPO / "README.md", README_MARK).commands() if "lm_eval" in c]
    words = shlex.split(line)
    assert words[:3] == ["lm_eval", "--model", "hf"], words
    options = {
        word: words[i + 1]
        for i, word in enumerate(words[:-1])
        if word.startswith("--") and not words[i + 1].startswith("--")
    }
    assert options["--model_args"].startswith("pretrained="), words
    assert {"--output_path", "--log_samples"} <= set(words), words
    flags = [w for w in words[3:] if w in {"--apply_chat_template"}]
    return options["--tasks"], flags


TASK, README_FLAGS = readme_command()


@pytest.fixture(scope="module")
def mini_docs(logiccat_cache) -> list[dict]:
    """The documents of ``logiccat_mini``, in the order lm-eval reads them."""
    return list(load_dataset("mini", cache_dir=logiccat_cache)["test"])


@pytest.fixture(scope="module")
def tiny_model(mini_docs, hf_python, tmp_path_factory):
    from support.hf_python import write_tiny_causal_lm

    folder = tmp_path_factory.mktemp("tiny-qwen2")
    return write_tiny_causal_lm(hf_python, folder, [doc_to_text(doc) for doc in mini_docs])


def outcome_of(sample: dict) -> dict:
    """Our filter's score dict for one sample (lm-eval logs ``filtered_resps`` as its repr)."""
    (logged,) = sample["filtered_resps"]
    return logged if isinstance(logged, dict) else ast.literal_eval(logged)


def test_readme_command_with_a_real_hf_model_scores_every_item(
    logiccat_cache, mini_docs, tiny_model, hf_python, tmp_path
):
    # The README's command; --limit, --gen_kwargs, --device and --batch_size keep it small.
    assert README_FLAGS == ["--apply_chat_template"]
    output = run_hf_lm_eval(
        f"pretrained={tiny_model},dtype=float32",
        TASK,
        tmp_path,
        [
            *README_FLAGS,
            "--limit",
            str(LIMIT),
            "--gen_kwargs",
            f"max_gen_toks={MAX_GEN_TOKS}",
        ],
        # The default path, as a user runs it: lm-eval's own tasks in the index too.
        {"SQLBENCH_LMEVAL_CACHE": str(logiccat_cache), discovery.ONLY_OURS_ENV: "0"},
        python=hf_python,
    )

    results, samples = read_outputs(output)
    assert results["config"]["model"] == "hf"
    run = sorted(samples[TASK], key=lambda s: s["doc_id"])
    # --limit 8 takes the first 8 documents of the task.
    expected_docs = mini_docs[:LIMIT]
    assert [s["doc"]["id"] for s in run] == [doc["id"] for doc in expected_docs]

    for sample, doc in zip(run, expected_docs, strict=True):
        # --apply_chat_template: the prompt went through our tokenizer's ChatML template.
        prompt = sample["arguments"]["gen_args_0"]["arg_0"]
        assert prompt == f"<|im_start|>user\n{doc_to_text(doc)}<|im_end|>\n<|im_start|>assistant\n"
        assert sample["arguments"]["gen_args_0"]["arg_1"]["max_gen_toks"] == MAX_GEN_TOKS

        outcome = outcome_of(sample)
        assert outcome["id"] == doc["id"]
        assert isinstance(outcome["status"], str) and outcome["status"], outcome
        assert isinstance(outcome["reason"], str) and outcome["reason"], outcome
        # VES is 1 exactly when the extracted SQL ran; random text never returns gold's result.
        assert outcome["ves"] == int(outcome["status"] == "ok"), outcome
        assert outcome["ex"] == 0, outcome
        # lm-eval's per-sample metrics are the ones our filter computed.
        assert (sample["ves"], sample["ex"]) == (outcome["ves"], outcome["ex"])

    # The model really generated (seeded weights wide enough to write varied text, see
    # support.tiny_hf_model), so scoring saw real model output, not empty strings.
    assert any(sample["resps"][0][0].strip() for sample in run)
    metrics = results["results"][TASK]
    assert metrics["ex,score"] == 0
    assert metrics["ves,score"] == pytest.approx(sum(s["ves"] for s in run) / LIMIT)
