"""The small, closed set of things that can happen when a query runs: every query ends in exactly
one :class:`Status` (defined with every other status in ``sqlbench_lmeval.vocabulary``), and an
:class:`Outcome` carries it with the result (columns and rows as the engine returned them) or a
message, with a lossless JSON form (docs/engines.md#outcomes-as-json).

>>> from decimal import Decimal
>>> price = Outcome(Status.OK, columns=("price",), rows=((Decimal("1.10"),),))
>>> price.to_json()["rows"]
[[{'$decimal': '1.10'}]]
>>> Outcome.from_json(price.to_json()) == price
True"""

from __future__ import annotations

import base64
import datetime as dt
import itertools
import math
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlbench_lmeval.vocabulary import Status

# Bump when anything changes how a query's result is produced or stored (engine settings,
# value conversion, this JSON form): the gold cache keys on it. 2: outcomes carry ``work``
# (cached gold without it would score r_ves 0). 3: SQLite counts steps exactly up to 4,096
# (gold cached in units of 64 would be divided by exact counts). 4: DuckDB reads work only from
# the query's own profile (gold cached by a worker whose profiling an answer had turned off
# carries another query's work), and every value counts against the per-answer budget, now
# 32 MiB (a result cached under the old budget may now be too large). 5: every statement's
# random generator starts from one seed (gold calling RAND() was cached with chance numbers).
EXECUTION_VERSION = "5"


#: Statuses that say a query did not finish (its time limit, a crash): the machine's doing, not
#: the query's. Every other status is the query's own, the same on every run (``FINISHED``:
#: what the gold cache keeps).
UNFINISHED = frozenset({Status.TIMEOUT, Status.CRASHED})
FINISHED = frozenset(Status) - UNFINISHED


@dataclass(frozen=True)
class Outcome:
    """One query's result: a status plus rows (OK) or a message (everything else)."""

    status: Status
    columns: tuple[str, ...] = ()
    rows: tuple[tuple, ...] = ()  # Python values as the engine returned them
    error: str | None = None  # message for error/timeout/crashed/too_many_rows
    elapsed_s: float = 0.0
    #: The work the engine counted for the query (``Engine.work_unit`` says in what): the same
    #: on every machine and run. None when the engine does not count or the query did not
    #: finish (only an OK outcome has it).
    work: int | None = None

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def to_json(self) -> dict:
        """A JSON-ready dict that :meth:`from_json` turns back into an equal Outcome."""
        return {
            "status": self.status.value,
            "columns": list(self.columns),
            "rows": [[_encode(value) for value in row] for row in self.rows],
            "error": self.error,
            "elapsed_s": self.elapsed_s,
            "work": self.work,
        }

    @classmethod
    def from_json(cls, data: dict) -> Outcome:
        rows = data.get("rows", ())
        # Only a tagged value is a dict; a result without one (nearly every result) needs no
        # look at each value in Python: its rows are made in C (a warm run decodes every gold
        # result this way, those on the perturbed copies too).
        tagged = dict in set(map(type, itertools.chain.from_iterable(rows)))
        return cls(
            status=Status(data["status"]),
            columns=tuple(data.get("columns", ())),
            rows=tuple(map(_decode_row if tagged else tuple, rows)),
            error=data.get("error"),
            elapsed_s=float(data.get("elapsed_s", 0.0)),
            work=data.get("work"),
        )


# Tagged values are one-key dicts {"$<tag>": payload}; a real dict value is itself tagged
# ("$map"), so a plain JSON object never needs guessing.
def _encode(value: Any) -> Any:
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, Decimal):
        return {"$decimal": str(value)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    # datetime before date: datetime is a subclass of date.
    if isinstance(value, dt.datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, dt.date):
        return {"$date": value.isoformat()}
    if isinstance(value, dt.time):
        return {"$time": value.isoformat()}
    if isinstance(value, dt.timedelta):
        return {"$timedelta": [value.days, value.seconds, value.microseconds]}
    if isinstance(value, uuid.UUID):
        return {"$uuid": str(value)}
    if isinstance(value, (list, tuple)):
        return {"$list" if isinstance(value, list) else "$tuple": [_encode(v) for v in value]}
    if isinstance(value, dict):
        return {"$map": [[_encode(k), _encode(v)] for k, v in value.items()]}
    # Anything exotic keeps its text form; comparison then sees a string (documented loss).
    return {"$repr": repr(value)}


def _decode_row(row: list) -> tuple:
    # Most rows hold only plain JSON values, which decode to themselves.
    for value in row:
        if isinstance(value, dict):
            return tuple(_decode(v) for v in row)
    return tuple(row)


def _decode(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    ((tag, payload),) = value.items()
    if tag == "$float":
        return float(payload)
    if tag == "$decimal":
        return Decimal(payload)
    if tag == "$bytes":
        return base64.b64decode(payload)
    if tag == "$datetime":
        return dt.datetime.fromisoformat(payload)
    if tag == "$date":
        return dt.date.fromisoformat(payload)
    if tag == "$time":
        return dt.time.fromisoformat(payload)
    if tag == "$timedelta":
        return dt.timedelta(days=payload[0], seconds=payload[1], microseconds=payload[2])
    if tag == "$uuid":
        return uuid.UUID(payload)
    if tag == "$list":
        return [_decode(v) for v in payload]
    if tag == "$tuple":
        return tuple(_decode(v) for v in payload)
    if tag == "$map":
        return {_decode(k): _decode(v) for k, v in payload}
    if tag == "$repr":
        return payload
    raise ValueError(f"unknown tagged value {tag!r} in a stored outcome")
