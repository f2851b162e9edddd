"""The answers' results a run holds, within a bound whatever their number: a :class:`HeldResults`
keeps results in memory up to :data:`IN_MEMORY` bytes (counted as the per-answer budget counts
them, ``fetch.result_size``) and writes each one beyond to an unnamed temporary file, whose rows
are read back each time they are used (:class:`SpilledRows`); the bound: docs/failures.md#memory.

>>> from sqlbench_lmeval.execution.outcome import Outcome, Status
>>> held = HeldResults(in_memory=100)
>>> small = held.keep(Outcome(Status.OK, columns=("n",), rows=((1,),)))
>>> large = held.keep(Outcome(Status.OK, columns=("t",), rows=(("x" * 200,), ("y",))))
>>> type(small.rows).__name__, type(large.rows).__name__, len(large.rows), large.rows[1]
('tuple', 'SpilledRows', 2, ('y',))
>>> large.rows == (("x" * 200,), ("y",))
True
"""

from __future__ import annotations

import pickle
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace

from sqlbench_lmeval.execution.fetch import MIB, result_size
from sqlbench_lmeval.execution.outcome import Outcome
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable

#: How much of the answers' results one run keeps in memory (``fetch.result_size``'s bytes).
IN_MEMORY = 256 * MIB


class HeldResults:
    """Results kept for one run: in memory while they total at most ``in_memory`` bytes, in a
    temporary file (removed by the system once closed, also when the process is killed) after.
    """

    def __init__(self, in_memory: int = IN_MEMORY) -> None:
        self.in_memory = in_memory
        self.held = 0
        self._file = None
        self._lock = threading.Lock()

    def keep(self, outcome: Outcome) -> Outcome:
        """``outcome`` as the run keeps it: itself, or with its rows in the file."""
        if not outcome.rows:
            return outcome
        size = result_size(outcome.rows)
        if self.held + size <= self.in_memory:
            self.held += size
            return outcome
        return replace(outcome, rows=self._spill(outcome.rows))

    def _spill(self, rows) -> SpilledRows:
        with self._lock:
            try:
                if self._file is None:
                    self._file = tempfile.TemporaryFile(prefix="sqlbench-lmeval-results-")
                offset = self._file.seek(0, 2)
                pickle.dump(tuple(rows), self._file, protocol=pickle.HIGHEST_PROTOCOL)
                self._file.flush()
            except OSError as error:
                raise EvaluationUnavailable(
                    f"the answers' results beyond {self.in_memory // MIB} MiB wait in a "
                    f"temporary file in {tempfile.gettempdir()}, which cannot be written "
                    f"({error}): free space there, or point $TMPDIR to a folder with room"
                ) from error
        return SpilledRows(self, offset, len(rows))

    def load(self, offset: int) -> tuple:
        """The rows written at ``offset``."""
        with self._lock:
            self._file.seek(offset)
            return pickle.load(self._file)


def from_index(
    first: int, keep: Callable[[int, Outcome], Outcome]
) -> Callable[[int, Outcome], Outcome]:
    """``keep`` for the outcomes of a batch (``execute_many``'s ``keep``) from index ``first``
    on (the answers after gold's jobs), called with the index counted from there; those before
    stay as they are.

    >>> double = from_index(1, lambda index, outcome: (index, outcome * 2))
    >>> double(0, 5), double(1, 5)
    (5, (0, 10))
    """
    return lambda index, outcome: outcome if index < first else keep(index - first, outcome)


class SpilledRows(Sequence):
    """The rows of one result in a :class:`HeldResults` file: their count is known, the rows
    are read from the file on each use and not kept."""

    def __init__(self, held: HeldResults, offset: int, count: int) -> None:
        self._held, self._offset, self._count = held, offset, count

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index):
        return self._held.load(self._offset)[index]

    def __iter__(self):
        return iter(self._held.load(self._offset))

    def __eq__(self, other) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(other) == self._count and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __reduce__(self):
        return tuple, (tuple(self),)

    def __repr__(self) -> str:
        return f"SpilledRows({self._count} rows)"
