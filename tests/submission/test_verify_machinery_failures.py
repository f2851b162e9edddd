"""``verify`` and ``leaderboard`` when the evaluation itself fails while re-scoring a real lm-eval
run: a gold cache that cannot be written stops both (exit 3, the cache file named), no report is
written and no verification is kept in ``board/verifications/``; the same ``--output`` on a
healthy cache then verifies the run afresh instead of reusing anything."""

from __future__ import annotations

import json
import shutil

import pytest
from support.verify_runs import SCALE_FACTOR, run_tpcds

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.paths import gold_cache_dir
from sqlbench_lmeval.tpcds.data import database_dir

pytestmark = pytest.mark.slow

UNAVAILABLE = 3


@pytest.fixture(scope="module")
def run(tpcds_cache, tpcds_items, tmp_path_factory):
    """A real lm-eval run of 3 ``tpcds`` items, two answered with gold."""
    gold = {item.id: f"```sql\n{item.gold_sql}\n```" for item in tpcds_items if item.id in (1, 2)}
    root = tmp_path_factory.mktemp("machinery-run")
    return run_tpcds(root / "run", tpcds_cache, tpcds_items, gold, extra_args=["--limit", "3"])


@pytest.fixture
def broken_cache(tpcds_cache, tmp_path):
    """The session's database with a file where the gold folder belongs."""
    root = tmp_path / "broken-cache"
    shutil.copytree(database_dir(tpcds_cache, SCALE_FACTOR), database_dir(root, SCALE_FACTOR))
    gold_cache_dir(root).write_text("")
    return root


def test_verify_stops_and_writes_no_report(run, broken_cache, tmp_path, capsys):
    out = tmp_path / "reports"
    code = main(["verify", str(run), "--output", str(out), "--cache-dir", str(broken_cache),
                 "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == UNAVAILABLE
    assert "sqlbench-lmeval verify: the evaluation cannot run: the cache file" in err
    assert not out.exists() or list(out.iterdir()) == []


def test_leaderboard_keeps_no_verification_of_a_failed_scoring(
    run, broken_cache, tpcds_cache, tmp_path, capsys
):
    out = tmp_path / "board"
    base = ["leaderboard", f"scripted={run}", "--output", str(out), "--no-progress",
            "--resamples", "200"]  # fmt: skip
    assert main([*base, "--cache-dir", str(broken_cache)]) == UNAVAILABLE
    assert "the cache file" in capsys.readouterr().err
    assert list((out / "verifications").glob("cache-*.json")) == []
    assert not (out / "leaderboard.json").exists()
    # On a healthy machine the same board verifies the run now, reusing nothing.
    assert main([*base, "--cache-dir", str(tpcds_cache)]) == 0
    assert "re-scored 1 run(s), 0 from the cache" in capsys.readouterr().out
    (board,) = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))["tasks"]
    # Two of its three answers are gold: a lookup, listed apart with its re-scored numbers.
    (model,) = board["not_ranked"]
    assert model["gold_copy_share"] == pytest.approx(2 / 3)
    assert model["ex"] > 0  # the two gold answers count: nothing of the failed attempt remains
