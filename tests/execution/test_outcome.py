"""Outcome JSON is lossless: every value type an engine returns comes back equal and typed."""

from __future__ import annotations

import datetime as dt
import json
import math
import uuid
from decimal import Decimal

import pytest

from sqlbench_lmeval.execution import Outcome, Status

VALUES = [
    None,
    0,
    -(2**70),
    True,
    1.5,
    -0.0,
    math.inf,
    -math.inf,
    "text with \u00e9 and \u2603",
    "",
    Decimal("1.50"),
    Decimal("-1E+3"),
    b"\x00\xff",
    dt.date(2024, 2, 29),
    dt.datetime(2024, 1, 1, 12, 30, 1, 5),
    dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc),
    dt.time(23, 59),
    dt.timedelta(days=-1, seconds=5),
    uuid.UUID(int=7),
    [1, "a", None],
    (1, 2),
    {"k": [1.5]},
]


@pytest.mark.parametrize(
    "value", VALUES, ids=[f"{type(v).__name__}-{i}" for i, v in enumerate(VALUES)]
)
def test_value_round_trips_with_its_type(value):
    outcome = Outcome(Status.OK, columns=("v",), rows=((value,),), elapsed_s=0.25)
    back = Outcome.from_json(json.loads(json.dumps(outcome.to_json(), allow_nan=False)))
    assert back == outcome
    assert type(back.rows[0][0]) is type(value)


def test_nan_round_trips():
    outcome = Outcome(Status.OK, columns=("v",), rows=((math.nan,),))
    back = Outcome.from_json(json.loads(json.dumps(outcome.to_json(), allow_nan=False)))
    assert math.isnan(back.rows[0][0])


@pytest.mark.parametrize("status", list(Status))
def test_every_status_round_trips(status):
    outcome = Outcome(status, error=None if status is Status.OK else "why")
    assert Outcome.from_json(json.loads(json.dumps(outcome.to_json()))) == outcome
