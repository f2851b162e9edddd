"""``gold_verbatim``: an answer is gold's SQL when sqlglot reads the same query from both, so
comments, spacing, the case of keywords and names, the final ``;`` and the names the author
chose for table aliases and CTEs do not hide it; another column, constant or output name does.
The real-run test (``test_verify_runs``) finds gold with ``-- done`` appended in an lm-eval run.
"""

from __future__ import annotations

import pytest

from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.submission.checks.integrity import gold_copy

GOLD = (
    "WITH totals AS (SELECT s.store_id, SUM(s.amount) AS total FROM sales AS s "
    "GROUP BY s.store_id) SELECT st.name, t.total FROM totals AS t JOIN store AS st "
    "ON st.id = t.store_id WHERE t.total > 100 ORDER BY t.total DESC LIMIT 5;"
)


def item(dialect: str) -> Item:
    return Item(id=1, question="Top stores?", database=None, gold_sql=GOLD, dialect=dialect)


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
@pytest.mark.parametrize(
    "answer",
    [
        GOLD,
        GOLD + "\n-- done",
        "/* my answer */\n" + GOLD.lower().replace(" from ", "\n  FROM "),
        GOLD.rstrip(";").replace("totals", "per_store"),  # another CTE name
        GOLD.replace("AS s ", "AS x ").replace("s.", "x."),  # another table alias
        GOLD.replace(" AS t ", " AS tt ")
        .replace("t.total", "tt.total")
        .replace("t.store_id", "tt.store_id"),
    ],
    ids=["same", "comment", "spacing-case", "cte-name", "alias", "alias-2"],
)
def test_gold_spelled_otherwiseis_gold(answer, dialect):
    assert gold_copy(item(dialect), [answer]) == "gold"


@pytest.mark.parametrize(
    "answer",
    [
        GOLD.replace("> 100", "> 10"),
        GOLD.replace("st.name", "st.city"),
        GOLD.replace("AS total", "AS sum_amount").replace("t.total", "t.sum_amount"),
        GOLD.replace("DESC", "ASC"),
        "SELECT 1",
        "not SQL at all (",
    ],
    ids=["constant", "column", "output-name", "order", "other", "unparseable"],
)
def test_another_query_is_not_gold(answer):
    assert gold_copy(item("sqlite"), [answer]) is None
