"""The gold card's table in tasks/logiccat/README.md is what `sqlbench-lmeval gold-card
logiccat` computes on the real data (docs/gold-audit.md#the-gold-card)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sqlbench_lmeval.audit.card import gold_card
from sqlbench_lmeval.audit.pages import ceiling_table

README = Path(__file__).resolve().parents[2] / "tasks" / "logiccat" / "README.md"
BLOCK = re.compile(r"<!-- gold-card: (\S+) -->\n(.*?)<!-- /gold-card -->", re.DOTALL)


def readme_tables(path: Path) -> dict[str, str]:
    """The gold-card tables of a README, by the command line's task name."""
    return {name: table for name, table in BLOCK.findall(path.read_text(encoding="utf-8"))}


def test_the_block_reader_reads_a_block():
    text = "x\n<!-- gold-card: t -->\n| a |\n<!-- /gold-card -->\n"
    assert BLOCK.findall(text) == [("t", "| a |\n")]


@pytest.mark.slow
def test_the_readmes_ceiling_table_is_the_cards(logiccat_cache):
    tables = readme_tables(README)
    assert set(tables) == {"logiccat"}, "tasks/logiccat/README.md carries the logiccat card"
    card = gold_card("logiccat", cache_dir=logiccat_cache, progress=False)
    assert tables["logiccat"] == ceiling_table(card), (
        "run `sqlbench-lmeval gold-card logiccat --output DIR` and put the table of "
        "DIR/gold-card.md's Ceilings section in tasks/logiccat/README.md"
    )
    # What the numbers must be, whatever they are: the published MySQL text read as SQLite
    # fails on some items (MySQL functions, division), our own gold on almost none.
    assert 0.5 < card["ceiling"]["ex"] < card["ceiling_executed_gold"]["ex"] <= 1.0
