"""The stages of scoring in order, each a module with ``run(batch, scorer)``, as sqlglot's
optimizer lists its ``RULES``: ``Scorer.run`` applies them in a loop, and a new stage is one
module and one line here (which stage's failure stops a run: docs/scoring.md#how-scoring-runs).

>>> [stage.__name__.rsplit(".", 1)[1] for stage in STAGES][:4]
['extract', 'translate', 'plan_ties', 'execute']
"""

from sqlbench_lmeval.scoring.stages import (
    execute,
    extract,
    finish_ties,
    judge,
    measure,
    plan_ties,
    preview,
    read_data,
    recheck_gold,
    recheck_timeouts,
    translate,
)

STAGES = (
    extract,
    translate,
    plan_ties,
    execute,
    recheck_gold,
    recheck_timeouts,
    finish_ties,
    judge,
    read_data,
    measure,
    preview,
)

__all__ = ["STAGES"]
