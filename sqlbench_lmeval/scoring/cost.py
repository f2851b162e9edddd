"""What each answer cost (the ``sqlbench-metered`` model, ``lmeval/metered.py``): its
:class:`Cost` (prompt and completion tokens, wall latency, where the counts came from), the
envelope that carries it through lm-eval to the scoring filter (:func:`wrap`, :func:`unwrap`),
the score-dict fields it adds (``Cost.to_json``, :func:`with_cost`) and a run's sums and medians
(:func:`summary`, priced by :func:`priced`). It imports nothing heavy: the metered model loads
it too. What is measured, how, and what cannot be checked: docs/cost.md.

>>> text = wrap("SELECT 1", Cost(12, 3, 0.25, USAGE))
>>> answer, cost = unwrap(text)
>>> answer, cost.prompt_tokens, cost.completion_tokens, cost.latency_s, cost.tokens_from
('SELECT 1', 12, 3, 0.25, 'usage')
>>> unwrap("SELECT 1")  # not an envelope: the answer as it is, no cost
('SELECT 1', None)
>>> total = Cost(12, 3, 0.25, USAGE) + Cost(20, None, 0.5, USAGE)  # an attempt counted nothing
>>> total.to_json()  # doctest: +NORMALIZE_WHITESPACE
{'prompt_tokens': 32, 'completion_tokens': None, 'latency_s': 0.75, 'tokens_from': 'usage',
 'requests': 2}
>>> summary([Cost(10, 2, 1.0, USAGE).to_json(), Cost(30, 4, 3.0, USAGE).to_json(), {}])
... # doctest: +NORMALIZE_WHITESPACE
{'n_metered': 2, 'requests': 2, 'prompt_tokens': 40, 'completion_tokens': 6, 'tokens': 46,
 'latency_s': 4.0, 'median_prompt_tokens': 20.0, 'median_completion_tokens': 3.0,
 'median_tokens': 23.0, 'median_latency_s': 2.0, 'n_counted': 2, 'tokens_from': {'usage': 2}}
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from statistics import median

from sqlbench_lmeval.vocabulary import TokensFrom

ENVELOPE_KEY = "sqlbench_metered"
ENVELOPE_VERSION = 1

#: Where token counts came from: the server's ``usage``, a tokenizer (the one named with
#: ``tokenizer=``, or the local model's own), or several of those across an item's requests.
USAGE = TokensFrom.USAGE
TOKENIZER = TokensFrom.TOKENIZER
MIXED = TokensFrom.MIXED

#: Score-dict fields of a metered answer (absent from runs without measurement). The numbers are
#: logged and never averaged (``metrics.LOGGED_NUMBERS``): ``summary`` sums them instead.
PROMPT_TOKENS = "prompt_tokens"
COMPLETION_TOKENS = "completion_tokens"
LATENCY_S = "latency_s"
TOKENS_FROM = "tokens_from"
REQUESTS = "requests"  # how many requests the counts cover (retried attempts, samples)
#: Which tokenizer counted (the name given with ``tokenizer=``, or the local model's own); only
#: on counts a tokenizer made, so ``verify`` can count them again (docs/cost.md).
TOKENIZER_NAME = "tokenizer"
#: ``score --price``: the item's tokens at the given prices (in the prices' own currency).
SPEND = "spend"
COST_NUMBERS = frozenset({PROMPT_TOKENS, COMPLETION_TOKENS, LATENCY_S, REQUESTS, SPEND})


@dataclass(frozen=True)
class Cost:
    """What one request (or, summed, several: attempts, samples) cost. A count is None when
    nothing counted it (no ``usage`` and no tokenizer); ``tokens_from`` then is None too."""

    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float | None
    tokens_from: str | None
    requests: int = 1
    tokenizer: str | None = None  # which tokenizer counted (``tokens_from`` tokenizer, mixed)

    def __add__(self, other: Cost) -> Cost:
        sources = {self.tokens_from, other.tokens_from}
        names = sorted({self.tokenizer, other.tokenizer} - {None})
        return Cost(
            _sum(self.prompt_tokens, other.prompt_tokens),
            _sum(self.completion_tokens, other.completion_tokens),
            _sum(self.latency_s, other.latency_s),
            sources.pop() if len(sources) == 1 else MIXED,
            self.requests + other.requests,
            ", ".join(names) or None,
        )

    def to_json(self) -> dict:
        """The score-dict fields of this cost (and an envelope's ``cost``); ``tokenizer`` only
        when one counted."""
        fields = {
            PROMPT_TOKENS: self.prompt_tokens,
            COMPLETION_TOKENS: self.completion_tokens,
            LATENCY_S: self.latency_s,
            TOKENS_FROM: self.tokens_from,
            REQUESTS: self.requests,
        }
        if self.tokenizer is not None:
            fields[TOKENIZER_NAME] = self.tokenizer
        return fields

    @classmethod
    def from_json(cls, data) -> Cost | None:
        """The cost an envelope or an attempt carries; None when ``data`` is not one."""
        if not isinstance(data, Mapping):
            return None
        counts = [data.get(PROMPT_TOKENS), data.get(COMPLETION_TOKENS)]
        latency = data.get(LATENCY_S)
        if not all(c is None or _is_count(c) for c in counts):
            return None
        if latency is not None and not _is_number(latency):
            return None
        requests = data.get(REQUESTS, 1)
        name = data.get(TOKENIZER_NAME)
        return cls(
            *counts,
            latency,
            data.get(TOKENS_FROM),
            requests if _is_count(requests) else 1,
            name if isinstance(name, str) else None,
        )


def wrap(output: str, cost: Cost) -> str:
    """The response text carrying ``output`` (the base model's) and what it cost."""
    return json.dumps({ENVELOPE_KEY: ENVELOPE_VERSION, "output": output, "cost": cost.to_json()})


def unwrap(response) -> tuple[object, Cost | None]:
    """(the answer, its cost) of a response: a metered envelope gives its base model's output
    and cost; a retried answer (``retry_envelope``) whose attempts were metered stays as it is,
    with the sum of its attempts' costs; anything else is its own answer, at no known cost."""
    if not isinstance(response, str) or not response.startswith("{"):
        return response, None
    try:
        envelope = json.loads(response)
    except ValueError:
        return response, None
    if not isinstance(envelope, dict):
        return response, None
    if envelope.get(ENVELOPE_KEY) == ENVELOPE_VERSION and isinstance(envelope.get("output"), str):
        cost = Cost.from_json(envelope.get("cost"))
        if cost is not None:
            return envelope["output"], cost
    attempts = envelope.get("attempts")
    if isinstance(attempts, list) and attempts and all(isinstance(a, dict) for a in attempts):
        costs = [Cost.from_json(a.get("cost")) for a in attempts]
        if all(c is not None for c in costs):
            return response, _total(costs)
    return response, None


def unwrap_all(responses: Iterable) -> tuple[list, list[Cost | None]]:
    """:func:`unwrap` of each response: the answers, and their costs."""
    pairs = [unwrap(response) for response in responses]
    return [answer for answer, _ in pairs], [cost for _, cost in pairs]


def total(costs: Iterable[Cost | None]) -> Cost | None:
    """The sum of the costs of one item's samples; None unless every sample was metered."""
    costs = list(costs)
    return _total(costs) if costs and all(c is not None for c in costs) else None


def with_cost(scores: list[dict], costs: Iterable[Cost | None]) -> list[dict]:
    """``scores`` with each metered item's cost fields added (in place; returned)."""
    for score, cost in zip(scores, costs, strict=True):
        if cost is not None:
            score.update(cost.to_json())
    return scores


def summary(scores: Iterable[Mapping]) -> dict | None:
    """A run's cost over the score dicts that carry one (None when none does): sums, medians
    of the per-item values, how many items were metered and how many have token counts, and
    where the counts came from. Never a mean: a run's cost is its sum."""
    metered = [s for s in scores if REQUESTS in s]
    if not metered:
        return None
    counted = [
        s
        for s in metered
        if _is_count(s.get(PROMPT_TOKENS)) and _is_count(s.get(COMPLETION_TOKENS))
    ]
    timed = [float(s[LATENCY_S]) for s in metered if _is_number(s.get(LATENCY_S))]
    names = sorted({n for s in metered for n in str(s.get(TOKENIZER_NAME) or "").split(", ") if n})
    prompts = [s[PROMPT_TOKENS] for s in counted]
    completions = [s[COMPLETION_TOKENS] for s in counted]
    tokens = [p + c for p, c in zip(prompts, completions, strict=True)]
    return {
        "n_metered": len(metered),
        REQUESTS: sum(int(s[REQUESTS]) for s in metered),
        PROMPT_TOKENS: sum(prompts),
        COMPLETION_TOKENS: sum(completions),
        "tokens": sum(tokens),
        LATENCY_S: sum(timed),
        f"median_{PROMPT_TOKENS}": _median(prompts),
        f"median_{COMPLETION_TOKENS}": _median(completions),
        "median_tokens": _median(tokens),
        f"median_{LATENCY_S}": _median(timed),
        "n_counted": len(counted),
        TOKENS_FROM: dict(Counter(s.get(TOKENS_FROM) or "none" for s in metered)),
        **({TOKENIZER_NAME: ", ".join(names)} if names else {}),
    }


def parse_price(text: str) -> tuple[float, float]:
    """``IN,OUT``, the prices of a million prompt and of a million completion tokens.

    >>> parse_price("2.5,10")
    (2.5, 10.0)
    """
    parts = text.split(",")
    if len(parts) != 2:
        raise ValueError(f"--price takes IN,OUT (per million tokens), got {text!r}")
    prompt, completion = (float(part) for part in parts)
    if min(prompt, completion) < 0:
        raise ValueError(f"a price cannot be negative: {text!r}")
    return prompt, completion


def priced(scores: Iterable[dict], cost: dict | None, price: tuple[float, float]) -> None:
    """Add the spend at ``price`` (per million prompt, completion tokens) to each counted item
    of ``scores`` and to the run's ``cost`` summary (in place). Items without token counts get
    none: a price never stands in for a count."""
    prompt_price, completion_price = price
    for score in scores:
        if _is_count(score.get(PROMPT_TOKENS)) and _is_count(score.get(COMPLETION_TOKENS)):
            score[SPEND] = (
                score[PROMPT_TOKENS] * prompt_price + score[COMPLETION_TOKENS] * completion_price
            ) / 1e6
    if cost is not None:
        cost["price_per_million"] = {
            PROMPT_TOKENS: prompt_price,
            COMPLETION_TOKENS: completion_price,
        }
        cost[SPEND] = (
            cost[PROMPT_TOKENS] * prompt_price + cost[COMPLETION_TOKENS] * completion_price
        ) / 1e6


def _total(costs: list[Cost]) -> Cost:
    result = costs[0]
    for cost in costs[1:]:
        result = result + cost
    return result


def _sum(a, b):
    return None if a is None or b is None else a + b


def _median(values: list) -> float | None:
    return float(median(values)) if values else None


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
