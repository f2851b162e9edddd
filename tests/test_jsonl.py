"""Bad input files get one clear error naming the file and the line; odd but valid text
(a raw U+2028, NUL and lone surrogates written as JSON escapes) is read as written."""

from __future__ import annotations

import json

import pytest

from sqlbench_lmeval import jsonl
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.offline import read_predictions

GOOD = b'{"id": 1, "prediction": "SELECT 1"}\n'


def test_a_binary_line_is_named(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(GOOD + b"\xff\xfe\x00binary\n")
    with pytest.raises(UserError, match=r"p\.jsonl:2: predictions line is not UTF-8"):
        read_predictions(path)


def test_an_overlong_line_is_refused_without_loading_it(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 64)
    path = tmp_path / "p.jsonl"
    path.write_bytes(GOOD + b'{"id": 2, "prediction": "' + b"x" * 100 + b'"}\n')
    with pytest.raises(UserError, match=r"p\.jsonl:2: predictions line longer than"):
        read_predictions(path)


def test_text_that_is_odd_but_valid_is_read_as_written(tmp_path):
    # U+2028 is a line break to str.splitlines but plain text inside a JSON string; NUL and a
    # lone surrogate are JSON escapes (json.dumps writes them so).
    odd = {2: "SELECT 1 \u2028 -- line separator", 3: "SELECT '\x00'", 4: "SELECT '\ud800'"}
    path = tmp_path / "p.jsonl"
    path.write_text(
        "".join(
            # The U+2028 raw (as an ensure_ascii=False writer leaves it), the rest escaped.
            json.dumps({"id": i, "prediction": p}, ensure_ascii=i != 2) + "\r\n"
            for i, p in odd.items()
        ),
        encoding="utf-8",
    )
    assert "\u2028" in path.read_text(encoding="utf-8")
    assert read_predictions(path) == odd
