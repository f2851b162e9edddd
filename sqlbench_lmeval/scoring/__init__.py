"""Scoring: an :class:`~sqlbench_lmeval.scoring.item.Item` and a model's answer in, a score dict
out (``pipeline``), with result comparison (``compare``), retries (``retry_envelope``), sampled
answers (``sampling``, ``sampled``), result previews and the tie-aware and efficiency measures.
"""
