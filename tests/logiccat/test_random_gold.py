"""Gold calling ``RAND()`` scores the same in every run: every statement's random generator
starts from one seed (docs/engines.md#one-seed-for-every-statement), so gold given verbatim as
the answer gets gold's rows, on one worker or two, after the other random answers or before."""

from __future__ import annotations

import json

import pytest

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.logiccat import gold

pytestmark = pytest.mark.slow

RANDOM_GOLD = (865, 1423, 1425, 1440)  # the real bundle's gold calling RAND()


def test_gold_calling_rand_scores_alike_on_any_worker_count(real_bundle, logiccat_cache, tmp_path):
    records = {r.id: r for r in real_bundle.records}
    assert all(gold.RANDOM in records[i].flags for i in RANDOM_GOLD)
    predictions = tmp_path / "gold.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": i, "prediction": records[i].gold_sql}) + "\n" for i in RANDOM_GOLD
        )
    )
    outputs = []
    for workers in ("1", "2", "1"):
        output = tmp_path / f"score-{len(outputs)}-{workers}.json"
        arguments = ["score", "logiccat", str(predictions), "-o", str(output), "--no-progress"]
        assert main([*arguments, "--cache-dir", str(logiccat_cache), "--workers", workers]) == 0
        outputs.append(output.read_bytes())
    assert outputs[1] == outputs[0] and outputs[2] == outputs[0]
    scored = {item["id"]: item for item in json.loads(outputs[0])["items"]}
    # Gold that ran (ok) is its own answer's rows; the other two are not SELECTs.
    for i in RANDOM_GOLD:
        if records[i].gold_status == gold.OK:
            assert scored[i]["ex"] == 1, scored[i]
    assert sum(records[i].gold_status == gold.OK for i in RANDOM_GOLD) == 2
