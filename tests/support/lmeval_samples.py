"""lm-eval's own ``EvaluationTracker`` set up as ``lm_eval --log_samples`` sets it up, for tests
that write lm-eval output folders from score dicts they made."""

from __future__ import annotations


def lmeval_tracker(output, model: str):
    """A tracker writing into ``output`` for a ``local-completions`` run of ``model``."""
    from lm_eval.loggers import EvaluationTracker

    tracker = EvaluationTracker(output_path=str(output))
    tracker.general_config_tracker.log_experiment_args(
        model_source="local-completions",
        model_args=f"model={model},base_url=http://127.0.0.1:1/v1/completions",
        system_instruction=None,
        chat_template=None,
        fewshot_as_multiturn=False,
    )
    return tracker


def logged_sample(index: int, doc: dict, target: str, prompt: str, response: str, score: dict):
    """One sample as lm-eval's evaluator builds it before the tracker writes it: our filter's
    score dict in ``filtered_resps`` and its numbers beside it, as ``process_results`` gives."""
    numbers = {
        name: value
        for name, value in score.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool) and name != "id"
    }
    return {
        "doc_id": index,
        "doc": doc,
        "target": target,
        "arguments": [(prompt, {"until": ["\nQuestion:"]})],
        "resps": [[response]],
        "filtered_resps": [score],
        "filter": "score",
        "metrics": list(numbers),
        "doc_hash": "d",
        "prompt_hash": "p",
        "target_hash": "t",
        **numbers,
    }
