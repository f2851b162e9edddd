"""A benchmark's built data in the cache: built once under the folder's build lock (another
process that finished the same build meanwhile is taken at its word), a folder written into a
temporary folder beside its place and renamed into it, and a built folder loaded with every
file its manifest lists checked against its checksum, once per process while the files keep
their size, inode and mtime (why a lock and a rename:
docs/failures.md#damaged-data-a-full-server-run-folders)."""

from __future__ import annotations

import functools
import json
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from sqlbench_lmeval.build_lock import exclusive_build
from sqlbench_lmeval.data.checksums import file_damage
from sqlbench_lmeval.data.damage import DataDamaged, DataMissing

T = TypeVar("T")

#: The manifest of a built folder: what built it and ``files``, every other file's sha256.
MANIFEST = "manifest.json"
#: Temporary folders of a folder build (:func:`build_folder`), removed under the lock.
FOLDER_LEFTOVERS = (".building-*", ".replaced-*")


def build_once(
    folder: Path,
    leftovers: Iterable[str],
    build: Callable[[], T],
    *,
    built: Callable[[], T | None] | None = None,
    waiting: str | None = None,
) -> T:
    """``build()`` under ``folder``'s build lock (entries matching the ``leftovers`` globs,
    left by killed builds, removed first), unless ``built()`` then finds the data complete (a
    build this one waited for made it): its result. ``waiting`` is printed once when another
    build holds the lock."""
    on_wait = functools.partial(print, waiting) if waiting else None
    with exclusive_build(folder, leftovers, on_wait=on_wait):
        found = built() if built is not None else None
        return found if found is not None else build()


def build_folder(
    target: Path,
    fill: Callable[[Path], T],
    *,
    built: Callable[[], T | None] | None = None,
    waiting: str | None = None,
) -> T:
    """``fill(work)`` writes the folder's content into ``work``, a temporary folder beside
    ``target``, which then replaces ``target`` in one rename; under the build lock of
    ``target``'s parent (see :func:`build_once`). Returns what ``fill`` returned."""

    def build() -> T:
        prefix = f".building-{target.name}-"
        work = Path(tempfile.mkdtemp(prefix=prefix, dir=target.parent))
        try:
            result = fill(work)
            _replace(work, target)
            return result
        finally:
            shutil.rmtree(work, ignore_errors=True)

    return build_once(target.parent, FOLDER_LEFTOVERS, build, built=built, waiting=waiting)


def ensure_folder(
    target: Path,
    load: Callable[[], T],
    fill: Callable[[Path], object],
    *,
    force: bool = False,
    rebuild_damaged: bool = False,
    waiting: str | None = None,
) -> T:
    """``load()`` of the folder at ``target``, built first (:func:`build_folder` with ``fill``)
    when it never was, or by another builder version. Damaged data raises what ``load`` raises
    (:class:`DataDamaged`: a run stops naming the rebuild) unless ``rebuild_damaged`` (what
    ``prepare`` does); ``force`` rebuilds whatever is there."""
    if not force:
        try:
            return load()
        except DataDamaged:
            if not rebuild_damaged:
                raise
        except DataMissing:
            pass

    def built() -> T | None:  # by the build this one waited for
        try:
            return None if force else load()
        except DataMissing:
            return None

    build_folder(target, fill, built=built, waiting=waiting)
    return load()


def _replace(work: Path, target: Path) -> None:
    """Rename ``work`` to ``target``: the one step that makes the folder visible.

    Runs under the build lock, so a folder already at ``target`` is not a concurrent build's:
    it is one being forcibly rebuilt, or one that failed to load (corrupt); it is replaced.
    """
    if not target.exists():
        work.rename(target)
        return
    old = Path(tempfile.mkdtemp(prefix=".replaced-", dir=target.parent))
    target.rename(old / "previous")
    try:
        work.rename(target)
    finally:
        shutil.rmtree(old, ignore_errors=True)


# root -> (stat signatures of the manifest and every file, the files, what was read from them)
_loaded: dict[Path, tuple[tuple, tuple[str, ...], object]] = {}


def _stat_signature(path: Path) -> tuple | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def load_folder(
    root: Path,
    read: Callable[[dict], T],
    *,
    version: tuple[str, str],
    what: str,
    hint: str,
    damaged: Callable[[Path, str], DataDamaged],
) -> T:
    """``read(manifest)`` of the folder built at ``root`` (``what`` names it), every file its
    manifest's ``files`` lists checked against its sha256 first.

    ``version`` is ``(key, value)`` the manifest must hold. Raises :class:`DataMissing` ending
    in ``hint`` (how to build it) when there is no manifest or another builder's, and
    ``damaged(path, reason)`` when the manifest is corrupt or a file it lists is gone or
    changed. The checksums are verified on the first load in a process; a later load whose
    files all still have the same size, inode and mtime returns what was read then (one
    ``score`` run loads its data more than once).
    """
    manifest_path = root / MANIFEST
    remembered = _loaded.get(root)
    if remembered is not None:
        signatures, files, loaded = remembered
        paths = [manifest_path] + [root / relative for relative in files]
        if tuple(_stat_signature(path) for path in paths) == signatures:
            return loaded  # type: ignore[return-value]
        del _loaded[root]
    if not manifest_path.is_file():
        raise DataMissing(f"no {what} at {root}; {hint}")
    manifest_signature = _stat_signature(manifest_path)
    try:
        manifest = json.loads(manifest_path.read_text("utf-8"))
        files = manifest["files"]
    except (ValueError, KeyError) as error:
        raise damaged(manifest_path, f"is corrupt ({error})") from None
    key, value = version
    if manifest.get(key) != value:
        raise DataMissing(f"{root} was built by another builder version; {hint}")
    signatures = [manifest_signature]
    for relative, expected in files.items():
        path = root / relative
        # Signature first: a file replaced while it is hashed is then not remembered as good.
        signatures.append(_stat_signature(path))
        reason = file_damage(path, sha256=expected)
        if reason is not None:
            raise damaged(path, reason)
    loaded = read(manifest)
    _loaded[root] = (tuple(signatures), tuple(files), loaded)
    return loaded
