"""The one seed every statement's random generator starts from: each engine sets it right before
each statement it runs (gold's and every answer's), so the same SQL gives the same rows on any
worker, after any other answer, on any machine
(docs/engines.md#one-seed-for-every-statement).

>>> generator = sqlite_generator()
>>> first = generator.random()
>>> reseed(generator)
>>> generator.random() == first
True
"""

from __future__ import annotations

import random

#: The seed as a fraction in [-1, 1]: PostgreSQL's and DuckDB's ``setseed(SEED)``.
SEED = 0.5
#: The seed as an integer: SQLite's generator (Python's) and MariaDB's ``rand_seed1`` and
#: ``rand_seed2`` (which set the two halves of the state ``RAND()`` reads).
INTEGER_SEED = int(SEED * 2**30)


def sqlite_generator() -> random.Random:
    """A SQLite connection's own generator, read by the functions registered on it (``random()``,
    ``randomblob(n)`` and a setup hook's, such as MySQL's ``RAND()``)."""
    return random.Random(INTEGER_SEED)


def reseed(generator: random.Random) -> None:
    """Start ``generator`` again from :data:`INTEGER_SEED`."""
    generator.seed(INTEGER_SEED)
