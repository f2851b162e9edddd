"""lm-eval hooks for the LogicCat tasks (tasks/logiccat/*.yaml): the built bundle as documents,
documents as prompts that name the dialect the answer is asked in (SQLite, the engine's, unless
``dialect`` says otherwise: docs/logiccat.md#dialects); scoring is shared with every other task
(``sqlbench_lmeval.lmeval.hooks``)."""

from __future__ import annotations

from sqlbench_lmeval import __version__
from sqlbench_lmeval.errors import UserError, exits_on_user_error
from sqlbench_lmeval.logiccat.benchmark import (
    CATEGORIES,
    MINI_SET_IDS,
    check_engine,
    items_from_bundle,
    version_of_bundle,
)
from sqlbench_lmeval.logiccat.bundle import ensure_bundle
from sqlbench_lmeval.logiccat.server import server_run
from sqlbench_lmeval.logiccat.split import check_split, official_split, version_with_split
from sqlbench_lmeval.scoring.item import documents_dataset
from sqlbench_lmeval.sql.dialects import display_name

SUBSETS = ("all", "mini", *CATEGORIES)


def instruction(dialect: str) -> str:
    """The request for one query in ``dialect`` (a sqlglot name), in a fenced block."""
    name = display_name(dialect)
    return (
        f"Write one {name} query that answers the question. The database runs {name}, so use "
        f"{name} syntax and functions. Reply with the query in a ```sql code block."
    )


def cot_instruction(dialect: str) -> str:
    """The request to reason first, then give one query in ``dialect`` in a fenced block."""
    name = display_name(dialect)
    return (
        "Think step by step: work out which values, formulas and tables the answer needs. "
        f"Then write one {name} query that answers the question ({name} syntax and functions). "
        "End your reply with that final query in a ```sql code block."
    )


@exits_on_user_error
def load_dataset(subset: str = "all", split: str | None = None, **metadata):
    """``custom_dataset`` hook: the LogicCat documents of :func:`documents` as
    ``{"test": Dataset}``; lm-eval passes the task metadata and ``--metadata`` as keywords.

    A task on a split of the official one (``split: dev`` or ``test``) also gets the train
    split's documents as ``{"train": Dataset}``, its ``fewshot_split``: a prompt built with
    examples (``--num_fewshot``) takes them from train, never from dev or test."""
    dataset = documents_dataset(
        documents(subset, split=split, **metadata), config_source=metadata.get("config_source")
    )
    if check_split(split) in ("dev", "test"):
        train = documents("all", split="train", **metadata)
        dataset["train"] = documents_dataset(train)["test"]
    return dataset


def documents(
    subset: str = "all",
    cache_dir=None,
    split: str | None = None,
    source=None,
    dialect: str | None = None,
    engine: str | None = None,
    url: str | None = None,
    **_options,
) -> list[dict]:
    """The LogicCat documents for ``subset`` as plain dicts (``load_dataset`` hands them to
    lm-eval; ``verify`` rebuilds prompts and items from them without lm-eval).

    ``subset`` is ``all``, ``mini`` (the official 500, idx 1-500) or a category name;
    ``split`` (``train``, ``dev`` or ``test``: the official split of 2026, ``logiccat.split``)
    keeps that split's items of the subset, and its documents name the split (``split``, and a
    ``dataset_version`` that carries it: ``split.version_with_split``).
    ``cache_dir`` and ``source`` are honoured (see ``logiccat.bundle.ensure_bundle``), and
    ``dialect``, the sqlglot dialect the answer is asked in (default: the engine's; e.g.
    ``mysql``), ``engine`` (``sqlite``, default, or ``mysql``: a server ``prepare logiccat
    --engine mysql`` loaded, under the read-only account ``url`` or ``$SQLBENCH_LMEVAL_MYSQL_URL``
    names, else this cache's reader; its prompts show the upstream MySQL DDL); any other option
    (lm-eval's task metadata) is ignored. An account with more than SELECT, a server that cannot
    be reached or holds no prepared LogicCat raise ``EvaluationUnavailable`` here, before any
    document exists.
    """

    if subset not in SUBSETS:
        raise UserError(f"unknown LogicCat subset {subset!r}; choose one of {', '.join(SUBSETS)}")
    split = check_split(split)
    engine = check_engine(engine)  # before the bundle's build: a missing driver stops it
    bundle = ensure_bundle(source=source, cache_dir=cache_dir)
    version = version_of_bundle(bundle)
    records = {record.id: record for record in bundle.records}
    schemas: dict[str, str] = {}
    if engine == "mysql":
        # What prepare stored on the server (any machine reads it with the reader alone).
        document = server_run(url, cache_dir).document
        version = document["dataset_version"]
        schemas = {db_id: data["schema"] for db_id, data in document["databases"].items()}
    in_split = official_split().ids[split] if split is not None else None
    named = {"split": split} if split is not None else {}
    if split is not None:
        version = version_with_split(version, split)
    docs = []
    for item in items_from_bundle(bundle, dialect, engine=engine, url=url, cache_dir=cache_dir):
        if subset == "mini" and item.id not in MINI_SET_IDS:
            continue
        if subset in CATEGORIES and item.category != subset:
            continue
        if in_split is not None and item.id not in in_split:
            continue
        record = records[item.id]
        if record.db_id not in schemas:
            schemas[record.db_id] = bundle.schema(record.db_id)
        docs.append(
            {
                **item.to_doc(),
                "db_id": record.db_id,
                "schema": schemas[record.db_id],
                "step": record.step,
                # Upstream's gold as published (MySQL), for verify's gold-copy check.
                "published_gold_sql": record.gold_sql_mysql,
                "published_dialect": "mysql",
                "dataset_version": version,
                "sqlbench_lmeval_version": __version__,
                **named,
            }
        )
    return docs


def _prompt(doc: dict, *parts: str) -> str:
    header = (
        f"You are given a {display_name(doc['prediction_dialect'])} database. Its schema (the "
        "comments give units and meanings):\n\n"
        f"{doc['schema'].strip()}\n\n"
        f"Question: {doc['question'].strip()}\n\n"
    )
    return header + "".join(parts)


def doc_to_text(doc: dict) -> str:
    """Zero-shot: schema, question, instruction."""
    return _prompt(doc, instruction(doc["prediction_dialect"]), "\n")


def doc_to_text_cot(doc: dict) -> str:
    """Zero-shot chain of thought: reason first, then the final query in a fenced block."""
    return _prompt(doc, cot_instruction(doc["prediction_dialect"]), "\n")


def doc_to_text_oracle_cot(doc: dict) -> str:
    """The paper's "with CoT annotations" setting: the gold reasoning steps are given."""
    steps = doc["step"].strip()
    steps_part = f"Reasoning steps to follow:\n{steps}\n\n"
    return _prompt(doc, steps_part, instruction(doc["prediction_dialect"]), "\n")


def doc_to_target(doc: dict) -> str:
    """The gold query (shown in the sample log; scoring runs it, never compares its text)."""
    return doc["gold_sql"]
