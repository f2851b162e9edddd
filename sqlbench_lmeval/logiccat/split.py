"""LogicCat's official train/dev/test split of 2026 (upstream commits ``aa2e332`` and
``bc4bf08``), shipped with the package as id lists with their checksum (``split_2026.json``),
checked when read; which split a task uses and why: docs/which-number.md.

>>> split = official_split()
>>> {name: len(split.ids[name]) for name in SPLITS}
{'train': 2218, 'dev': 800, 'test': 800}
>>> split.split_of(438), split.split_of(8), split.split_of(1), split.split_of(4036) is None
('test', 'dev', 'train', False)
>>> version_with_split("logiccat-cb580e87ac17-builder5", "test")
'logiccat-cb580e87ac17-builder5+split2026-test-b0d082cc109c'"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from sqlbench_lmeval.errors import UserError

SPLITS = ("train", "dev", "test")
SPLIT_FILE = "split_2026.json"


@dataclass(frozen=True)
class OfficialSplit:
    """The split as shipped: its name, the upstream commit of each split's file, the item ids
    (upstream ``idx``) of each split, the databases only test uses, the ids' sha256."""

    name: str  # "2026"
    repository: str
    commits: dict[str, str]  # split -> upstream commit of its file
    ids: dict[str, frozenset[int]]
    test_databases: tuple[str, ...]
    sha256: str

    def split_of(self, item_id: int) -> str | None:
        """The split ``item_id`` is in; None for the 218 items of the test databases that
        upstream put in no split."""
        return next((name for name in SPLITS if item_id in self.ids[name]), None)

    def describe(self) -> str:
        """One line naming the split, its sizes, commits and checksum (``prepare`` prints it)."""
        sizes = ", ".join(f"{name} {len(self.ids[name]):,}" for name in SPLITS)
        commits = "/".join(sorted({commit[:7] for commit in self.commits.values()}))
        return (
            f"official split {self.name} of {self.repository} (commits {commits}): {sizes}; "
            f"ids sha256 {self.sha256[:12]}"
        )


def ids_checksum(ids: dict[str, list[int]]) -> str:
    """sha256 of the id lists, as the file records it: ``{"dev": [...], "test": [...],
    "train": [...]}`` in compact JSON, keys sorted, ids ascending."""
    lists = {name: sorted(ids[name]) for name in SPLITS}
    text = json.dumps(lists, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


@lru_cache(maxsize=1)
def official_split() -> OfficialSplit:
    """The shipped split, its checksum checked (a changed file is a damaged install)."""
    data = json.loads(resources.files(__package__).joinpath(SPLIT_FILE).read_text("utf-8"))
    if ids_checksum(data) != data["sha256"]:
        raise UserError(
            f"the LogicCat split file {SPLIT_FILE} of this installation is changed (its ids do "
            "not match its sha256); reinstall sqlbench-lmeval"
        )
    return OfficialSplit(
        name=data["name"],
        repository=data["repository"],
        commits=dict(data["commits"]),
        ids={name: frozenset(data[name]) for name in SPLITS},
        test_databases=tuple(data["test_databases"]),
        sha256=data["sha256"],
    )


def check_split(split: str | None) -> str | None:
    """``split`` if it is one of :data:`SPLITS` (or None: no split, the paper's full set); a
    UserError naming the choices otherwise."""
    if split is not None and split not in SPLITS:
        raise UserError(f"unknown LogicCat split {split!r}; choose one of {', '.join(SPLITS)}")
    return split


def version_with_split(dataset_version: str, split: str) -> str:
    """The dataset version of ``split``'s items: the data's version, the split's name and
    the ids' checksum, so a run of one split never passes for a run of another (or of the full
    set) wherever versions are compared."""
    return f"{dataset_version}+split{official_split().name}-{split}-{official_split().sha256[:12]}"


def split_of_version(dataset_version: str | None) -> str | None:
    """The split a dataset version names (:func:`version_with_split`), None for the full set.

    >>> split_of_version("logiccat-x+split2026-dev-b0d082cc109c"), split_of_version("logiccat-x")
    ('dev', None)
    """
    _, marker, rest = (dataset_version or "").partition("+split")
    if not marker:
        return None
    parts = rest.split("-")
    return parts[1] if len(parts) == 3 and parts[1] in SPLITS else None


__all__ = [
    "SPLITS",
    "OfficialSplit",
    "check_split",
    "ids_checksum",
    "official_split",
    "split_of_version",
    "version_with_split",
]
