"""LogicCat's dataset statistics recomputed from upstream's records, with our definitions, for the
table that sets them beside the paper's (docs/logiccat.md#dataset-statistics): questions,
databases, questions per category, annotated reasoning steps (upstream's ``【step】`` markers),
and per gold query the joins, the distinct tables and whether it nests a query, read by sqlglot's
MySQL parser (every statement of a multi-statement gold; a gold it cannot parse is counted apart).

>>> records = [
...     {"db_id": "a", "type": "1", "step": "【step1】: x. 【step2】: y.",
...      "query": "SELECT t.x FROM t JOIN u ON t.id = u.id"},
...     {"db_id": "b", "type": "4", "step": "【step1】: z.", "query": "SELECT (SELECT 1) AS y"},
... ]
>>> stats = dataset_statistics(records)
>>> stats["questions"], stats["databases"], stats["reasoning_steps"], stats["joins_per_query"]
(2, 2, 3, 0.5)
>>> stats["per_category"], stats["nested_queries"], stats["queries_without_join"]
({'physical': 1, 'mathematical': 0, 'commonsense': 0, 'hypothetical': 1}, 1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

#: Upstream's ``type`` values and the categories they stand for (the task names).
CATEGORY_OF_TYPE = {"1": "physical", "2": "mathematical", "3": "commonsense", "4": "hypothetical"}
STEP_MARKER = "【step"


def dataset_statistics(records: Sequence[dict]) -> dict:
    """The statistics of upstream LogicCat ``records`` (``idx, db_id, type, question, query,
    step``), the means rounded to 2 places."""
    joins, tables, nested, unparsed = [], [], 0, 0
    for record in records:
        try:
            trees = [tree for tree in sqlglot.parse(record["query"], read="mysql") if tree]
        except SqlglotError:
            unparsed += 1
            continue
        joins.append(sum(len(list(tree.find_all(exp.Join))) for tree in trees))
        tables.append(len({t.name.lower() for tree in trees for t in tree.find_all(exp.Table)}))
        nested += any(tree.find(exp.Subquery, exp.CTE) for tree in trees)
    types = [str(record["type"]) for record in records]
    return {
        "questions": len(records),
        "databases": len({record["db_id"] for record in records}),
        "per_category": {name: types.count(key) for key, name in CATEGORY_OF_TYPE.items()},
        "reasoning_steps": sum(record["step"].count(STEP_MARKER) for record in records),
        "joins_per_query": round(fmean(joins), 2) if joins else 0.0,
        "queries_without_join": joins.count(0),
        "tables_per_query": round(fmean(tables), 2) if tables else 0.0,
        "nested_queries": nested,
        "unparsed_queries": unparsed,
        "difficulty_labels": sum(1 for record in records if "difficulty" in record),
    }


__all__ = ["CATEGORY_OF_TYPE", "dataset_statistics"]
