"""The bundle built from the real upstream data (``$SQLBENCH_LMEVAL_LOGICCAT_SOURCE``)."""

from __future__ import annotations

from collections import Counter

import pytest

from sqlbench_lmeval.logiccat import bundle, gold
from sqlbench_lmeval.logiccat.benchmark import items_from_bundle
from sqlbench_lmeval.offline import gold_result_lines
from sqlbench_lmeval.scoring.tie_probe import plan_ties

pytestmark = pytest.mark.slow


def test_shape(real_bundle):
    records = real_bundle.records
    assert len(records) == 4036
    assert [r.id for r in records] == list(range(1, 4037))
    assert len(real_bundle.manifest["databases"]) == 44
    assert Counter(r.category for r in records) == {
        "hypothetical": 1073,
        "commonsense": 1026,
        "mathematical": 1012,
        "physical": 925,
    }
    assert real_bundle.manifest["source_commit"] == "cb580e87ac171dab02aa0e7b73d7f8bc3f0ac8f7"


def test_health(real_bundle):
    statuses = Counter(r.gold_status for r in real_bundle.records)
    assert statuses[gold.NON_SELECT] == 12
    assert 3300 <= statuses[gold.OK] <= 3450
    assert statuses[gold.ERROR] <= 160
    flags = Counter(f for r in real_bundle.records for f in r.flags)
    assert flags[gold.RANDOM] == 4
    assert 170 <= flags[gold.CLOCK_DEPENDENT] <= 260
    # nondeterministic_order is about ties inside subqueries only (tie-aware EX resolves the
    # outermost query's): every flagged gold has an inner ORDER BY ... LIMIT.
    flagged = [r for r in real_bundle.records if gold.NONDETERMINISTIC_ORDER in r.flags]
    assert {979, 3897, 3898} <= {r.id for r in flagged}
    assert all(plan_ties(r.gold_sql, "sqlite").inner_cuts for r in flagged)


def test_schema_keeps_units(real_bundle):
    schema = real_bundle.schema("car")
    assert '"Weight" REAL NOT NULL, -- 重量（kg）' in schema
    assert "COLLATE NOCASE" in schema and "utf8mb4" not in schema


def test_file_name_mismatches_are_resolved(real_bundle):
    for db_id in ("AirCraft", "waterPump", "electric_scooter", "exerciseclub", "concert"):
        assert real_bundle.database_path(db_id).is_file()


def test_float_values_are_mysql_single_precision(real_bundle):
    gold = gold_result_lines(items_from_bundle(real_bundle), progress=False)
    lines = {line["id"]: line for line in gold
             if line["id"] <= 3}  # fmt: skip
    assert lines[1]["rows"] == [[646.8000106811523], [1292.1999526023865], [646.8000106811523]]


def test_reloads(real_bundle):
    again = bundle.load_bundle(real_bundle.root.parent.parent)
    assert again.manifest == real_bundle.manifest
