"""The base of scoring's vocabularies: a ``str`` enum whose members are written, counted and
printed as their values, so a score dict, a JSON file and a message read the same whether a
value came from the enum or from a file.

>>> class Color(Vocabulary):
...     RED = "red"
>>> Color.RED, f"{Color.RED}", Color.RED == "red", {"red": 1}[Color.RED], Color("red").name
('red', 'red', True, 1, 'RED')
"""

from __future__ import annotations

from enum import Enum


class Vocabulary(str, Enum):
    """A ``str`` enum printed, formatted and shown as its value (as ``enum.StrEnum`` of Python 3.11,
    which the package's oldest Python, 3.10, lacks)."""

    __str__ = str.__str__
    __format__ = str.__format__
    __repr__ = str.__repr__
