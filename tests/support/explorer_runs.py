"""Two scripted "models" answering four real questions over a real SQLite database, scored by
``Scorer.score`` and written as lm-eval ``--log_samples`` folders by lm-eval's own
``EvaluationTracker`` (the code ``lm_eval --log_samples`` runs): input for the explorer tests.

The database ``shop.db`` holds ``product(id, name, price)``:
(1, apple, 1.5), (2, bread, 3.0), (3, cheese, 7.25), (4, dates, 4.0).

What each model answered, and so what the explorer must show (derived from the SQL by hand):

====  ==========  ===============================  ==========================================
item  category    model "alpha"                    model "beta"
====  ==========  ===============================  ==========================================
1     filter      gold's SQL: correct              ``price * 2``: wrong result; its rows are
                                                   (dates, 8.0), (cheese, 14.5) against gold's
                                                   (dates, 4.0), (cheese, 7.25): the second
                                                   column's cells differ
2     aggregate   ``FROM produce``: error           gold's SQL: correct
                  (SQLite: no such table: produce)
3     aggregate   empty output: no SQL             gold's SQL: correct
4     filter      the hostile text as a value:     a different string: wrong result
                  correct
====  ==========  ===============================  ==========================================

Item 4 is hostile: its question, gold SQL, answers and result cells hold ``</script>``,
``<img src=x onerror=...>`` and quotes, which the page must show as text.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from support.lmeval_samples import lmeval_tracker, logged_sample

from sqlbench_lmeval.execution import Database
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.scorer import Scorer

HOSTILE = '</script><img src=x onerror="alert(\'xss\')"> it\'s "quoted"'
HOSTILE_SQL = 'SELECT \'</script><img src=x onerror=alert(1)>\' AS "x""y"'
BETA_HOSTILE_SQL = 'SELECT \'<b>"bold"</b>\' AS "x""y"'

GOLD = {
    1: "SELECT name, price FROM product WHERE price > 3 ORDER BY price",
    2: "SELECT COUNT(*) FROM product",
    3: "SELECT MAX(price) FROM product",
    4: HOSTILE_SQL,
}
QUESTIONS = {
    1: "Names and prices of products costing more than 3, cheapest first.",
    2: "How many products are there?",
    3: "What is the highest price?",
    4: f"Show the text {HOSTILE}",
}
CATEGORIES = {1: "filter", 2: "aggregate", 3: "aggregate", 4: "filter"}


def _fenced(sql: str) -> str:
    return f"Here is the query:\n```sql\n{sql}\n```"


ANSWERS = {
    "alpha": {
        1: _fenced(GOLD[1]),
        2: _fenced("SELECT COUNT(*) FROM produce"),
        3: "",
        4: _fenced(HOSTILE_SQL),
    },
    "beta": {
        1: _fenced("SELECT name, price * 2 FROM product WHERE price > 3 ORDER BY price"),
        2: _fenced(GOLD[2]),
        3: _fenced(GOLD[3]),
        4: _fenced(BETA_HOSTILE_SQL),
    },
}


def make_items(folder: Path) -> list[Item]:
    """The four items, over a fresh ``folder/shop.db``."""
    path = folder / "shop.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE product (id INTEGER PRIMARY KEY, name TEXT, price REAL)")
        connection.executemany(
            "INSERT INTO product VALUES (?, ?, ?)",
            [(1, "apple", 1.5), (2, "bread", 3.0), (3, "cheese", 7.25), (4, "dates", 4.0)],
        )
    connection.close()
    database = Database(engine="sqlite", path=str(path))
    return [
        Item(item_id, QUESTIONS[item_id], database, GOLD[item_id], "sqlite", CATEGORIES[item_id])
        for item_id in sorted(GOLD)
    ]


def write_lmeval_samples(output: Path, model: str, task: str, items, outputs, scores) -> Path:
    """An lm-eval output folder for ``model`` with one samples file, written by lm-eval's
    ``EvaluationTracker``; the folder."""
    tracker = lmeval_tracker(output, model)
    results = {"results": {task: {"alias": task}}, "group_subtasks": {task: []}, "configs": {}}
    tracker.save_results_aggregated(results=results, samples=None)
    samples = [
        logged_sample(
            index,
            item.to_doc(),
            item.gold_sql,
            f"Schema: product(id, name, price)\nQ: {item.question}",
            raw,
            score,
        )
        for index, (item, raw, score) in enumerate(zip(items, outputs, scores, strict=True))
    ]
    tracker.save_results_samples(task_name=task, samples=samples)
    return output


def scripted_runs(folder: Path, task: str = "shop") -> dict[str, Path]:
    """Score both models on the four items and write each as an lm-eval folder; name -> folder."""
    items = make_items(folder)
    folders = {}
    for model, answers in ANSWERS.items():
        outputs = [answers[item.id] for item in items]
        scores = Scorer(workers=1, progress=False).score(items, outputs)
        folders[model] = write_lmeval_samples(folder / model, model, task, items, outputs, scores)
    return folders


# --- runs with ties (tie-aware EX) ----------------------------------------------------------
#
# ``league.db`` holds ``team(name, points)``: (ann, 10), (bob, 10), (cy, 7), (dee, 5), and
# ``runner(name, lap)``: 25 runners r01..r25, every one on lap 1. SQLite returns tied rows in
# the order they were inserted (ann before bob, r01 first).
#
# ====  ==========================================  ======================  ====================
# item  gold (right answers: ``acceptable``)        model "alpha"           model "beta"
# ====  ==========================================  ======================  ====================
# 1     top team, ORDER BY points DESC LIMIT 1:     bob: correct, a tie     cy: wrong (values)
#       ann or bob (2)                              resolution
# 2     every team by points: ann and bob in        bob before ann:         gold's SQL: correct
#       either order (2)                            correct, a tie
#                                                   resolution
# 3     COUNT(*): no ORDER BY, no LIMIT             gold's SQL: correct     3: wrong (values)
# 4     runners ordered by lap, all tied: any of    r25 first: correct, a   gold's SQL: correct
#       the 25! orders (15511210043330985984000000,  tie resolution
#       past what a JavaScript number holds)
# ====  ==========================================  ======================  ====================

TIE_GOLD = {
    1: "SELECT name FROM team ORDER BY points DESC LIMIT 1",
    2: "SELECT name, points FROM team ORDER BY points DESC",
    3: "SELECT COUNT(*) FROM team",
    4: "SELECT name FROM runner ORDER BY lap",
}
TIE_ANSWERS = {
    "alpha": {
        1: "SELECT name FROM team ORDER BY points DESC, name DESC LIMIT 1",
        2: "SELECT name, points FROM team ORDER BY points DESC, name DESC",
        3: TIE_GOLD[3],
        4: "SELECT name FROM runner ORDER BY name DESC",
    },
    "beta": {
        1: "SELECT name FROM team WHERE points = 7",
        2: TIE_GOLD[2],
        3: "SELECT COUNT(*) FROM team WHERE points > 5",
        4: TIE_GOLD[4],
    },
}


def tie_runs(folder: Path, task: str = "league") -> dict[str, Path]:
    """Both models of the table above, scored and written as lm-eval folders; name -> folder."""
    path = folder / "league.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE team (name TEXT, points INTEGER)")
        connection.executemany(
            "INSERT INTO team VALUES (?, ?)", [("ann", 10), ("bob", 10), ("cy", 7), ("dee", 5)]
        )
        connection.execute("CREATE TABLE runner (name TEXT, lap INTEGER)")
        connection.executemany(
            "INSERT INTO runner VALUES (?, 1)", [(f"r{n:02d}",) for n in range(1, 26)]
        )
    connection.close()
    database = Database(engine="sqlite", path=str(path))
    items = [
        Item(item_id, f"question {item_id}", database, sql, "sqlite", "ranking")
        for item_id, sql in sorted(TIE_GOLD.items())
    ]
    folders = {}
    for model, answers in TIE_ANSWERS.items():
        outputs = [_fenced(answers[item.id]) for item in items]
        scores = Scorer(workers=1, progress=False).score(items, outputs)
        folders[model] = write_lmeval_samples(folder / model, model, task, items, outputs, scores)
    return folders
