"""Settings as the benchmark defines them: zero-shot, greedy decoding for the tasks that are
not sampled, without penalties, nucleus or top-k cuts and beams (the sampled ones: their own
sampling settings), chat template and system instruction, the lm-eval version, the generation
limit, and prompts too long for the model's context where the run records that context
(lm-eval's ``max_length``; counted with the run's tokenizer when it loads offline)."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata

from sqlbench_lmeval.lmeval import versions
from sqlbench_lmeval.lmeval.task_specs import TaskSpec
from sqlbench_lmeval.scoring.scored import is_number
from sqlbench_lmeval.submission.checks.base import (
    FINDING,
    INFO,
    NOT_RECORDED,
    REJECT,
    CheckedTask,
)
from sqlbench_lmeval.submission.checks.chat_wrap import chat_run
from sqlbench_lmeval.submission.logged import LoggedAnswer

#: Whether the check reads the task's scores (it runs after the scoring).
NEEDS_SCORES = False


def check(task: CheckedTask) -> None:
    """The settings as recorded into ``task.facts``, and findings."""
    task.facts.update(
        _settings(task.spec, task.logged, task.submission, task.answers, task.prompts, task.add)
    )


#: The lm-eval release this verification runs (the installed one).
LM_EVAL_VERSION = metadata.version("lm_eval")


def _settings(spec: TaskSpec, logged, submission, answers, prompts, add) -> dict:
    """Decoding, shots, template and limits as the run recorded them, against the task's."""
    config = logged.config
    generation = dict(config.get("generation_kwargs") or {})
    logged_kwargs = [dict(answer.generation) for answer in answers.values() if answer.generation]
    observed = [generation, *logged_kwargs] if generation or logged_kwargs else []
    facts: dict = {
        "num_fewshot": config.get("num_fewshot"),
        "generation_kwargs": generation or (logged_kwargs[0] if logged_kwargs else None),
        "repeats": config.get("repeats"),
    }
    shots = config.get("num_fewshot")
    if shots:
        add(
            "settings",
            "not_zero_shot",
            REJECT,
            f"{shots}-shot: the benchmark is zero-shot (examples change every prompt)",
        )
    if spec.greedy:
        sampling = [
            kw for kw in observed if kw.get("do_sample") or _positive(kw.get("temperature"))
        ]
        if sampling:
            shown = sampling[0]
            ids = [
                item_id
                for item_id, answer in answers.items()
                if answer.generation
                and (
                    answer.generation.get("do_sample")
                    or _positive(answer.generation.get("temperature"))
                )
            ]
            add(
                "settings",
                "sampling_on_greedy_task",
                REJECT,
                f"sampled decoding (do_sample={shown.get('do_sample')}, temperature="
                f"{shown.get('temperature')}) on a greedy task: {spec.name} is defined with "
                "do_sample false, temperature 0",
                ids,
            )
        changed = _decoding_changes(observed)
        if changed:
            ids = [
                item_id
                for item_id, answer in answers.items()
                if answer.generation and _decoding_changes([answer.generation])
            ]
            add(
                "settings",
                "decoding_settings",
                FINDING,
                f"decoding settings that change greedy answers ({changed}) on a greedy task: "
                f"{spec.name} is defined with none of them; the run is ranked apart from runs "
                "on the task's settings",
                ids,
            )
    else:
        wanted = {k: spec.generation_kwargs.get(k) for k in ("do_sample", "temperature", "top_p")}
        differ = [kw for kw in observed if any(k in kw and kw[k] != v for k, v in wanted.items())]
        if differ:
            add(
                "settings",
                "sampling_settings",
                REJECT,
                f"sampling settings differ from the task's {wanted}: {differ[0]}",
            )
        repeats = config.get("repeats")
        if repeats is not None and int(repeats) != spec.repeats:
            add(
                "settings",
                "repeats",
                REJECT,
                f"{repeats} samples per item; the task asks for {spec.repeats}",
            )
    limits = sorted({kw.get("max_gen_toks") for kw in observed if kw.get("max_gen_toks")})
    # What the run records, never the task's defaults in its place: a predictions file or a
    # score output records no settings at all.
    facts["max_gen_toks"] = limits[-1] if limits else NOT_RECORDED
    if limits and limits != [spec.max_gen_toks]:
        add(
            "settings",
            "generation_limit",
            FINDING,
            f"max_gen_toks {', '.join(map(str, limits))}, the task's is {spec.max_gen_toks}: "
            "another budget gives other answers (a longer one room to reason, a shorter one cut "
            "answers); the run is ranked apart from runs on the task's settings",
        )
    run = submission.settings
    attested = submission.kind == "lm-eval"
    chat = chat_run(run)
    facts["chat_template"] = (f"on ({chat})" if chat else "off") if attested else NOT_RECORDED
    facts["chat_template_sha"] = run.get("chat_template_sha")
    if not attested:
        for key in ("num_fewshot", "generation_kwargs", "repeats"):
            if facts.get(key) is None:
                facts[key] = NOT_RECORDED
    recorded = run.get("lm_eval_version")
    facts["lm_eval_version"] = recorded or NOT_RECORDED
    if attested and recorded and str(recorded) != LM_EVAL_VERSION:
        both_tested = {str(recorded), LM_EVAL_VERSION} <= set(versions.TESTED)
        add(
            "provenance",
            "lm_eval_version",
            INFO if both_tested else FINDING,
            f"the run records lm-eval {recorded}; this verification runs lm-eval "
            f"{LM_EVAL_VERSION}: both are tested to give these tasks the same numbers"
            if both_tested
            else f"the run records lm-eval {recorded}; this benchmark's tasks are defined for, "
            f"and verified with, lm-eval {', '.join(versions.TESTED)}",
        )
    elif attested and not recorded:
        add("provenance", "lm_eval_version", FINDING, "the results file records no lm-eval version")
    if run.get("system_instruction"):
        add(
            "settings",
            "system_instruction",
            REJECT,
            "a system instruction was added to every prompt: "
            f"{str(run['system_instruction'])[:200]!r}",
        )
    facts["limit"] = (run.get("config") or {}).get("limit")
    facts["max_length"] = run.get("max_length")
    _context(run, answers, facts, add)
    return facts


