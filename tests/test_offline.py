"""Reading prediction files for ``sqlbench-lmeval score``: bad input is named, never guessed."""

import json

import pytest

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.offline import read_predictions


def write_lines(tmp_path, *lines):
    path = tmp_path / "predictions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_reads_ids_and_raw_predictions(tmp_path):
    path = write_lines(
        tmp_path,
        json.dumps({"id": 1, "prediction": "SELECT 1"}),
        "",
        json.dumps({"id": "2", "prediction": "```sql\nSELECT 2\n```", "model": "extra keys ok"}),
    )
    assert read_predictions(path) == {1: "SELECT 1", 2: "```sql\nSELECT 2\n```"}


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "predictions.jsonl:2: not valid JSON"),
        ('["a", "list"]', "predictions.jsonl:2: expected an object, found a JSON array"),
        ('{"id": 3}', 'predictions.jsonl:2: expected an object with "id" and "prediction"'),
        ('{"id": "x3", "prediction": "SELECT 1"}', "predictions.jsonl:2: id must be an integer"),
        ('{"id": true, "prediction": "SELECT 1"}', "predictions.jsonl:2: id must be an integer"),
        ('{"id": 2.5, "prediction": "SELECT 1"}', "predictions.jsonl:2: id must be an integer"),
        ('{"id": 3, "prediction": null}', "predictions.jsonl:2: prediction must be a string"),
        ('{"id": 1, "prediction": "SELECT 2"}', "predictions.jsonl:2: id 1 appears more than once"),
    ],
)
def test_a_malformed_line_names_its_line_number(tmp_path, bad_line, message):
    path = write_lines(tmp_path, json.dumps({"id": 1, "prediction": "SELECT 1"}), bad_line)
    with pytest.raises(UserError, match=message.replace("[", r"\[").replace(".", r"\.")):
        read_predictions(path)


def test_an_empty_file_is_an_error(tmp_path):
    with pytest.raises(UserError, match="no predictions"):
        read_predictions(write_lines(tmp_path, ""))


def test_an_unreadable_file_is_an_error(tmp_path):
    with pytest.raises(UserError, match="cannot read predictions"):
        read_predictions(tmp_path / "absent.jsonl")


def test_a_byte_order_mark_at_the_start_is_read_past(tmp_path):
    path = tmp_path / "predictions.jsonl"
    lines = [
        json.dumps({"id": 1, "prediction": "SELECT 1"}),
        json.dumps({"id": 2, "prediction": "x"}),
    ]
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode("utf-8") + b"\n")
    assert read_predictions(path) == {1: "SELECT 1", 2: "x"}


def test_a_byte_order_mark_inside_a_prediction_is_kept(tmp_path):
    path = write_lines(tmp_path, json.dumps({"id": 1, "prediction": "\ufeffSELECT 1"}))
    assert read_predictions(path) == {1: "\ufeffSELECT 1"}


JSON_LINES_HINT = 'write JSON Lines: one JSON object per line, each with "id" and "prediction"'


@pytest.mark.parametrize(
    "document",
    [
        # One JSON array of the objects, on one line and pretty-printed.
        json.dumps([{"id": 1, "prediction": "SELECT 1"}, {"id": 2, "prediction": "SELECT 2"}]),
        json.dumps([{"id": 1, "prediction": "SELECT 1"}], indent=2),
        # One {id: prediction} object, on one line and pretty-printed.
        json.dumps({"1": "SELECT 1", "2": "SELECT 2"}),
        json.dumps({"1": "SELECT 1", "2": "SELECT 2"}, indent=2),
    ],
)
def test_a_whole_file_json_document_is_told_to_be_json_lines(tmp_path, document):
    path = tmp_path / "predictions.json"
    path.write_text(document + "\n", encoding="utf-8")
    with pytest.raises(UserError) as raised:
        read_predictions(path)
    message = str(raised.value)
    assert message.startswith(f"{path}:1: ")
    assert JSON_LINES_HINT in message
