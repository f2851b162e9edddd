"""Text-to-SQL benchmarks for EleutherAI's lm-evaluation-harness: the engine (execution,
comparison, extraction, structure) is shared, and each benchmark (``sqlbench_lmeval.logiccat``,
``sqlbench_lmeval.tpcds``) builds its data and calls it (docs/layout.md)."""

import logging

__version__ = "0.1.0"


class _SqlglotCommandFallback(logging.Filter):
    """Drops sqlglot's warning "'<sql>' contains unsupported syntax. Falling back to parsing as
    a 'Command'". sqlglot emits it for every statement it knows only by its first word
    (``SHOW``, ``CALL``, ``GRANT``, ...) and for prose that starts with such a word; here the
    text is a model's answer and what becomes of it is already that item's status and reason
    (``not_read_only``, an execution error), so the warning on stderr would only repeat it,
    once per answer and dialect tried."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_SqlglotCommandFallback())
