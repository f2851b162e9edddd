"""``sqlbench-repair``: any lm-eval model, retried with the database's error fed back, as the TPC-DS
paper lets a model retry up to 3 times: ``lm_eval --model sqlbench-repair --model_args
"base=<model>,retries=3,..."`` scores each answer of our tasks on the filter's scoring path and
asks again with the failed answer and the error, and its response is a ``retry_envelope``
holding every attempt (which requests are retried, and how: docs/repair.md). Over
``base=sqlbench-metered`` each attempt keeps what it cost (docs/cost.md)."""

from __future__ import annotations

import dataclasses
import json

from lm_eval.api.registry import get_model

from sqlbench_lmeval import benchmarks
from sqlbench_lmeval.benchmarks import NAMES
from sqlbench_lmeval.lmeval.wrapped import WrappedModel, is_ours
from sqlbench_lmeval.scoring import cost
from sqlbench_lmeval.scoring.hooks import Hooks
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.retry_envelope import wrap
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.vocabulary import Status

DEFAULT_RETRIES = 3
RAN = Status.OK
NO_SQL_FEEDBACK = (
    "Your answer contains no SQL query that can be run. Answer with one SQL query in a "
    "```sql code block."
)
ERROR_FEEDBACK = (
    "Running your query on the database failed ({status}):\n{error}\n"
    "Fix the query. Answer with the corrected SQL query in a ```sql code block."
)


def is_retried(request) -> bool:
    """True for a request of our single-answer tasks. Sampled tasks (``repeats`` > 1) pass
    through: their filter scores every sample as one plain answer, not an envelope."""
    return is_ours(request) and (request.repeats or 1) == 1


def feedback(score: dict) -> str:
    """The user turn that tells the model why its answer did not run."""
    if score.get("extracted_sql") is None or score.get("status") == Status.NO_SQL:
        return NO_SQL_FEEDBACK
    error = score.get("error") or score.get("reason") or "unknown error"
    return ERROR_FEEDBACK.format(status=score.get("status"), error=error)


def follow_up(request, answer: str, message: str):
    """``request`` with the failed ``answer`` and the feedback ``message`` as new turns."""
    from lm_eval.models.api_models import JsonChatStr  # optional: lm-eval's api extra

    context, *rest = request.args
    if isinstance(context, JsonChatStr):
        turns = json.loads(context.prompt) + [
            {"role": "assistant", "content": answer},
            {"role": "user", "content": message},
        ]
        context = JsonChatStr(json.dumps(turns, ensure_ascii=False))
    else:
        context = f"{context}{answer}\n\n{message}\n\n"
    return dataclasses.replace(request, arguments=(context, *rest), resps=[], filtered_resps={})


def benchmark_of(task_name: str | None) -> str | None:
    """The benchmark whose hooks (prompt tail, transpiler) apply to a task of ours."""

    return next((n for n in NAMES if (task_name or "").startswith(n)), None)


def check(requests, answers: list[str]) -> list[dict]:
    """Score dicts of ``answers`` (status, error, extracted SQL) by the filter's scoring."""

    scores: list[dict] = [{}] * len(requests)
    by_benchmark: dict[str | None, list[int]] = {}
    for i, request in enumerate(requests):
        by_benchmark.setdefault(benchmark_of(request.task_name), []).append(i)
    for name, indices in by_benchmark.items():
        hooks = benchmarks.get(name).scoring_hooks() if name else Hooks()
        hooks = dataclasses.replace(hooks, item_metrics=None)  # only whether it ran matters
        batch = [Item.from_doc(requests[i].doc) for i in indices]
        scorer = Scorer.from_env(batch, hooks, progress=False)
        scored = scorer.score(batch, [answers[i] for i in indices])
        for i, score in zip(indices, scored, strict=True):
            scores[i] = score
    return scores


class RepairModel(WrappedModel):
    """The ``sqlbench-repair`` model (docs/repair.md)."""

    def __init__(self, base: str, retries: int = DEFAULT_RETRIES, **base_args) -> None:
        super().__init__()
        if int(retries) < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        self.retries = int(retries)
        self.base = get_model(base)(**base_args)

    # -- requests ----------------------------------------------------------------------------
    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        answers: list[str | None] = [None] * len(requests)
        ours = [i for i, r in enumerate(requests) if is_retried(r)]
        others = [i for i, r in enumerate(requests) if not is_retried(r)]
        if others:
            passed = self.base.generate_until([requests[i] for i in others], disable_tqdm)
            for i, answer in zip(others, passed, strict=True):
                answers[i] = answer
        if ours:
            repaired = self._with_retries([requests[i] for i in ours], disable_tqdm)
            for i, answer in zip(ours, repaired, strict=True):
                answers[i] = answer
        return answers

    def _with_retries(self, requests, disable_tqdm: bool) -> list[str]:
        attempts: list[list[dict]] = [[] for _ in requests]
        current = list(requests)
        pending = list(range(len(requests)))
        for turn in range(self.retries + 1):
            responses = self.base.generate_until([current[i] for i in pending], disable_tqdm)
            # A metered base answers with its output and what it cost: the attempt keeps both.
            texts, costs = cost.unwrap_all(responses)
            texts = [t if isinstance(t, str) else "" for t in texts]
            scores = check([requests[i] for i in pending], texts)
            still_failing = []
            for i, text, score, spent in zip(pending, texts, scores, costs, strict=True):
                attempt = {
                    "output": text,
                    "status": score.get("status"),
                    "error": score.get("error"),
                }
                if spent is not None:
                    attempt["cost"] = spent.to_json()
                attempts[i].append(attempt)
                if score.get("status") != RAN and turn < self.retries:
                    current[i] = follow_up(current[i], text, feedback(score))
                    still_failing.append(i)
            pending = still_failing
            if not pending:
                break
        return [wrap(a) for a in attempts]
