"""lm-eval hooks shared by every task: the batch scoring filter and ``process_results``.

lm-eval calls ``process_results`` serially, one document at a time, but hands a filter all
responses of a task at once. So all the work (extraction, sandboxed execution in parallel,
comparison) happens in :class:`ExecuteAndScore`, whose output per document is the full score
dict: it lands in ``filtered_resps`` of ``--log_samples``, where a reader sees the extracted SQL,
the execution status and error, and the gold status next to the metrics.

Documents carry the fields of :meth:`scoring.Item.to_doc`, so the filter scores exactly the
items the task's ``custom_dataset`` built, whatever ``--metadata`` options chose them.
"""

from __future__ import annotations

import os

from lm_eval.api.filter import Filter

from sqlbench_lmeval.benchmarks import benchmark_module, scoring_hooks
from sqlbench_lmeval.execution import GoldCache, Limits
from sqlbench_lmeval.paths import gold_cache_dir
from sqlbench_lmeval.scoring import EXECUTION_METRICS, Item, score_items

#: Environment overrides for a run through lm-eval, whose filters take no CLI options.
WORKERS_ENV = "SQLBENCH_LMEVAL_WORKERS"
TIMEOUT_ENV = "SQLBENCH_LMEVAL_TIMEOUT"


def limits_from_env() -> Limits:
    timeout = os.environ.get(TIMEOUT_ENV)
    return Limits(timeout_s=float(timeout)) if timeout else Limits()


def workers_from_env() -> int | None:
    workers = os.environ.get(WORKERS_ENV)
    return int(workers) if workers else None


def gold_cache() -> GoldCache:
    return GoldCache(gold_cache_dir())


class ExecuteAndScore(Filter):
    """Extract, execute and compare every response of a task in one parallel batch.

    ``benchmark`` names the module that may add per-item numbers (``item_metrics``), the
    text our prompt ends with (``PROMPT_TAIL``) and the translation of predictions written in
    another dialect (``transpile_prediction``): see ``benchmarks.scoring_hooks``.
    """

    def __init__(self, benchmark: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.module = benchmark_module(benchmark)

    def apply(self, resps, docs):
        items = [Item.from_doc(doc) for doc in docs]
        # Greedy decoding gives one response per document; the first is the answer.
        outputs = [(responses[0] if responses else "") for responses in resps]
        return score_items(
            items,
            [output if isinstance(output, str) else "" for output in outputs],
            limits=limits_from_env(),
            workers=workers_from_env(),
            gold_cache=gold_cache(),
            **scoring_hooks(self.module),
        )


def process_results(doc: dict, results: list) -> dict[str, float]:
    """The numbers of one document's score dict (made by :class:`ExecuteAndScore`)."""
    (score,) = results
    numbers = {name: score[name] for name in EXECUTION_METRICS}
    numbers.update(
        (name, value)
        for name, value in score.items()
        if name not in numbers
        and name != "id"
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
    )
    return numbers
