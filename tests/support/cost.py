"""The score fields a metered answer adds (``scoring.cost``), which a run without measurement
lacks: the tests strip them to compare a metered run's scores with a plain one's."""

from __future__ import annotations

from sqlbench_lmeval.scoring.cost import COST_NUMBERS, TOKENIZER_NAME, TOKENS_FROM

COST_FIELDS = COST_NUMBERS | {TOKENS_FROM, TOKENIZER_NAME}
