"""One build at a time per cache folder (an exclusive ``fcntl.flock`` on ``<folder>/.build.lock``),
and the removal of what killed builds left there by whoever holds it (why a lock and not a pid:
docs/failures.md#damaged-data-a-full-server-run-folders)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

LOCK_NAME = ".build.lock"


@contextlib.contextmanager
def exclusive_build(
    folder: Path, leftovers: Iterable[str], *, on_wait: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold ``folder``'s build lock; on entry, remove entries matching the ``leftovers`` globs.

    ``on_wait`` is called once if another live process holds the lock, before waiting for it
    (to say so; an exception it raises gives up instead of waiting).
    """
    try:
        import fcntl  # platform: POSIX only; elsewhere builds go unlocked
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOCK_NAME, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            remove_leftovers(folder, leftovers)
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def remove_leftovers(folder: Path, patterns: Iterable[str]) -> list[Path]:
    """Remove the files and folders in ``folder`` matching ``patterns``; the removed paths.

    Only safe while holding the folder's build lock (see :func:`exclusive_build`).
    """
    removed = []
    for pattern in patterns:
        for path in sorted(folder.glob(pattern)):
            if path.name == LOCK_NAME:
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(path)
    return removed
