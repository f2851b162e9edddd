"""Whether gold moved on each perturbed copy, kept beside the gold cache (``gold_moves``): an
answer that is gold's text is judged from those flags on a warm run, without gold's results on
the copies, and to the same verdict. On a real SQLite file with its real copies, through
``Scorer.score``.

Table ``scores(name, score)``: ann 9, bob 8, cid 7, dan 7, eve 7, fay 5.
"""

from __future__ import annotations

import sqlite3

import pytest
from support.ties import scores_database

from sqlbench_lmeval.execution import Database, GoldCache
from sqlbench_lmeval.execution.perturbed import perturbed_databases
from sqlbench_lmeval.scoring.gold_moves import FILE, GoldMoves
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.scorer import Scorer

MOVES = "SELECT name FROM scores WHERE score > 6"  # the copies change which rows pass
STAYS = "SELECT COUNT(*) > 0 FROM scores"  # 1 on the original and on each copy


@pytest.fixture(scope="module")
def database(tmp_path_factory) -> Database:
    return scores_database(tmp_path_factory.mktemp("moves") / "scores.sqlite")


def scored(database: Database, cache: GoldCache) -> list[dict]:
    """Gold's own text as the answer to each of MOVES and STAYS."""
    items = [Item(n, "?", database, gold, "sqlite") for n, gold in enumerate((MOVES, STAYS), 1)]
    scorer = Scorer(workers=1, progress=False, gold_cache=cache)
    return scorer.score(items, [MOVES, STAYS])


def copy_reads(monkeypatch, database: Database) -> list:
    """The jobs on ``database``'s copies whose stored gold results are read from now on."""
    copies = set(perturbed_databases(database))
    read = []
    original = GoldCache._load

    def load(self, db, keys):
        found = original(self, db, keys)
        read.extend(key for key in found if key in self._copy_keys)
        return found

    def keys(self, jobs, limits):
        made = original_keys(self, jobs, limits)
        on_copies = {k for job, k in zip(jobs, made, strict=True) if job.database in copies}
        self._copy_keys = getattr(self, "_copy_keys", set()) | on_copies
        return made

    original_keys = GoldCache._keys
    monkeypatch.setattr(GoldCache, "_load", load)
    monkeypatch.setattr(GoldCache, "_keys", keys)
    return read


def test_a_warm_run_judges_gold_s_own_text_from_the_flags_alone(database, tmp_path, monkeypatch):
    cache = GoldCache(tmp_path / "cache")
    cold = scored(database, cache)
    assert [s["data_dependence"] for s in cold] == ["changed", "undecidable"]
    assert GoldMoves(tmp_path / "cache" / FILE).path.exists()
    read = copy_reads(monkeypatch, database)
    warm = scored(database, cache)
    assert warm == cold
    assert read == []  # no gold result on a copy was read: the flags said it all
    monkeypatch.undo()
    # Without the flags, gold's results on the copies are read again, to the same verdicts.
    (tmp_path / "cache" / FILE).unlink()
    read = copy_reads(monkeypatch, database)
    assert scored(database, cache) == cold and read != []


def test_the_flags_are_what_decides(database, tmp_path):
    # Every flag rewritten to "gold stayed": MOVES's own text is then undecidable, so the
    # warm verdict comes from the flags (and a change of the rules that write them needs a
    # new COMPARISON_VERSION, which is in their key).
    cache = GoldCache(tmp_path / "cache")
    cold = scored(database, cache)
    store = GoldMoves(tmp_path / "cache" / FILE)
    with sqlite3.connect(store.path) as conn:
        keys = [key for (key,) in conn.execute("SELECT key FROM entries")]
    conn.close()
    assert len(keys) == 4  # two golds, two copies each
    store.save(dict.fromkeys(keys, False))
    warm = scored(database, cache)
    assert [s["data_dependence"] for s in warm] == ["undecidable", "undecidable"]
    assert [s["ex"] for s in warm] == [s["ex"] for s in cold] == [1, 1]


def test_a_damaged_flag_store_is_set_aside_and_made_again(database, tmp_path):
    cache = GoldCache(tmp_path / "cache")
    cold = scored(database, cache)
    path = tmp_path / "cache" / FILE
    path.write_bytes(b"not a database at all" * 100)
    assert scored(database, cache) == cold
    assert any(p.name.startswith(FILE + ".corrupt-") for p in path.parent.iterdir())
    assert scored(database, cache) == cold
