"""A gold cache that cannot be written stops ``score`` and ``gold`` (exit 3, the file named, no
output written) and the real ``lm_eval`` run (no results file), instead of scoring every item
0. Three real ways it happens, each working as root (which no permission bit stops):

- the cache's gold folder is a regular file (a path whose parent is not a folder);
- the gold folder is immutable (``chattr +i``; skipped where the filesystem has no such flag);
- the disk is full: the cache lives on a small tmpfs filled to the last byte (skipped where
  this process may not mount).
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from support.lm_eval_run import run_lm_eval_failing

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.execution.perturbed import FOLDER as PERTURBED_FOLDER
from sqlbench_lmeval.paths import gold_cache_dir, tasks_dir
from sqlbench_lmeval.tpcds.data import database_dir

SF = 0.01  # the session database (conftest.py)
UNAVAILABLE = 3  # exit code of a command stopped because the evaluation cannot run
ANSWER = "```sql\nSELECT 1\n```"


def _private_cache(tpcds_cache, root):
    # Without the perturbed copy (twice the data): the small disk holds the database alone, and
    # the answers here (constants) never run on the copy.
    ignored = shutil.ignore_patterns(PERTURBED_FOLDER)
    shutil.copytree(database_dir(tpcds_cache, SF), database_dir(root, SF), ignore=ignored)
    return root


@pytest.fixture(params=["gold folder is a file", "gold folder is immutable", "disk is full"])
def unwritable_cache(request, tpcds_cache, tmp_path):
    """A cache root with the session's TPC-DS database and a gold folder that cannot be
    written: (root, the gold cache file the message must name, the kind)."""
    kind = request.param
    if kind == "disk is full":
        mount = tmp_path / "small-disk"
        mount.mkdir()
        # 12 MB of database and room for nothing else once filled.
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a small filesystem here: {done.stderr.strip()}")
        request.addfinalizer(lambda: subprocess.run(["umount", "-l", str(mount)]))
        root = _private_cache(tpcds_cache, mount / "cache")
        gold_cache_dir(root).mkdir()
        with open(mount / "filler", "wb") as filler:
            try:
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
            except OSError:
                pass  # ENOSPC: the disk is full
    else:
        root = _private_cache(tpcds_cache, tmp_path / "cache")
        gold = gold_cache_dir(root)
        if kind == "gold folder is a file":
            gold.write_text("")
        else:
            gold.mkdir()
            if shutil.which("chattr") is None:
                pytest.skip("chattr is not installed")
            done = subprocess.run(["chattr", "+i", str(gold)], capture_output=True, text=True)
            if done.returncode != 0:
                pytest.skip(f"no immutable flag on this filesystem: {done.stderr.strip()}")
            request.addfinalizer(lambda: subprocess.run(["chattr", "-i", str(gold)]))
    return root, gold_cache_dir(root) / "gold-cache.sqlite", kind


def predictions_file(tmp_path):
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps({"id": n, "prediction": ANSWER}) + "\n" for n in (1, 2)))
    return path


def test_score_and_gold_stop_naming_the_cache_file(unwritable_cache, tmp_path, capsys):
    root, cache_file, kind = unwritable_cache
    cause = {
        "gold folder is a file": "gold-results or a folder above it is a file, not a folder",
        "gold folder is immutable": "unable to open database file",
        "disk is full": "database or disk is full",
    }[kind]
    common = ["--cache-dir", str(root), "--scale-factor", str(SF), "--no-progress"]
    out = tmp_path / "out"
    out.mkdir()
    scores, gold = out / "scores.json", out / "gold.jsonl"
    for command, output in (
        (["score", "tpcds", str(predictions_file(tmp_path))], scores),
        (["gold", "tpcds"], gold),
    ):
        assert main([*command, *common, "--output", str(output), "--workers", "2"]) == UNAVAILABLE
        err = capsys.readouterr().err
        assert f"sqlbench-lmeval {command[0]}: the evaluation cannot run" in err
        assert f"the cache file {cache_file} cannot be used" in err and cause in err
        assert "make its folder writable and give it free space" in err
        assert list(out.iterdir()) == []  # no output, no temporary file


@pytest.mark.slow  # lm_eval indexes its task configs at start-up
def test_lm_eval_stops_and_writes_no_results(tpcds_cache, tmp_path):
    root = _private_cache(tpcds_cache, tmp_path / "cache")
    gold_cache_dir(root).write_text("")  # the gold folder is a file
    metadata = {"scale_factor": SF, "cache_dir": str(root)}
    output = run_lm_eval_failing(
        "tpcds",
        answer=ANSWER,
        include_path=tasks_dir(),
        workdir=tmp_path,
        extra_args=["--limit", "3", "--metadata", json.dumps(metadata)],
        env={"SQLBENCH_LMEVAL_CACHE": str(root)},
    )
    assert "EvaluationUnavailable: the cache file" in output, output[-3000:]
    assert "answers are not scored; they are saved in" in output
