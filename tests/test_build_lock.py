"""The build lock: leftovers of killed builds go, a live build's files stay (real processes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sqlbench_lmeval.build_lock import LOCK_NAME, exclusive_build, remove_leftovers

pytestmark = pytest.mark.skipif(os.name != "posix", reason="fcntl locks are POSIX")

PATTERNS = (".building-*", ".*.tmp")

# A build in another process: takes the lock, writes its work folder, says so, then works on.
BUILDER = """
import sys, time
from pathlib import Path
from sqlbench_lmeval.build_lock import exclusive_build
folder = Path(sys.argv[1])
with exclusive_build(folder, {patterns!r}):
    (folder / ".building-live").mkdir()
    (folder / ".building-live" / "part").write_text("half")
    (folder / "ready").write_text("")
    time.sleep(600)
"""


class Busy(Exception):
    pass


def busy() -> None:
    raise Busy


def not_expected() -> None:
    raise AssertionError("waited although no live process holds the lock")


def start_builder(folder: Path) -> subprocess.Popen:
    code = BUILDER.format(patterns=PATTERNS)
    process = subprocess.Popen([sys.executable, "-c", code, str(folder)])
    deadline = time.monotonic() + 120  # a generous bound on interpreter start, not a timing test
    while not (folder / "ready").exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the builder process did not start (exit {process.returncode})")
        time.sleep(0.05)
    return process


def test_a_live_build_is_left_alone_and_its_leftovers_go_once_it_is_killed(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "bundle").mkdir()  # a finished build: never matches the patterns
    builder = start_builder(folder)
    try:
        # The lock is held by a live process: entering would wait, so on_wait is called
        # (and gives up here), and nothing of the running build is touched.
        with pytest.raises(Busy), exclusive_build(folder, PATTERNS, on_wait=busy):
            pass
        assert (folder / ".building-live" / "part").read_text() == "half"
    finally:
        builder.send_signal(signal.SIGKILL)  # killed hard: its own cleanup never runs
        builder.wait()
    assert (folder / ".building-live").exists()
    (folder / ".tpcds.duckdb.123.abcdef12.tmp").write_text("")
    # The kernel released the dead process's lock: the next build gets it at once and removes
    # what the dead build left, and only that.
    with exclusive_build(folder, PATTERNS, on_wait=not_expected):
        assert sorted(p.name for p in folder.iterdir()) == [LOCK_NAME, "bundle", "ready"]


def test_remove_leftovers_removes_files_and_folders_matching_only(tmp_path):
    (tmp_path / ".building-v3-x" / "databases").mkdir(parents=True)
    (tmp_path / ".building-v3-x" / "databases" / "a.sqlite").write_text("")
    (tmp_path / ".manifest.json.1.ab.tmp").write_text("")
    (tmp_path / "manifest.json").write_text("{}")
    (tmp_path / LOCK_NAME).write_text("")
    removed = remove_leftovers(tmp_path, PATTERNS)
    assert sorted(p.name for p in removed) == [".building-v3-x", ".manifest.json.1.ab.tmp"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [LOCK_NAME, "manifest.json"]
