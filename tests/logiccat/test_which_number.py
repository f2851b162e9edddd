"""docs/which-number.md's table against the program: each task's gold ceiling is computed here,
every item answered with its own gold through the real scoring path (``score`` of a predictions
file: extraction, translation, execution on the real data, comparison), in both dialects, and
must be the count the page prints; the board's human EX is the one upstream announced."""

from __future__ import annotations

import re

import pytest
from support.markdown_docs import REPO

from sqlbench_lmeval import benchmarks
from sqlbench_lmeval.lmeval.task_specs import task_groups
from sqlbench_lmeval.logiccat.bundle import load_bundle
from sqlbench_lmeval.logiccat.split import official_split
from sqlbench_lmeval.offline import group_predictions, score_group, score_predictions

PAGE = REPO / "docs" / "which-number.md"
COLUMNS = {"mysql": 3, "sqlite": 4}  # the table's column of each answer dialect
CELL = re.compile(r"^([\d,]+) / ([\d,]+) = (\d+\.\d\d)%")


def page_ceilings() -> dict[tuple[str, str], tuple[int, int, str]]:
    """(task, dialect) -> (matched, items, percent as printed), read from the page's table."""
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| task |"))
    cells = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        row = [cell.strip() for cell in line.strip("|").split("|")]
        task = row[0].strip("`")
        for dialect, column in COLUMNS.items():
            found = CELL.match(row[column])
            assert found, f"{task}, {dialect}: {row[column]!r}"
            matched, items = (int(found.group(n).replace(",", "")) for n in (1, 2))
            cells[task, dialect] = (matched, items, found.group(3))
    return cells


def test_the_page_lists_each_task_once_with_both_dialects_and_the_human_ex():
    cells = page_ceilings()
    assert {task for task, _ in cells} == {"logiccat", "logiccat_dev", "logiccat_test"}
    for (task, dialect), (matched, items, percent) in cells.items():
        assert percent == f"{100 * matched / items:.2f}", (task, dialect)
    # The board's human EX, as the benchmark records it (upstream README, 2026-03-09).
    (human,) = [p for p in benchmarks.get("logiccat").reference_points if p.label == "human"]
    assert f"human EX: **{human.value:.2%}**" in PAGE.read_text(encoding="utf-8")


def _gold_answers(records, dialect: str) -> dict[int, str]:
    gold = "gold_sql_mysql" if dialect == "mysql" else "gold_sql"
    return {r.id: f"```sql\n{getattr(r, gold)}\n```" for r in records}


@pytest.mark.slow
@pytest.mark.parametrize("dialect", ["mysql", "sqlite"])
@pytest.mark.parametrize("task", ["logiccat_dev", "logiccat_test", "logiccat"])
def test_gold_as_the_answer_scores_the_ceiling_the_page_prints(task, dialect, logiccat_cache):
    records = load_bundle(logiccat_cache).records
    answers = _gold_answers(records, dialect)
    options = {"cache_dir": logiccat_cache, "dialect": dialect, "progress": False}
    if task != "logiccat":  # a split's group: its items' gold, scored as the group
        split = official_split().ids[task.removeprefix("logiccat_")]
        ours = {i: answer for i, answer in answers.items() if i in split}
        parts = group_predictions(task, ours, cache_dir=logiccat_cache)
        assert list(parts) == list(task_groups()[task])
        result = score_group(task, parts, every_item=True, **options)
    else:
        result = score_predictions("logiccat", answers, **options)
    assert result["missing_ids"] == []
    metrics = result["metrics"]
    matched = round(metrics["ex"] * metrics["n"])
    assert page_ceilings()[task, dialect][:2] == (matched, metrics["n"])
