"""lm-eval hooks for the ``tpcds`` task (tasks/tpcds/tpcds.yaml): the built database, the gold
queries and the questions as documents, a document as the zero-shot prompt that names the
dialect the answer is asked in (DuckDB's own unless ``dialect`` says otherwise:
docs/tpcds.md#dialects); scoring is shared with every other task (``sqlbench_lmeval.lmeval.hooks``,
with ``benchmark: tpcds`` adding the structure metrics)."""

from __future__ import annotations

from sqlbench_lmeval import __version__
from sqlbench_lmeval.errors import exits_on_user_error
from sqlbench_lmeval.scoring.item import documents_dataset
from sqlbench_lmeval.sql.dialects import display_name
from sqlbench_lmeval.tpcds.benchmark import DEFAULT_SCALE_FACTOR, dataset_version, load_items
from sqlbench_lmeval.tpcds.data import schema_ddl


def instruction(dialect: str) -> str:
    """The request for one query in ``dialect`` (a sqlglot name), in a fenced block."""
    name = display_name(dialect)
    return (
        f"Write one {name} SQL query that answers the question. The database runs {name}, so "
        f"use {name} syntax and functions. Reply with the query in a ```sql code block."
    )


@exits_on_user_error
def load_dataset(scale_factor: float = DEFAULT_SCALE_FACTOR, **metadata):
    """``custom_dataset`` hook: the 99 TPC-DS documents of :func:`documents` as
    ``{"test": Dataset}``; lm-eval passes the task metadata and ``--metadata`` as keywords."""
    return documents_dataset(
        documents(scale_factor, **metadata),
        integer_fields=("id", "query_nr"),
        config_source=metadata.get("config_source"),
    )


def documents(
    scale_factor: float = DEFAULT_SCALE_FACTOR,
    cache_dir=None,
    questions_file=None,
    dialect: str | None = None,
    engine: str | None = None,
    url: str | None = None,
    **_options,
) -> list[dict]:
    """The TPC-DS documents as plain dicts (``load_dataset`` hands them to lm-eval; ``verify``
    rebuilds prompts and items from them without lm-eval).

    Honoured: ``scale_factor`` (database size, default 1), ``questions_file`` (a JSONL file of
    your own questions, ``query_nr`` and ``question`` per line), ``dialect`` (the sqlglot
    dialect the answer is asked in, e.g. ``postgres``; default ``duckdb``) and ``cache_dir``;
    ``engine`` ``postgres`` runs the queries on the server ``prepare tpcds --engine postgres``
    loaded (``url``: its read-only role; default: this cache's), any other than ``duckdb`` is an
    error (LogicCat's engines do not apply); any other option (lm-eval's task metadata) is
    ignored. A document's ``id`` is the TPC-DS query number, on every engine.
    """

    options = {
        "cache_dir": cache_dir,
        "scale_factor": scale_factor,
        "questions_file": questions_file,
        "engine": engine,
        "url": url,
    }
    items = load_items(**options, dialect=dialect)
    version = dataset_version(**options)
    schema = schema_ddl()
    return [
        {
            **item.to_doc(),
            "query_nr": item.id,
            "schema": schema,
            "dataset_version": version,
            "sqlbench_lmeval_version": __version__,
        }
        for item in items
    ]


def doc_to_text(doc: dict) -> str:
    """Zero-shot: the schema, the question, the instruction naming the prompted dialect."""
    dialect = doc["prediction_dialect"]
    return (
        f"You are given a {display_name(dialect)} database with the TPC-DS decision-support "
        f"schema:\n\n{doc['schema'].strip()}\n\n"
        f"Question: {doc['question'].strip()}\n\n"
        f"{instruction(dialect)}\n"
    )


def doc_to_target(doc: dict) -> str:
    """The gold query (shown in the sample log; scoring runs it, never compares its text)."""
    return doc["gold_sql"]
