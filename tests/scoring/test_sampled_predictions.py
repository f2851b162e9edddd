"""Reading several predictions per id (``score --samples``): both forms, bad input named."""

from __future__ import annotations

import json

import pytest

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.offline import read_predictions


def write(tmp_path, *records):
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_lists_and_repeated_lines_join_in_file_order(tmp_path):
    path = write(
        tmp_path,
        {"id": 1, "prediction": ["SELECT 1", "SELECT 2"]},
        {"id": 2, "prediction": "a"},
        {"id": 2, "prediction": "b"},
        {"id": 1, "prediction": ["SELECT 3"]},
        {"id": 2, "prediction": "c"},
    )
    assert read_predictions(path, samples=True) == {
        1: ["SELECT 1", "SELECT 2", "SELECT 3"],
        2: ["a", "b", "c"],
    }


def test_without_samples_a_repeated_id_and_a_list_stay_errors(tmp_path):
    with pytest.raises(UserError, match="appears more than once"):
        twice = write(tmp_path, {"id": 1, "prediction": "a"}, {"id": 1, "prediction": "b"})
        read_predictions(twice)
    with pytest.raises(UserError, match="must be a string"):
        read_predictions(write(tmp_path, {"id": 1, "prediction": ["a"]}))


def test_unequal_sample_counts_are_refused(tmp_path):
    path = write(tmp_path, {"id": 1, "prediction": ["a", "b"]}, {"id": 2, "prediction": ["a"]})
    with pytest.raises(UserError, match="same number of predictions.*found 1, 2"):
        read_predictions(path, samples=True)


@pytest.mark.parametrize("prediction", [[], ["a", 3], 5, None])
def test_a_prediction_that_is_not_text_names_its_line(tmp_path, prediction):
    path = write(tmp_path, {"id": 1, "prediction": ["x"]}, {"id": 2, "prediction": prediction})
    with pytest.raises(UserError, match=r"samples.jsonl:2: prediction must be a string"):
        read_predictions(path, samples=True)
