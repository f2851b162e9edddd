"""Reading JSON Lines files that users hand us, with errors that name the line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from sqlbench_lmeval.errors import UserError


def read_lines(path: str | Path, what: str) -> list[str]:
    """The lines of a UTF-8 text file; a UserError saying which ``what`` could not be read."""
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"cannot read {what} {path}: {error}") from error


def read_objects(
    path: str | Path, what: str, *, required: tuple[str, ...] = ()
) -> Iterator[tuple[str, dict]]:
    """``(where, object)`` for each non-blank line of a JSONL file, ``where`` being ``path:N``.

    A line that is not JSON, not an object, or lacks a ``required`` key is a UserError naming
    ``path:N``. Python's json reads the bare ``NaN`` that lm-eval writes.
    """
    for number, line in enumerate(read_lines(path, what), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise UserError(f"{where}: not valid JSON ({error.msg})") from error
        if not isinstance(record, dict) or any(key not in record for key in required):
            keys = " and ".join(f'"{key}"' for key in required)
            raise UserError(f"{where}: expected an object" + (f" with {keys}" if keys else ""))
        yield where, record
