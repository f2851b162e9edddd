"""Reading JSON Lines files that users hand us, with errors that name the line.

>>> import tempfile
>>> path = Path(tempfile.mkdtemp()) / "predictions.jsonl"
>>> _ = path.write_text('{"id": 1, "prediction": "SELECT 1"}\\n\\n{"id": 2}\\n', encoding="utf-8")
>>> lines = read_objects(path, "predictions", required=("id",), one_of=("prediction", "attempts"))
>>> where, first = next(lines)
>>> where.endswith("predictions.jsonl:1"), first["prediction"]
(True, 'SELECT 1')
>>> next(lines)  # line 2 is blank, line 3 has neither "prediction" nor "attempts"
Traceback (most recent call last):
...
sqlbench_lmeval.errors.UserError: ...predictions.jsonl:3: ...
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from sqlbench_lmeval.errors import UserError

#: Longest line read (a model output is far shorter); a longer one is refused, not loaded.
MAX_LINE_BYTES = 256 * 1024 * 1024


def read_lines(path: str | Path, what: str) -> list[str]:
    """The lines of a UTF-8 text file; a UserError saying which ``what`` could not be read."""
    return [line for _, line in numbered_lines(path, what)]


def numbered_lines(path: str | Path, what: str) -> Iterator[tuple[int, str]]:
    """``(number, text)`` per line, read one at a time; a UserError names the file, and the
    line when one is not UTF-8 or longer than MAX_LINE_BYTES. Lines end at ``\n`` only: a
    U+2028 inside a JSON string is text, not a line break. A UTF-8 byte order mark at the
    start of the file (some Windows editors write one) is not part of the first line."""
    try:
        with open(path, "rb") as handle:
            for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES + 1), b""), 1):
                if len(raw) > MAX_LINE_BYTES:
                    limit = MAX_LINE_BYTES >> 20
                    raise UserError(f"{path}:{number}: {what} line longer than {limit} MiB")
                try:
                    text = raw.decode("utf-8").rstrip("\r\n")
                    yield number, text.removeprefix("\ufeff") if number == 1 else text
                except UnicodeDecodeError as error:
                    raise UserError(
                        f"{path}:{number}: {what} line is not UTF-8 text "
                        f"({error.reason} at byte {error.start})"
                    ) from error
    except OSError as error:
        raise UserError(f"cannot read {what} {path}: {error}") from error


def read_objects(
    path: str | Path, what: str, *, required: tuple[str, ...] = (), one_of: tuple[str, ...] = ()
) -> Iterator[tuple[str, dict]]:
    """``(where, object)`` for each non-blank line of a JSONL file, ``where`` being ``path:N``.

    A line that is not JSON, not an object, lacks a ``required`` key, or has none of the keys
    ``one_of`` (when given) is a UserError naming ``path:N``. Python's json reads the bare
    ``NaN`` that lm-eval writes.
    """
    keys = [f'"{key}"' for key in required]
    if one_of:
        keys.append(" or ".join(f'"{key}"' for key in one_of))
    wanted = " and ".join(keys)
    # A whole file in one JSON document (an array of objects, an {id: prediction} object) is
    # the usual mistake: the message says what to write instead.
    hint = "; write JSON Lines: one JSON object per line" + (
        f", each with {wanted}" if keys else ""
    )
    for number, line in numbered_lines(path, what):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            # A pretty-printed document opens with a line "[" or "{".
            opens_document = line.strip() in ("[", "{")
            raise UserError(
                f"{where}: not valid JSON ({error.msg})"
                + (f"{hint}, not one JSON document over several lines" if opens_document else "")
            ) from error
        if isinstance(record, list):
            raise UserError(f"{where}: expected an object, found a JSON array{hint}")
        if (
            not isinstance(record, dict)
            or any(key not in record for key in required)
            or (one_of and not any(key in record for key in one_of))
        ):
            raise UserError(
                f"{where}: expected an object" + (f" with {wanted}{hint}" if keys else "")
            )
        yield where, record
