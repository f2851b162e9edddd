"""Text records by key in one SQLite file, each checked by a checksum of its key and payload: a
record whose checksum fails counts as missing, a file that is not a database is moved aside, a
file that cannot be used raises ``CacheUnwritable`` (the gold cache and the tie records keep
theirs in such files; this module knows what neither payload means; rules:
docs/failures.md, "Why a cache that cannot be written stops the run").

>>> import tempfile
>>> with RecordFile(Path(tempfile.mkdtemp()) / "records.sqlite") as db:
...     save_payloads(db, {"q1": "[1, 2]", "q2": "[3]"})
...     _ = db.execute("UPDATE entries SET payload = '[4]' WHERE key = 'q2'")  # an edit
...     load_payloads(db, {"q1", "q2", "q3"})
{'q1': '[1, 2]'}"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from sqlbench_lmeval.execution.unavailable import CacheUnwritable

_BATCH = 500  # keys per SELECT ... IN (...)


class RecordFile:
    """Context manager: the file's database, created if needed (table ``entries`` and any
    ``extra_tables``, each a ``CREATE TABLE IF NOT EXISTS`` statement), committed on exit."""

    def __init__(self, path: Path, extra_tables: Sequence[str] = ()) -> None:
        self.path = path
        self.extra_tables = tuple(extra_tables)
        self.conn: sqlite3.Connection | None = None

    def __enter__(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self.conn = self._connect()
            except sqlite3.OperationalError:  # cannot open or write: not a damaged file
                raise
            except sqlite3.DatabaseError:  # not a database: damaged, made again
                move_aside(self.path)
                self.conn = self._connect()
        except (OSError, sqlite3.OperationalError) as error:
            raise CacheUnwritable(self.path, error) from error
        return self.conn

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=60)
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS entries "
                "(key TEXT PRIMARY KEY, checksum TEXT NOT NULL, payload TEXT NOT NULL)"
            )
            for statement in self.extra_tables:
                conn.execute(statement)
            conn.execute("SELECT count(*) FROM entries").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn

    def __exit__(self, kind, value, traceback) -> None:
        assert self.conn is not None
        try:
            if kind is None:
                self.conn.commit()
        except (OSError, sqlite3.OperationalError) as error:
            raise CacheUnwritable(self.path, error) from error
        finally:
            self.conn.close()
        if kind is not None and issubclass(kind, (OSError, sqlite3.OperationalError)):
            raise CacheUnwritable(self.path, value) from value


def load_payloads(db: sqlite3.Connection, keys: set[str]) -> dict[str, str]:
    """The payloads stored under ``keys`` whose checksum holds (the others count as missing)."""
    found: dict[str, str] = {}
    ordered = sorted(keys)
    for start in range(0, len(ordered), _BATCH):
        batch = ordered[start : start + _BATCH]
        marks = ",".join("?" * len(batch))
        rows = db.execute(
            f"SELECT key, checksum, payload FROM entries WHERE key IN ({marks})", batch
        ).fetchall()
        for key, stored, payload in rows:
            if stored == checksum(key, payload):
                found[key] = payload
    return found


def save_payloads(db: sqlite3.Connection, payloads: Mapping[str, str]) -> None:
    """Store each payload under its key (replacing what was there), with its checksum."""
    db.executemany(
        "INSERT OR REPLACE INTO entries (key, checksum, payload) VALUES (?, ?, ?)",
        [(key, checksum(key, payload), payload) for key, payload in payloads.items()],
    )


def checksum(key: str, payload: str) -> str:
    return hashlib.sha256(f"{key}\n{payload}".encode()).hexdigest()


def move_aside(path: Path) -> None:
    """Rename a damaged file out of the way (kept for inspection), if it is there."""
    if path.exists():
        os.replace(path, path.with_name(f"{path.name}.corrupt-{int(time.time())}"))


def load_derived(path: Path, keys: set[str]) -> dict[str, str]:
    """:func:`load_payloads` of the file at ``path``, for records derived from the gold cache
    (made again from it when lost): none without keys or without the file, and a damaged file
    is moved aside (:func:`move_aside`) and counts as empty."""
    if not keys or not path.exists():
        return {}
    try:
        with RecordFile(path) as db:
            return load_payloads(db, keys)
    except sqlite3.DatabaseError:
        move_aside(path)
        return {}


def save_derived(path: Path, payloads: Mapping[str, str]) -> None:
    """:func:`save_payloads` into the file at ``path``, for records derived from the gold cache:
    a damaged file is moved aside (:func:`move_aside`) and these records are not kept."""
    try:
        with RecordFile(path) as db:
            save_payloads(db, payloads)
    except sqlite3.DatabaseError:
        move_aside(path)
