"""The answer of the ``sqlbench-repair`` model: every attempt, carried to the scoring filter.

lm-eval gives a filter one response string per request. The repair model (``lmeval/repair.py``)
answers one of our requests with a JSON *envelope* holding all its attempts, in order::

    {"sqlbench_repair": 1, "attempts": [{"output": "...", "status": "error",
                                          "error": "no such column: x"}, ...]}

so the filter can score the first attempt as ``ves``/``ex`` (the one-shot numbers, unchanged)
and the last one as ``ves@retry``/``ex@retry`` (after up to ``retries`` error-feedback turns,
the TPC-DS paper's protocol). :func:`score_with_retries` does that and adds ``attempts`` (each
attempt's output, status and error), ``retries_used`` (feedback turns used) and
``final_status`` to the score dict.
Any other response (a plain model, or text that merely looks like JSON) is scored as before,
with no retry keys. This module imports nothing heavy: the filter and the model both use it.

Offline, ``sqlbench-lmeval score`` reads the same envelopes (a prediction that *is* one, or a
line's ``attempts`` list, made into one by :func:`from_attempts`) and scores them here too, with
``retried_run=True`` so that every item of a retried run carries the retry numbers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from sqlbench_lmeval.scoring.item import EXCLUDED

ENVELOPE_KEY = "sqlbench_repair"
ENVELOPE_VERSION = 1
RETRY_METRICS = {"ves": "ves@retry", "ex": "ex@retry"}


def wrap(attempts: Sequence[dict]) -> str:
    """The response text carrying ``attempts`` (dicts with at least ``output``)."""
    return json.dumps({ENVELOPE_KEY: ENVELOPE_VERSION, "attempts": list(attempts)})


def attempts_of(response) -> list[dict] | None:
    """The attempts of an envelope response, or None when ``response`` is not one."""
    if not isinstance(response, str) or not response.startswith("{"):
        return None
    try:
        envelope = json.loads(response)
    except ValueError:
        return None
    if not isinstance(envelope, dict) or envelope.get(ENVELOPE_KEY) != ENVELOPE_VERSION:
        return None
    attempts = envelope.get("attempts")
    if not isinstance(attempts, list) or not attempts:
        return None
    if not all(isinstance(a, dict) and isinstance(a.get("output"), str) for a in attempts):
        return None
    return attempts


def from_attempts(attempts) -> str | None:
    """The envelope of ``attempts`` given as a list of output texts and/or ``{"output": ...}``
    dicts (a predictions file's ``attempts``); None when that is not such a non-empty list."""
    if not isinstance(attempts, list) or not attempts:
        return None
    as_dicts = [{"output": a} if isinstance(a, str) else a for a in attempts]
    text = wrap(as_dicts)
    return text if attempts_of(text) is not None else None


#: The retry numbers of an item that has no answer at all (status ``missing``).
_NOTHING_ANSWERED = {"ves@retry": 0, "ex@retry": 0, "attempts": [], "retries_used": 0}

Score = Callable[[list, list], list[dict]]


def score_with_retries(
    items: Sequence, outputs: Sequence, score: Score, *, retried_run: bool = False
) -> list[dict]:
    """Score dicts of ``items`` given each one's response; ``score(items, texts)`` scores
    plain answers (``Scorer``, with the run's settings).

    An envelope's first attempt makes the ordinary score; its last attempt, scored only when
    there was more than one, gives ``ves@retry``/``ex@retry`` (else the first's numbers).
    With ``retried_run`` (a predictions file holding envelopes) the other items get retry
    numbers too: a plain answer is one attempt, and an absent one (None) scores 0 on them.
    """
    envelopes = [attempts_of(output) for output in outputs]
    if retried_run:
        envelopes = [
            [{"output": output}] if attempts is None and isinstance(output, str) else attempts
            for attempts, output in zip(envelopes, outputs, strict=True)
        ]
    first = [a[0]["output"] if a else o for a, o in zip(envelopes, outputs, strict=True)]
    scores = score(list(items), first)
    retried = [i for i, a in enumerate(envelopes) if a and len(a) > 1]
    finals = dict(
        zip(
            retried,
            score([items[i] for i in retried], [envelopes[i][-1]["output"] for i in retried])
            if retried
            else [],
            strict=True,
        )
    )
    for i, attempts in enumerate(envelopes):
        if scores[i]["status"] == EXCLUDED:  # gold did not finish: no number, retried or not
            continue
        if attempts is None:
            if retried_run:
                scores[i].update(_NOTHING_ANSWERED, final_status=scores[i].get("status"))
            continue
        final = finals.get(i, scores[i])
        for metric, retry_metric in RETRY_METRICS.items():
            scores[i][retry_metric] = final[metric]
        scores[i]["attempts"] = attempts
        scores[i]["retries_used"] = len(attempts) - 1
        scores[i]["final_status"] = final.get("status")
    return scores
