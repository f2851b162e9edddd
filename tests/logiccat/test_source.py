"""Locating, verifying and downloading the upstream files (downloads over loopback only)."""

from __future__ import annotations

import functools
import http.server
import io
import json
import os
import shutil
import tarfile
import threading
from pathlib import Path

import pytest

from sqlbench_lmeval.data.checksums import sha256_file
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.logiccat import source

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logiccat"
LAYOUT = FIXTURES / "shared_layout"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
TABLE = {
    relative: sha256_file(LAYOUT / relative)
    for relative in ("MySQL/data.sql", "MySQL/database/Charging_Net.sql")
}


def test_locate_shared_layout(fixture_source):
    assert fixture_source.records_file.name == "records-4036.json"
    records = source.load_records(fixture_source)
    assert [r["idx"] for r in records] == list(range(1, 13))
    assert records[0]["db_id"] == "chargingnet"


def test_file_names_match_db_ids_loosely(fixture_source):
    # upstream: exerciseclub -> exercise_club.sql, concert -> Concert.sql
    assert source.dump_file(fixture_source, "chargingnet").name == "Charging_Net.sql"
    assert source.dump_file(fixture_source, "Charging_net").name == "Charging_Net.sql"
    with pytest.raises(UserError, match="no MySQL dump for database 'nowhere'"):
        source.dump_file(fixture_source, "nowhere")


def copy_layout(tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(LAYOUT, target)
    return target


def test_changed_file_fails_verification(tmp_path):
    root = copy_layout(tmp_path)
    with open(root / "MySQL/database/Charging_Net.sql", "a", encoding="utf-8") as handle:
        handle.write("-- edited\n")
    with pytest.raises(UserError, match="sha256 check failed: changed MySQL/database/Charging"):
        source.locate(root, checksums=TABLE)


def test_missing_records_file(tmp_path):
    root = copy_layout(tmp_path)
    (root / "records-4036.json").unlink()
    with pytest.raises(UserError, match="holds neither MySQL/data.json"):
        source.locate(root, checksums=TABLE)


def test_records_must_match_the_pinned_gold_lines(tmp_path):
    root = copy_layout(tmp_path)
    records = json.loads((root / "records-4036.json").read_text("utf-8"))
    records[3]["query"] = "SELECT 1;"
    (root / "records-4036.json").write_text(json.dumps(records), "utf-8")
    with pytest.raises(UserError, match="record idx 4 does not match line 4"):
        source.load_records(source.locate(root, checksums=TABLE))


def test_default_verification_uses_the_pinned_table(tmp_path, monkeypatch):
    assert len(source.pinned_checksums()) == 52  # 45 dumps, 6 .sqlite files, data.sql
    monkeypatch.setenv(source.SOURCE_ENV, str(LAYOUT))
    with pytest.raises(UserError, match=f"not LogicCat at commit {source.PINNED_COMMIT[:12]}"):
        source.resolve_source(None, tmp_path)


def test_pinned_table_matches_the_shared_copy():
    default = Path(__file__).resolve().parents[3] / "shared" / "logiccat"
    shared = Path(os.environ.get(source.SOURCE_ENV) or default)
    if not (shared / "MySQL").is_dir():
        pytest.skip(f"no shared upstream copy at {shared}")
    source.verify_files(shared, source.pinned_checksums())


@pytest.fixture
def http_root(tmp_path):
    """A loopback HTTP server over a temporary folder; yields (folder, base URL)."""
    folder = tmp_path / "served"
    folder.mkdir()
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


def test_download_verifies_and_extracts_atomically(http_root, tmp_path):
    folder, base = http_root
    shutil.copy(FIXTURES / "upstream-archive.tar.gz", folder / "archive.tar.gz")
    destination = tmp_path / "cache" / "upstream" / COMMIT
    got = source.download_source(
        destination, url=f"{base}/archive.tar.gz", checksums=TABLE, commit=COMMIT, progress=False
    )
    assert got.root == destination.resolve()
    assert got.records_file.relative_to(got.root).as_posix() == "MySQL/data.json"
    assert len(source.load_records(got)) == 12
    # No leftovers: the verified copy and the build lock (which stays, empty) only.
    assert sorted(p.name for p in destination.parent.iterdir()) == [".build.lock", COMMIT]
    # A second call reuses the verified copy without the server.
    (folder / "archive.tar.gz").unlink()
    again = source.download_source(
        destination, url=f"{base}/archive.tar.gz", checksums=TABLE, commit=COMMIT, progress=False
    )
    assert again.root == got.root


def test_download_with_wrong_checksums_keeps_nothing(http_root, tmp_path):
    folder, base = http_root
    shutil.copy(FIXTURES / "upstream-archive.tar.gz", folder / "archive.tar.gz")
    destination = tmp_path / "cache" / "upstream" / COMMIT
    wrong = {**TABLE, "MySQL/data.sql": "0" * 64}
    with pytest.raises(UserError, match="changed MySQL/data.sql"):
        source.download_source(
            destination, url=f"{base}/archive.tar.gz", checksums=wrong, progress=False
        )
    # Not even the folders the download made for its lock: the cache folder was not there.
    assert not (tmp_path / "cache").exists()


def test_a_killed_download_leaves_nothing_behind_the_next_one(http_root, tmp_path):
    # What a download killed with SIGKILL leaves: its temporary folder with a partial archive.
    folder, base = http_root
    shutil.copy(FIXTURES / "upstream-archive.tar.gz", folder / "archive.tar.gz")
    destination = tmp_path / "cache" / "upstream" / COMMIT
    killed = destination.parent / ".download-k1ll3d"
    killed.mkdir(parents=True)
    (killed / "archive.tar.gz").write_bytes(b"\x1f\x8b partial")
    source.download_source(
        destination, url=f"{base}/archive.tar.gz", checksums=TABLE, commit=COMMIT, progress=False
    )
    assert sorted(p.name for p in destination.parent.iterdir()) == [".build.lock", COMMIT]


def test_download_failure_names_the_way_out_and_leaves_no_folder(http_root, tmp_path):
    """The way out works under lm_eval too (a variable, not an option lm_eval lacks); the
    folders made for the download's lock go with it, a folder that was there stays."""
    _, base = http_root
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "other").write_text("a user's file", "utf-8")
    destination = tmp_path / "cache" / "logiccat" / "upstream" / COMMIT
    with pytest.raises(UserError) as raised:
        source.download_source(
            destination, url=f"{base}/missing.tar.gz", checksums=TABLE, progress=False
        )
    assert f"set {source.SOURCE_ENV} to its folder" in str(raised.value)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["other"]


