"""The answer of the ``sqlbench-repair`` model (``lmeval/repair.py``): every attempt in one
JSON envelope (:func:`wrap`, :func:`attempts_of`; :func:`from_attempts` makes one of a
predictions file's ``attempts``), and :func:`score_with_retries`, which scores the first attempt
as the answer and the last as ``ves@retry``/``ex@retry`` for the lm-eval filter and
``sqlbench-lmeval score`` alike. It imports nothing heavy, as the repair model loads it too (the
rules: docs/repair.md#scoring-retried-answers).

>>> wrap([{"output": "SELECT x", "status": "error", "error": "no such column: x"}])
'{"sqlbench_repair": 1, "attempts": [{"output": "SELECT x", "status": "error", ...}]}'
>>> envelope = from_attempts(["SELECT x", {"output": "SELECT y"}])  # a predictions file's
>>> [attempt["output"] for attempt in attempts_of(envelope)]
['SELECT x', 'SELECT y']
>>> attempts_of("SELECT y"), attempts_of('{"attempts": [{"output": "SELECT y"}]}')
(None, None)
>>> def score(items, texts):  # stands for Scorer.score: "SELECT y" is the right answer
...     return [{"status": "ok", "ves": int(t == "SELECT y"), "ex": int(t == "SELECT y")}
...             for t in texts]
>>> (scored,) = score_with_retries([7], [envelope], score)
>>> [scored[name] for name in ("ves", "ex", "ves@retry", "ex@retry", "retries_used")]
[0, 0, 1, 1, 1]
>>> "ves@retry" in score_with_retries([7], ["SELECT y"], score)[0]  # not an envelope
False"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Retried:
    """The retry record of one item's score: the last attempt's ``ves`` and ``ex`` (written as
    ``ves@retry``, ``ex@retry``), every ``attempts`` record, how many retries were used and the
    last attempt's status (:meth:`to_json`: its keys of the score dict, in order).

    >>> Retried(1, 1, [{"output": "SELECT x"}, {"output": "SELECT y"}], "ok").to_json()
    ... # doctest: +NORMALIZE_WHITESPACE
    {'ves@retry': 1, 'ex@retry': 1, 'attempts': [{'output': 'SELECT x'}, {'output': 'SELECT y'}],
     'retries_used': 1, 'final_status': 'ok'}
    """

    ves: float
    ex: float
    attempts: list
    final_status: str | None

    @classmethod
    def nothing_answered(cls, status: str | None) -> Retried:
        """The record of an item of a retried run with no answer at all (status ``missing``)."""
        return cls(0, 0, [], status)

    @property
    def retries_used(self) -> int:
        return max(len(self.attempts) - 1, 0)

    def to_json(self) -> dict:
        return {
            RETRY_METRICS["ves"]: self.ves,
            RETRY_METRICS["ex"]: self.ex,
            "attempts": self.attempts,
            "retries_used": self.retries_used,
            "final_status": self.final_status,
        }


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
                scores[i].update(Retried.nothing_answered(scores[i].get("status")).to_json())
            continue
        final = finals.get(i, scores[i])
        record = Retried(final["ves"], final["ex"], attempts, final.get("status"))
        scores[i].update(record.to_json())
    return scores
