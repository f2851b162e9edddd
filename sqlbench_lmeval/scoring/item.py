"""One benchmark question with everything needed to score an answer to it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath

from sqlbench_lmeval.execution import Database
from sqlbench_lmeval.vocabulary import GoldStatus, Reason, ScoreStatus

#: Gold health values; anything but "ok" means EX on that item says little about the model.
GOLD_HEALTHY = GoldStatus.OK

#: Build-time gold statuses of gold that ran when the data was prepared (it returned a result,
#: maybe empty or all NULL). Any other (``error``, ``non_select``, on a server also ``timeout``,
#: ...) is the benchmark's own broken gold: see :func:`gold_broken`.
GOLD_RAN = frozenset({GOLD_HEALTHY, GoldStatus.EMPTY, GoldStatus.ALL_NULL})

#: Verdict and reason of an answer that ran on an item whose gold is broken (:func:`gold_broken`):
#: no answer is compared with such gold, so it is never the answer's ``wrong_result``.
BROKEN_GOLD = Reason.BROKEN_GOLD

#: Status (and verdict) of a score whose item is left out because its gold did not finish
#: (``Limits.exclude_unfinished_gold``, see ``pipeline.recheck_gold``): in no mean, counted
#: apart; such a score has no metric numbers.
EXCLUDED = ScoreStatus.EXCLUDED


def gold_broken(gold_status: str) -> bool:
    """Whether gold with this status (an item's build-time ``gold_status``, or a score dict's)
    gave no result: the benchmark's broken gold (the rule: docs/scoring.md, "Verdicts")."""
    return gold_status not in GOLD_RAN


@dataclass(frozen=True)
class Item:
    """One benchmark question with everything needed to score an answer to it."""

    id: int
    question: str
    database: Database
    gold_sql: str  # in the dialect we execute
    dialect: str  # the engine's sqlglot dialect, gold's (predictions: ``prompted_dialect``)
    category: str | None = None
    gold_status: str = GOLD_HEALTHY  # judged when the data was built
    flags: tuple[str, ...] = field(default=())
    # The dialect the prompt asks for; None: the engine's own (``dialect``). See dialects.py.
    prediction_dialect: str | None = None

    @property
    def prompted_dialect(self) -> str:
        """The sqlglot dialect predictions are written in."""
        return self.prediction_dialect or self.dialect

    def is_gold_text(self, sql: str) -> bool:
        """Whether ``sql`` is gold's own text, character for character: it names a table where
        gold does and gives gold's result on any file gold ran on (the same statement on the
        same file, one seed for random functions, a frozen clock)."""
        return sql == self.gold_sql

    def to_doc(self) -> dict:
        """The fields an lm-eval document carries so the filter can rebuild the item."""
        return {
            "id": self.id,
            "question": self.question,
            "engine": self.database.engine,
            "db_path": self.database.path,
            "db_setup": self.database.setup or "",
            "gold_sql": self.gold_sql,
            "dialect": self.dialect,
            "category": self.category or "",
            "gold_status": self.gold_status,
            "flags": list(self.flags),
            "prediction_dialect": self.prompted_dialect,
        }

    @classmethod
    def from_doc(cls, doc: Mapping) -> Item:
        written = doc.get("prediction_dialect") or None
        return cls(
            id=int(doc["id"]),
            question=doc["question"],
            database=Database(
                engine=doc["engine"], path=doc["db_path"], setup=doc["db_setup"] or None
            ),
            gold_sql=doc["gold_sql"],
            dialect=doc["dialect"],
            category=doc["category"] or None,
            gold_status=doc["gold_status"],
            flags=tuple(doc["flags"]),
            # The engine's own dialect is stored as None (absent in documents made before
            # the dialect option), so an item survives the round trip unchanged.
            prediction_dialect=None if written == doc["dialect"] else written,
        )


def documents_dataset(
    docs: list[dict], integer_fields: tuple[str, ...] = ("id",), config_source: str | None = None
) -> dict:
    """What an lm-eval ``custom_dataset`` hook returns: ``docs`` (of :meth:`Item.to_doc` plus a
    benchmark's own fields) as ``{"test": Dataset}``; with ``config_source`` (the task YAML
    lm-eval passes in the task metadata) each document also names its ``task``
    (:func:`task_of_config`), so the scoring filter can name it (the saved answers' hint).

    The column types are declared, not inferred from the values: ``integer_fields`` are int64,
    ``flags`` a list of strings (often empty, which inference cannot type), every other field a
    string, whatever the first documents happen to hold.
    """
    import datasets  # heavy: datasets, loaded only when lm-eval builds a task

    task = task_of_config(config_source)
    if task is not None:
        docs = [{**doc, "task": task} for doc in docs]

    features = datasets.Features(
        {
            name: datasets.Value("int64" if name in integer_fields else "string")
            for name in docs[0]
            if name != "flags"
        }
        | {"flags": datasets.Sequence(datasets.Value("string"))}
    )
    return {"test": datasets.Dataset.from_list(docs, features=features)}


def task_of_config(config_source: str | None) -> str | None:
    """The task a task YAML defines, from its path (each of ours is named after its task);
    None without one (``"inline"``, or no metadata).

    >>> task_of_config("/site-packages/tasks/logiccat/logiccat_mini.yaml"), task_of_config(None)
    ('logiccat_mini', None)
    """
    if not config_source or not str(config_source).endswith((".yaml", ".yml")):
        return None
    return PurePath(str(config_source)).stem