def test_under_lm_eval_an_unreadable_source_is_one_line_naming_the_variable(tmp_path):
    """``lm_eval`` with ``$SQLBENCH_LMEVAL_LOGICCAT_SOURCE`` naming a folder that does not exist,
    then one that is not LogicCat, and an empty cache: exit 2, the line last, no traceback, no
    ``--source`` (lm_eval has none), and no cache folder made."""
    from support.lm_eval_run import run_lm_eval_failing

    cache = tmp_path / "cache"
    nowhere = tmp_path / "nowhere"
    not_logiccat = tmp_path / "not-logiccat"
    not_logiccat.mkdir()
    for folder, problem in (
        (nowhere, f"LogicCat source {nowhere} is not a directory"),
        (not_logiccat, f"{not_logiccat} holds neither {source.CHECKOUT_RECORDS}"),
    ):
        (tmp_path / f"run-{folder.name}").mkdir()
        output = run_lm_eval_failing(
            "logiccat_mini",
            answer="```sql\nSELECT 1\n```",
            workdir=tmp_path / f"run-{folder.name}",
            extra_args=["--limit", "1"],
            env={"SQLBENCH_LMEVAL_CACHE": str(cache), source.SOURCE_ENV: str(folder)},
            exit_code=2,
        )
        last = output.strip().splitlines()[-1]
        assert last.startswith(f"lm_eval: error: {problem}"), output[-3000:]
        assert last.endswith(
            f"(from {source.SOURCE_ENV}={folder}: set it to the extracted LogicCat upstream "
            "folder, or unset it to download the pinned archive)"
        )
        assert "Traceback" not in output and "--source" not in output, output[-3000:]
        assert not cache.exists()


def test_archive_members_cannot_escape(http_root, tmp_path):
    folder, base = http_root
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("../evil.txt")
        info.size = 4
        tar.addfile(info, io.BytesIO(b"evil"))
    (folder / "evil.tar.gz").write_bytes(buffer.getvalue())
    with pytest.raises(UserError, match="escapes the extraction folder"):
        source.download_source(
            tmp_path / "dest", url=f"{base}/evil.tar.gz", checksums=TABLE, progress=False
        )
    assert not (tmp_path / "evil.txt").exists()
