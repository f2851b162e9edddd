"""The leaderboard's cost columns (docs/cost.md): per model, the median tokens per answer and
the total tokens over its metered answers, and the median latency, from the items of its
verification; a figure ``verify`` could not count again (the server's ``usage``, a tokenizer
that does not load, latency always) is marked :data:`MARK`, and the board's legend says why.

>>> rows = [{"id": 1, "prompt_tokens": 90, "completion_tokens": 10, "latency_s": 0.5,
...          "tokens_from": "tokenizer"}, {"id": 2}]
>>> cost = model_cost(rows, [])
>>> cost["median_tokens"], cost["total_tokens"], cost["tokens_unverifiable"]
(100.0, 100, False)
>>> cost_cells(cost)
('100', '100', '0.50 †')
>>> cost_cells(model_cost([{"id": 1}], []))  # not metered: nothing, not zero
('–', '–', '–')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from statistics import median

from sqlbench_lmeval.scoring.cost import (
    COMPLETION_TOKENS,
    LATENCY_S,
    PROMPT_TOKENS,
    TOKENIZER,
    TOKENS_FROM,
)
from sqlbench_lmeval.submission.checks.cost import DIFFER, UNVERIFIABLE

#: How a figure nobody can check is marked in the tables.
MARK = "†"
#: The legend line under a board whose models were metered.
LEGEND = (
    f"{MARK} unverifiable: token counts the server reported (its usage) or a tokenizer that "
    "does not load where the board was made, and latency (one run's wall clock on one machine "
    "and network): nothing here can count them again. Unmarked token counts were counted again "
    "from the logged text with the run's named tokenizer. – : the run was not metered."
)
#: The cost fields of a model on the board (``leaderboard.json``) and columns of its CSV.
FIELDS = ("median_tokens", "total_tokens", "median_latency_s", "tokens_unverifiable")
COLUMNS = ("Tokens per answer (median)", "Tokens (total)", "Latency (median, s)")


def model_cost(rows: Sequence[Mapping], findings: Iterable) -> dict:
    """The cost fields of a model from its verification's item rows and findings; None values
    when none of its answers was metered."""
    counted = [
        row
        for row in rows
        if isinstance(row.get(PROMPT_TOKENS), int) and isinstance(row.get(COMPLETION_TOKENS), int)
    ]
    latencies = [row[LATENCY_S] for row in rows if isinstance(row.get(LATENCY_S), (int, float))]
    tokens = [row[PROMPT_TOKENS] + row[COMPLETION_TOKENS] for row in counted]
    unchecked = {
        item for f in findings if f.code in (UNVERIFIABLE, DIFFER) for item in f.items
    }  # fmt: skip
    return {
        "median_tokens": float(median(tokens)) if tokens else None,
        "total_tokens": sum(tokens) if tokens else None,
        "median_latency_s": float(median(latencies)) if latencies else None,
        "tokens_unverifiable": None
        if not tokens
        else any(row["id"] in unchecked or row.get(TOKENS_FROM) != TOKENIZER for row in counted),
    }


def cost_cells(model: Mapping) -> tuple[str, str, str]:
    """The three cells of a model's cost in ``leaderboard.md``."""
    mark = f" {MARK}" if model.get("tokens_unverifiable") else ""
    median_tokens, total = model.get("median_tokens"), model.get("total_tokens")
    latency = model.get("median_latency_s")
    return (
        "–" if median_tokens is None else f"{median_tokens:,.0f}{mark}",
        "–" if total is None else f"{total:,}{mark}",
        "–" if latency is None else f"{latency:.2f} {MARK}",
    )


def board_has_cost(models: Iterable[Mapping]) -> bool:
    """Whether any model of a board was metered (its cost columns and legend are shown)."""
    return any(
        model.get("median_tokens") is not None or model.get("median_latency_s") is not None
        for model in models
    )


__all__ = ["COLUMNS", "FIELDS", "LEGEND", "MARK", "board_has_cost", "cost_cells", "model_cost"]
