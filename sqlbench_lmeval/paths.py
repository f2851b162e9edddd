"""Where things live on disk: the tasks folder and the cache of built bundles."""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

CACHE_ENV = "SQLBENCH_LMEVAL_CACHE"
DEFAULT_CACHE = Path("~/.cache/sqlbench_lmeval")


def cache_dir(override: str | os.PathLike | None = None) -> Path:
    """The cache root: ``override``, else ``$SQLBENCH_LMEVAL_CACHE``, else the default."""
    chosen = override or os.environ.get(CACHE_ENV) or DEFAULT_CACHE
    return Path(chosen).expanduser().resolve()


def gold_cache_dir(override: str | os.PathLike | None = None) -> Path:
    """Where gold results are cached under the cache root (see ``execution.GoldCache``)."""
    return cache_dir(override) / "gold-results"


def shared_path(path: str, cache: str | os.PathLike | None = None) -> str:
    """A database path as shared outputs (score files, pages) show it: relative to the cache
    root when the file lies in it, else the file's name, so no output carries a user's home
    folder; a server URL or a relative path is returned as it is."""
    local = Path(path)
    if not local.is_absolute():
        return path
    try:
        return local.resolve().relative_to(cache_dir(cache)).as_posix()
    except ValueError:
        return local.name


def tasks_dir() -> Path:
    """The folder of our lm-eval YAML tasks.

    A wheel carries it as ``sqlbench_lmeval/tasks``; a source checkout or editable install
    keeps it at the top level, beside the package.
    """
    package = Path(__file__).resolve().parent
    for candidate in (package / "tasks", package.parent / "tasks"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"no tasks folder beside {package}; the installation is incomplete")


def docs_dir() -> Path:
    """The folder of our documentation (the ``docs/`` every output cites: ``docs/scoring.md``).

    A wheel carries it as ``sqlbench_lmeval/docs``; a source checkout or editable install keeps
    it at the top level, beside the package (as :func:`tasks_dir`).
    """
    package = Path(__file__).resolve().parent
    for candidate in (package / "docs", package.parent / "docs"):
        if (candidate / "index.md").is_file():
            return candidate
    raise FileNotFoundError(f"no docs folder beside {package}; the installation is incomplete")


def write_text_atomically(path: Path, text: str, *, errors: str = "strict") -> None:
    """``text`` into ``path`` as UTF-8, all or nothing: written to a temporary file beside it
    (named per process and call, so two writers never share one) and renamed over ``path``, so
    a reader never sees half a file and an interrupted write leaves no file behind.
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8", errors=errors)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
