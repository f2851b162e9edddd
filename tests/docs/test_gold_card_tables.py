"""The gold-card tables in the task READMEs are what `sqlbench-lmeval gold-card` computes on the
real data, for each benchmark's default engine (docs/gold-audit.md#the-gold-card)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sqlbench_lmeval.audit.card import gold_card
from sqlbench_lmeval.audit.pages import ceiling_table, scored_metrics

TASKS = Path(__file__).resolve().parents[2] / "tasks"
BLOCK = re.compile(r"<!-- gold-card: (\S+) -->\n(.*?)<!-- /gold-card -->", re.DOTALL)


def readme_tables(path: Path) -> dict[str, str]:
    """The gold-card tables of a README, by the command line's task name."""
    return {name: table for name, table in BLOCK.findall(path.read_text(encoding="utf-8"))}


def test_the_block_reader_reads_a_block():
    text = "x\n<!-- gold-card: t -->\n| a |\n<!-- /gold-card -->\n"
    assert BLOCK.findall(text) == [("t", "| a |\n")]


def _check(benchmark: str, cache: Path) -> dict:
    tables = readme_tables(TASKS / benchmark / "README.md")
    assert set(tables) == {benchmark}, f"tasks/{benchmark}/README.md carries the {benchmark} card"
    card = gold_card(benchmark, cache_dir=cache, progress=False)
    assert tables[benchmark] == ceiling_table(card, only=scored_metrics()), (
        f"run `sqlbench-lmeval gold-card {benchmark} --output DIR` and put the table of "
        "DIR/gold-card.md's Ceilings section, without its per-category rows and complexity "
        f"counts, in tasks/{benchmark}/README.md"
    )
    return card


@pytest.mark.slow
def test_logiccats_table_is_the_cards(logiccat_cache):
    card = _check("logiccat", logiccat_cache)
    # Whatever the numbers are: the published MySQL text read as SQLite fails on some items
    # (MySQL functions, division), our own gold on fewer.
    assert 0.5 < card["ceiling"]["ex"] < card["ceiling_executed_gold"]["ex"] <= 1.0


@pytest.mark.slow
def test_tpcds_table_is_the_cards(tpcds_default_cache):
    card = _check("tpcds", tpcds_default_cache)
    # TPC-DS publishes the gold we run: one set of answers, so both columns are one run's.
    assert card["ceiling"] == card["ceiling_executed_gold"]
