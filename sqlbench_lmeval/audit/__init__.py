"""Audits of the benchmarks themselves, not of a model: the gold card of a task (what its own gold
scores through the pipeline a model's answers take, and how healthy that gold is:
:mod:`~sqlbench_lmeval.audit.card`) and the suspect-gold audit across scored runs
(:mod:`~sqlbench_lmeval.audit.suspects`); both written as Markdown, HTML and JSON
(:mod:`~sqlbench_lmeval.audit.pages`). Neither changes a score: docs/gold-audit.md."""
