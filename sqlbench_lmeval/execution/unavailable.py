"""The evaluation itself cannot run: never an item's outcome, always the end of the run.

A model's query that fails is that item's status (``error``, ``timeout``, ...). When the
evaluation cannot evaluate at all - it cannot log in, the server cannot be reached, a database
or table of the benchmark is missing, gold that ran at ``prepare`` no longer runs, or an account
holds more than SELECT - scoring the item 0 would record the harness's failure as the model's.
Code that detects such a failure raises :class:`EvaluationUnavailable`; scoring lets it stop the
run with a message that names the cause.
"""

from __future__ import annotations


class EvaluationUnavailable(RuntimeError):
    """The evaluation cannot run queries at all; the message names the cause and the fix."""
