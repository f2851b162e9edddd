"""Files checked against what was recorded when they were written: a sha256 per file (a
benchmark's source files, a built folder's every file) or, for a file too large to hash on each
load, its size; the reason a file fails, said the same way everywhere.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "a.txt").write_text("a")
>>> table = checksum_table(folder)
>>> table
{'a.txt': 'ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb'}
>>> mismatches(folder, {**table, "b.txt": table["a.txt"]})
['missing b.txt']
>>> file_damage(folder / "a.txt", size=2)
'has 1 bytes, 2 when it was built'
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path


def sha256_file(path: Path) -> str:
    """The hex sha256 of the file at ``path``, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checksum_table(folder: Path) -> dict[str, str]:
    """Every file under ``folder``: its path relative to ``folder`` (``/``-separated, sorted) ->
    its sha256, the table a built folder's manifest records."""
    return {
        path.relative_to(folder).as_posix(): sha256_file(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def mismatches(root: Path, table: Mapping[str, str]) -> list[str]:
    """``missing <file>`` / ``changed <file>`` for each file of ``table`` (relative path ->
    sha256) that is not under ``root`` or differs, in path order."""
    problems = []
    for relative, expected in sorted(table.items()):
        path = root / relative
        if not path.is_file():
            problems.append(f"missing {relative}")
        elif sha256_file(path) != expected:
            problems.append(f"changed {relative}")
    return problems


def file_damage(path: Path, *, sha256: str | None = None, size: int | None = None) -> str | None:
    """Why the file at ``path`` is not the one recorded (its ``sha256``, else its ``size``), as
    a damage message continues it (``is missing``, ``cannot be read (...)``, ``is changed (its
    checksum differs)``, ``has N bytes, M when it was built``), or None."""
    try:
        if sha256 is not None:
            changed = sha256_file(path) != sha256
            return "is changed (its checksum differs)" if changed else None
        found = path.stat().st_size
    except FileNotFoundError:
        return "is missing"
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    if size is not None and found != size:
        return f"has {found:,} bytes, {size:,} when it was built"
    return None
