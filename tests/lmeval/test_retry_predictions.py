"""Retried answers in a predictions file (``sqlbench-lmeval score``): the two accepted forms,
their errors, and the whole-run rule that gives every item retry numbers."""

from __future__ import annotations

import json

import pytest

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.offline import read_predictions
from sqlbench_lmeval.scoring.retry_envelope import attempts_of, score_with_retries, wrap


def write_lines(tmp_path, *records):
    path = tmp_path / "retried.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_attempts_lines_become_envelopes_and_envelopes_pass_as_predictions(tmp_path):
    logged = wrap([{"output": "bad", "status": "error", "error": "no such column: x"},
                   {"output": "good", "status": "ok", "error": None}])  # fmt: skip
    path = write_lines(
        tmp_path,
        {"id": 1, "attempts": ["bad", "good"]},
        {"id": 2, "attempts": [{"output": "bad", "note": "kept"}, "good"]},
        {"id": 3, "prediction": logged},
        {"id": 4, "prediction": "SELECT 1"},
    )
    predictions = read_predictions(path)
    assert attempts_of(predictions[1]) == [{"output": "bad"}, {"output": "good"}]
    assert attempts_of(predictions[2]) == [{"output": "bad", "note": "kept"}, {"output": "good"}]
    assert predictions[3] == logged  # the raw response of --log_samples, as it is
    assert predictions[4] == "SELECT 1"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"id": 3}, 'expected an object with "id" and "prediction" or "attempts"'),
        ({"id": 3, "attempts": []}, "attempts must be a non-empty list"),
        ({"id": 3, "attempts": "SELECT 1"}, "attempts must be a non-empty list"),
        ({"id": 3, "attempts": [{"text": "SELECT 1"}]}, "attempts must be a non-empty list"),
        ({"id": 3, "attempts": ["a", 7]}, "attempts must be a non-empty list"),
        ({"id": 3, "attempts": ["a"], "prediction": "a"}, "give prediction or attempts, not both"),
    ],
)
def test_a_bad_attempts_line_names_its_line(tmp_path, line, message):
    path = write_lines(tmp_path, {"id": 1, "prediction": "SELECT 1"}, line)
    with pytest.raises(UserError, match=f"retried.jsonl:2: {message}"):
        read_predictions(path)


def test_in_a_retried_run_plain_and_absent_answers_get_retry_numbers_too():
    # Plain "good" is one attempt (retry numbers = its own); None is missing: retry numbers 0.
    outputs = [wrap([{"output": "bad"}, {"output": "good"}]), "good", "bad", None]

    def score(items, texts):  # a stand-in scorer: "good" scores 1, None is missing
        status = {"good": "ok", None: "missing"}
        return [
            {"id": i, "status": status.get(t, "error"), "ves": int(t == "good"),
             "ex": int(t == "good")}
            for i, t in zip(items, texts, strict=True)
        ]  # fmt: skip

    scores = score_with_retries(["a", "b", "c", "d"], outputs, score, retried_run=True)
    numbers = [
        (s["ves@retry"], s["ex@retry"], s["retries_used"], s["final_status"], len(s["attempts"]))
        for s in scores
    ]
    assert numbers == [(1, 1, 1, "ok", 2), (1, 1, 0, "ok", 1), (0, 0, 0, "error", 1),
                       (0, 0, 0, "missing", 0)]  # fmt: skip
    # Without the flag (the lm-eval filter on a plain model) nothing is added.
    plain = score_with_retries(["b", "c"], ["good", "bad"], score)
    assert all("ves@retry" not in s for s in plain)