def _context(run: Mapping, answers: Mapping[int, LoggedAnswer], facts: dict, add) -> None:
    """Prompts that cannot fit the model's context with room for the generation limit.

    lm-eval's ``hf`` model keeps the last ``max_length - max_gen_toks`` tokens of a longer
    prompt and drops the rest (the start of the schema) without a word. The run records
    ``max_length``; the prompt is counted with the run's own tokenizer when it loads offline.
    """
    max_length = run.get("max_length")
    budget = facts.get("max_gen_toks")
    if not isinstance(max_length, int) or not isinstance(budget, int):
        facts["context_check"] = "not recorded (no max_length in the run)"
        return
    tokenizer, name = _tokenizer(run)
    if tokenizer is None:
        facts["context_check"] = f"not checked: tokenizer {name!r} not available offline"
        add(
            "settings",
            "context_not_checked",
            INFO,
            f"the run's context is {max_length} tokens, but its tokenizer ({name}) is not "
            "available offline, so prompt lengths were not counted",
        )
        return
    room = max_length - budget
    ids = sorted(answers)
    texts = [answers[i].prompt or "" for i in ids]
    counts = [len(ids_) for ids_ in tokenizer(texts, add_special_tokens=False)["input_ids"]]
    over = [item_id for item_id, count in zip(ids, counts, strict=True) if count > room]
    facts["context_check"] = f"counted with {name}"
    facts["prompt_tokens_max"] = max(counts, default=0)
    if over:
        add(
            "settings",
            "prompt_exceeds_context",
            FINDING,
            f"{len(over)} prompt(s) longer than the {room} tokens the model's context of "
            f"{max_length} leaves beside max_gen_toks {budget} (longest: {max(counts)} "
            "tokens): lm-eval cut them from the left, dropping the start of the schema; "
            "lower max_gen_toks or use a model with a longer context",
            over,
        )


def _tokenizer(run: Mapping):
    """The run's tokenizer, loaded from local files only, and its name (None if it cannot)."""
    arguments = (run.get("config") or {}).get("model_args")
    if isinstance(arguments, str):
        arguments = dict(part.split("=", 1) for part in arguments.split(",") if "=" in part)
    arguments = arguments if isinstance(arguments, Mapping) else {}
    name = arguments.get("tokenizer") or arguments.get("pretrained")
    if not name:
        return None, None
    try:
        from transformers import AutoTokenizer  # optional: transformers (the hf extra)

        return AutoTokenizer.from_pretrained(str(name), local_files_only=True), str(name)
    except Exception:  # not installed, not cached, not a tokenizer: say so, never fail
        return None, str(name)


#: Decoding settings that change what greedy decoding writes, each with the values that leave
#: it alone (lm-eval passes ``--gen_kwargs`` on to the model: Hugging Face ``generate``, vLLM,
#: an OpenAI-compatible API). A seed does not change a greedy answer and is not listed.
NEUTRAL_DECODING = {
    "top_p": (1, 1.0, None),
    "top_k": (0, -1, None),
    "min_p": (0, 0.0, None),
    "typical_p": (1, 1.0, None),
    "num_beams": (1, None),
    "num_beam_groups": (1, None),
    "repetition_penalty": (1, 1.0, None),
    "frequency_penalty": (0, 0.0, None),
    "presence_penalty": (0, 0.0, None),
    "length_penalty": (1, 1.0, None),
    "no_repeat_ngram_size": (0, None),
    "logit_bias": (None, {}),
    "best_of": (1, None),
}


def _decoding_changes(observed) -> str:
    """The decoding settings of ``observed`` (generation kwargs) that change greedy answers,
    as ``name=value`` text ("" when there are none).

    >>> _decoding_changes([{"top_p": 0.1, "seed": 7, "temperature": 0, "num_beams": 1}])
    'top_p=0.1'
    """
    changed = {
        f"{name}={value}"
        for kwargs in observed
        for name, value in kwargs.items()
        if name in NEUTRAL_DECODING and value not in NEUTRAL_DECODING[name]
    }
    return ", ".join(sorted(changed))


def _positive(value) -> bool:
    return is_number(value) and value > 0
