"""The checks of ``sqlbench-lmeval verify``, one module each, in the order ``verify.CHECKS``
runs them. Each module has ``check(task)``, which reads a task of a run
(:class:`~sqlbench_lmeval.submission.checks.base.CheckedTask`) and adds its findings to it, and
``NEEDS_SCORES``: whether it runs after the task's answers are scored (re-scoring, truncation,
integrity) or before (completeness, attestation, provenance, task definition, settings,
cost).
The verifications of several runs given together are compared after them, by
``submission/cross_run.py``."""
