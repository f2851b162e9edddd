"""The LogicCat upstream files: locate a local copy (an upstream checkout, or a folder holding the
records as ``records-4036.json``) or download the pinned archive, and verify every file the
build reads against the package's sha256 table (the layouts and why no archive is hashed:
docs/logiccat.md#how-the-copy-is-made, "Sources")."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from sqlbench_lmeval.data.checksums import mismatches
from sqlbench_lmeval.data.download import download_folder
from sqlbench_lmeval.errors import UserError

REPOSITORY = "Ffunkytao/LogicCat"
PINNED_COMMIT = "cb580e87ac171dab02aa0e7b73d7f8bc3f0ac8f7"
ARCHIVE_URL = f"https://github.com/{REPOSITORY}/archive/{PINNED_COMMIT}.tar.gz"
SOURCE_ENV = "SQLBENCH_LMEVAL_LOGICCAT_SOURCE"

CHECKOUT_RECORDS = "MySQL/data.json"
ASSEMBLED_RECORDS = "records-4036.json"
GOLD_LINES = "MySQL/data.sql"
DUMP_DIR = "MySQL/database"
SQLITE_DIR = "Sqlite/database"


def pinned_checksums() -> dict[str, str]:
    """The shipped sha256 table of the pinned commit's files: relative path -> hex digest."""
    text = resources.files(__package__).joinpath("upstream_checksums.json").read_text("utf-8")
    return dict(json.loads(text)["files"])


@dataclass(frozen=True)
class Source:
    """A verified upstream copy on disk."""

    root: Path
    records_file: Path
    commit: str = PINNED_COMMIT
    checksums: Mapping[str, str] = field(default_factory=dict, repr=False)

    def path(self, relative: str) -> Path:
        return self.root / relative


def verify_files(root: Path, checksums: Mapping[str, str]) -> None:
    """Raise UserError naming every listed file that is missing or differs."""
    problems = mismatches(root, checksums)
    if problems:
        shown = "; ".join(problems[:8]) + (
            f"; and {len(problems) - 8} more" if problems[8:] else ""
        )
        raise UserError(
            f"{root} is not LogicCat at commit {PINNED_COMMIT[:12]} (sha256 check failed: {shown})"
        )


def _records_file(root: Path) -> Path | None:
    for relative in (CHECKOUT_RECORDS, ASSEMBLED_RECORDS):
        if (root / relative).is_file():
            return root / relative
    return None


def locate(
    path: str | os.PathLike,
    *,
    checksums: Mapping[str, str] | None = None,
    commit: str = PINNED_COMMIT,
) -> Source:
    """A local upstream copy, verified against ``checksums`` (default: the pinned table)."""
    root = Path(path).expanduser().resolve()
    if not root.is_dir():
        raise UserError(f"LogicCat source {root} is not a directory")
    records = _records_file(root)
    if records is None:
        raise UserError(
            f"{root} holds neither {CHECKOUT_RECORDS} (an upstream checkout) nor "
            f"{ASSEMBLED_RECORDS} (the shared/logiccat layout)"
        )
    table = pinned_checksums() if checksums is None else dict(checksums)
    verify_files(root, table)
    return Source(root, records, commit, table)


def load_records(source: Source) -> list[dict]:
    """The upstream records, checked line by line against the pinned ``MySQL/data.sql``."""
    try:
        records = json.loads(source.records_file.read_text("utf-8"))
    except (OSError, ValueError) as error:
        raise UserError(f"cannot read LogicCat records {source.records_file}: {error}") from None
    if not isinstance(records, list):
        raise UserError(f"{source.records_file}: expected a JSON list of records")
    lines = source.path(GOLD_LINES).read_text("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != len(records):
        raise UserError(
            f"{source.records_file} has {len(records)} records but {GOLD_LINES} has "
            f"{len(lines)} gold lines"
        )
    for position, (record, line) in enumerate(zip(records, lines, strict=False), start=1):
        query, db_id, *_ = (line.split("\t") + ["", ""])[:3]
        if record.get("idx") != position:
            raise UserError(f"record {position} has idx {record.get('idx')!r}; expected idx order")
        if record.get("query") != query or record.get("db_id") != db_id:
            raise UserError(
                f"record idx {position} does not match line {position} of {GOLD_LINES} "
                f"(gold query or db_id differs): not the pinned LogicCat data"
            )
    return records


def _normalised(name: str) -> str:
    return "".join(char for char in name.lower() if char.isalnum())


def _match_file(directory: Path, db_id: str, suffixes: tuple[str, ...]) -> Path | None:
    """The file for ``db_id``: names differ in case, ``_`` and spaces (``exercise_club.sql`` is
    ``exerciseclub``, ``Concert.sql`` is ``concert``)."""
    wanted = _normalised(db_id)
    matches = [
        path
        for path in sorted(directory.iterdir())
        if path.suffix in suffixes and _normalised(path.stem) == wanted
    ]
    return matches[0] if matches else None


def dump_file(source: Source, db_id: str) -> Path:
    """The MySQL dump holding ``db_id``'s rows."""
    found = _match_file(source.path(DUMP_DIR), db_id, (".sql",))
    if found is None:
        raise UserError(f"no MySQL dump for database {db_id!r} in {source.path(DUMP_DIR)}")
    return found


def spider_sqlite_file(source: Source, db_id: str) -> Path:
    """The authors' SQLite file of a Spider-derived database."""
    found = _match_file(source.path(SQLITE_DIR), db_id, (".sqlite",))
    if found is None:
        raise UserError(f"no .sqlite file for database {db_id!r} in {source.path(SQLITE_DIR)}")
    return found


# ---------------------------------------------------------------------------------------------
# Download
# ---------------------------------------------------------------------------------------------


def download_source(
    destination: Path,
    *,
    url: str = ARCHIVE_URL,
    checksums: Mapping[str, str] | None = None,
    commit: str = PINNED_COMMIT,
    progress: bool = True,
) -> Source:
    """Download and extract the upstream archive to ``destination``, verified, atomically
    (``data.download``); a verified copy already at ``destination`` is reused."""
    table = pinned_checksums() if checksums is None else dict(checksums)
    # Said for lm_eval as much as for sqlbench-lmeval: lm_eval has no --source, and the
    # variable works under both.
    way_out = (
        f"Download and extract it yourself, then set {SOURCE_ENV} to its folder (or pass it to "
        "`sqlbench-lmeval prepare logiccat --source`)"
    )
    return download_folder(
        destination,
        url,
        lambda root: locate(root, checksums=table, commit=commit),
        label="LogicCat archive",
        way_out=way_out,
        progress=progress,
    )


def resolve_source(
    source: str | os.PathLike | Source | None, cache_root: Path, *, progress: bool = True
) -> Source:
    """``source`` if given, else ``$SQLBENCH_LMEVAL_LOGICCAT_SOURCE``, else the pinned download
    (kept under ``<cache>/logiccat/upstream/<commit>``)."""
    if isinstance(source, Source):
        return source
    if source is not None:
        return locate(source)
    from_env = os.environ.get(SOURCE_ENV)
    if from_env:
        try:
            return locate(from_env)
        except UserError as error:
            raise UserError(
                f"{error} (from {SOURCE_ENV}={from_env}: set it to the extracted LogicCat "
                "upstream folder, or unset it to download the pinned archive)"
            ) from None
    return download_source(cache_root / "logiccat" / "upstream" / PINNED_COMMIT, progress=progress)
