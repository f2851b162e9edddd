"""lm-eval hooks of the toy task (tasks/toy/toy.yaml): the items as documents, a document as a
zero-shot prompt with the schema; scoring is the shared filter's (``lmeval.hooks``)."""

from __future__ import annotations

from support.toybench.benchmark import SCHEMA, dataset_version, load_items

from sqlbench_lmeval import __version__
from sqlbench_lmeval.errors import exits_on_user_error
from sqlbench_lmeval.scoring.item import documents_dataset


@exits_on_user_error
def load_dataset(**metadata):
    """``custom_dataset`` hook: the documents as ``{"test": Dataset}``."""
    return documents_dataset(documents(**metadata), config_source=metadata.get("config_source"))


def documents(cache_dir=None, dialect: str | None = None, **_options) -> list[dict]:
    """The documents as plain dicts: ``Item.to_doc`` plus what ``verify`` reads
    (``dataset_version``, ``sqlbench_lmeval_version``) and the prompt's ``schema``."""
    version = dataset_version(cache_dir)
    return [
        {
            **item.to_doc(),
            "schema": SCHEMA,
            "dataset_version": version,
            "sqlbench_lmeval_version": __version__,
        }
        for item in load_items(cache_dir, dialect=dialect)
    ]


def doc_to_text(doc: dict) -> str:
    """The schema, the question and the request for one SQLite query in a fenced block."""
    return (
        f"Database schema (SQLite):\n\n{doc['schema']}\n\nQuestion: {doc['question']}\n\n"
        "Write one SQLite query that answers the question, in a ```sql code block.\n"
    )


def doc_to_target(doc: dict) -> str:
    """The gold query (shown in the sample log; scoring runs it)."""
    return doc["gold_sql"]
