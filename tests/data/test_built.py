"""The data layer's built folder: built once, loaded with its checksums checked, a damaged file
named with the rebuild (a run stops; ``prepare`` rebuilds), ``force`` rebuilding what is there."""

from __future__ import annotations

import json

import pytest

from sqlbench_lmeval.data.built import MANIFEST, ensure_folder, load_folder
from sqlbench_lmeval.data.checksums import checksum_table
from sqlbench_lmeval.data.damage import DataDamaged, DataMissing, damaged


class Folder:
    """A built folder of one file, counting its builds."""

    def __init__(self, target):
        self.target = target
        self.builds = 0

    def fill(self, work):
        self.builds += 1
        (work / "data.txt").write_text(f"build {self.builds}", encoding="utf-8")
        manifest = {"builder_version": "1", "files": checksum_table(work)}
        (work / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")

    def load(self):
        return load_folder(
            self.target,
            lambda manifest: (self.target / "data.txt").read_text(encoding="utf-8"),
            version=("builder_version", "1"),
            what="test folder",
            hint="build it with `prepare test`",
            damaged=lambda path, reason: damaged("the file", path, reason, "`prepare test`"),
        )

    def ensure(self, **options):
        return ensure_folder(self.target, self.load, self.fill, **options)


def test_built_once_then_loaded(tmp_path):
    folder = Folder(tmp_path / "cache" / "v1")
    with pytest.raises(DataMissing, match="no test folder at .*; build it with `prepare test`"):
        folder.load()
    assert folder.ensure() == "build 1"
    assert folder.ensure() == "build 1"
    assert folder.builds == 1
    assert sorted(p.name for p in folder.target.parent.iterdir()) == [".build.lock", "v1"]


def test_a_damaged_file_stops_a_run_and_prepare_rebuilds_it(tmp_path):
    folder = Folder(tmp_path / "v1")
    folder.ensure()
    (folder.target / "data.txt").write_text("changed", encoding="utf-8")
    with pytest.raises(DataDamaged) as raised:
        folder.ensure()
    assert str(raised.value) == (
        f"the file {folder.target / 'data.txt'} is changed (its checksum differs): it was damaged "
        "after it was prepared; rebuild it with `prepare test`"
    )
    assert folder.ensure(rebuild_damaged=True) == "build 2"
    (folder.target / "data.txt").unlink()
    with pytest.raises(DataDamaged, match="data.txt is missing: it was damaged"):
        folder.ensure()


def test_force_rebuilds_a_sound_folder(tmp_path):
    folder = Folder(tmp_path / "v1")
    folder.ensure()
    assert folder.ensure(force=True) == "build 2"
    assert not [p for p in folder.target.parent.iterdir() if p.name.startswith(".building")]
