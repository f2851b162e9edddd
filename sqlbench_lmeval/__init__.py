"""Text-to-SQL benchmarks for EleutherAI's lm-evaluation-harness.

The engine (execution, comparison, extraction, structure) is shared; each benchmark
(``sqlbench_lmeval.logiccat``, ``sqlbench_lmeval.tpcds``) builds its data and calls it.
"""

__version__ = "0.1.0"
