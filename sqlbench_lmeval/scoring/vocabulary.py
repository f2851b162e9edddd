"""The base of scoring's vocabularies: enums whose members are their plain strings.

A member is written, counted and printed as its value, so a score dict, a JSON file and a
message read the same whether a value came from the enum or from a file.

>>> class Color(Vocabulary):
...     RED = "red"
>>> f"{Color.RED}", str(Color.RED), Color.RED == "red", {"red": 1}[Color.RED]
('red', 'red', True, 1)
"""

from __future__ import annotations

from enum import Enum


class Vocabulary(str, Enum):
    """A ``str`` enum printed and formatted as its value (as ``enum.StrEnum`` of Python 3.11,
    which the package's oldest Python, 3.10, lacks)."""

    __str__ = str.__str__
    __format__ = str.__format__
