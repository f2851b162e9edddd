"""The lm-eval filter of the sampled tasks (``repeats: k``): lm-eval hands it the ``k`` responses of
a document together, and :class:`ExecuteAndScoreSamples` scores every sample with
``scoring.sampled.score_samples`` (voting, pass@k, means over samples: docs/sampling.md), so a
document's score dict in ``--log_samples`` shows every sample; ``lmeval.hooks.process_results``
reads it as for the single-answer tasks."""

from __future__ import annotations

from sqlbench_lmeval.lmeval.hooks import ExecuteAndScore
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.scorer import Scorer


class ExecuteAndScoreSamples(ExecuteAndScore):
    """:class:`lmeval.hooks.ExecuteAndScore` for documents with several responses each."""

    SCORE_OPTION = "--samples"

    def prediction(self, responses):
        return _responses(responses)

    def score(self, items: list[Item], resps: list) -> list[dict]:
        scorer = Scorer.from_env(items, self.benchmark.scoring_hooks())
        return scorer.score_samples(items, [_responses(responses) for responses in resps])


def _responses(responses) -> list[str]:
    """A document's responses as texts, in sampling order ("" for anything not text)."""
    if isinstance(responses, str):
        return [responses]
    if not isinstance(responses, (list, tuple)) or not responses:
        return [""]
    return [r if isinstance(r, str) else "" for r in responses]
