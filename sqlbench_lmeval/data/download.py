"""A benchmark's source archive fetched into the cache: streamed with a progress bar, extracted
refusing links and paths outside the folder, verified, and renamed into place only then, under
the build lock of the folder it lands in (a killed download leaves nothing that is taken for a
copy; a refused one leaves no empty cache folder). The benchmark says what its archive is, how
a copy is verified, and what to do where nothing can be downloaded."""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tqdm.auto import tqdm

from sqlbench_lmeval.build_lock import LOCK_NAME, exclusive_build
from sqlbench_lmeval.errors import UserError

T = TypeVar("T")

#: The temporary folders of a download, removed under the lock when a killed one left them.
DOWNLOAD_LEFTOVERS = (".download-*",)


def download_folder(
    destination: Path,
    url: str,
    verify: Callable[[Path], T],
    *,
    label: str,
    way_out: str,
    progress: bool = True,
) -> T:
    """``verify(destination)`` (it raises when the folder is not the benchmark's) of the
    folder the ``.tar.gz`` at ``url`` holds, downloaded and extracted to ``destination`` unless
    a copy is there already. ``label`` names the archive on the progress bar; ``way_out`` is
    said after a failed download (how to fetch it by hand)."""
    if destination.is_dir():
        return verify(destination)
    made = _missing_folders(destination.parent)
    try:
        with exclusive_build(destination.parent, DOWNLOAD_LEFTOVERS):
            return _download_into(destination, url, verify, label, way_out, progress)
    except BaseException:
        if not destination.is_dir():
            _remove_if_only_lock(made)
        raise


def _download_into(
    destination: Path,
    url: str,
    verify: Callable[[Path], T],
    label: str,
    way_out: str,
    progress: bool,
) -> T:
    """:func:`download_folder`'s work, under the build lock."""
    if destination.is_dir():  # another process finished while we waited for the lock
        return verify(destination)
    work = Path(tempfile.mkdtemp(prefix=".download-", dir=destination.parent))
    try:
        archive = work / "archive.tar.gz"
        _download(url, archive, label, way_out, progress)
        top = _safe_extract(archive, work / "extracted")
        verify(top)  # raises before anything is kept
        try:
            top.rename(destination)
        except OSError:
            if not destination.is_dir():  # not a lock-less (non-POSIX) concurrent download
                raise
        return verify(destination)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _download(url: str, target: Path, label: str, way_out: str, progress: bool) -> None:
    """Stream ``url`` to ``target`` with a tqdm bar (sized when the server sends a length)."""

    request = urllib.request.Request(url, headers={"User-Agent": "sqlbench-lmeval"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response, open(target, "wb") as out:
            total = response.headers.get("Content-Length")
            with tqdm(
                total=int(total) if total else None,
                unit="B",
                unit_scale=True,
                desc=label,
                disable=not progress,
            ) as bar:
                for block in iter(lambda: response.read(1 << 16), b""):
                    out.write(block)
                    bar.update(len(block))
    except OSError as error:
        raise UserError(f"cannot download {url}: {error}. {way_out}") from None


def _safe_extract(archive: Path, target: Path) -> Path:
    """Extract a .tar.gz into ``target`` refusing links and paths outside it; the top folder."""
    with tarfile.open(archive, "r:gz") as tar:
        members = tar.getmembers()
        for member in members:
            destination = (target / member.name).resolve()
            if not destination.is_relative_to(target.resolve()):
                raise UserError(f"archive member {member.name!r} escapes the extraction folder")
            if not (member.isfile() or member.isdir()):
                raise UserError(f"archive member {member.name!r} is not a plain file or folder")
        # The "data" filter (Python >= 3.11.4) repeats these checks inside tarfile itself.
        options = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(target, members=members, **options)
    tops = [path for path in target.iterdir() if path.is_dir()]
    if len(tops) != 1:
        raise UserError(f"{archive.name}: expected one top-level folder, found {len(tops)}")
    return tops[0]


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist yet, deepest first."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def _remove_if_only_lock(folders: list[Path]) -> None:
    """Remove the folders a failed download created, deepest first, while each holds nothing
    but the build lock: a refused or interrupted command leaves no empty cache folder behind.
    A process that waited on that lock then holds an unlinked file and may download alongside
    a later one; the download tolerates that (the rename into place keeps the first copy)."""
    for folder in folders:
        try:
            (folder / LOCK_NAME).unlink(missing_ok=True)
            folder.rmdir()
        except OSError:
            return  # another download's files, or a lock file that is not ours: keep them
