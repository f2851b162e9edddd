"""Scripted LogicCat answers for end-to-end runs: find the item a prompt asks about, answer it
in a way chosen by its id, know the (VES, EX) that answer earns, and score the run's raw outputs
again offline.

- ``scripted_model(records, respond)`` turns ``respond(record) -> output text`` into the
  ``answer(prompt)`` callable of ``support.lm_eval_run.run_lm_eval``.
- ``gold_answer_scores(record)``: what the gold query earns as an answer.
- The known-answers scheme: ``answer_kind(item_id)`` is ``gold``, ``wrong`` or ``prose`` by
  ``id % 3``; ``known_answer(record, gold_sql)`` is that answer's text and
  ``known_answer_scores(record)`` its (VES, EX), from the kind and the gold health alone (never
  from the scoring code under test); ``known_answers_model(records)`` is the scripted model and
  ``check_known_answers`` asserts the scores on a run's samples.
- ``run_logiccat(task, cache, answer, workdir, ...)``: ``run_lm_eval`` on a LogicCat task built
  in ``cache``.
- ``score_offline(predictions, cache, *options)``: ``sqlbench-lmeval score logiccat`` on a
  predictions file, through the CLI's ``main`` (``scores_path`` names the file it writes);
  ``write_predictions`` writes a run's raw outputs as that file; ``assert_same_scores`` compares
  offline items with logged samples; ``assert_offline_agrees`` does all three.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from support.lm_eval_run import run_lm_eval

from sqlbench_lmeval.cli import main

QUESTION = re.compile(r"\nQuestion: (.*?)\n\n", re.S)
# Gold statuses whose gold result a correct query can match.
MATCHABLE = {"ok", "empty", "all_null"}
# Runs on every LogicCat database, in SQLite and in MySQL, and answers none of its questions.
WRONG_SQL = "SELECT 'not the answer' AS x, 42 AS y"
PROSE = "I would need to know more about the pumps before answering."
# The per-item scores both a lm-eval sample and an offline ``score`` item carry.
ITEM_SCORES = ("ves", "ex", "ex_strict", "ex_set")


def scripted_model(records: Iterable, respond: Callable) -> Callable[[str], str]:
    """``answer(prompt)``: ``respond`` called with the record whose question the prompt asks."""
    by_question = {}
    for record in records:
        by_question.setdefault(record.question.strip(), record)

    def answer(prompt: str) -> str:
        return respond(by_question[QUESTION.search(prompt).group(1).strip()])

    return answer


def gold_answer_scores(record) -> tuple[int, int]:
    """(VES, EX) of the gold query given as the answer: it runs iff gold health lets it, and
    matches itself unless its result is random."""
    runs = record.gold_status in MATCHABLE
    repeatable = "random" not in record.flags
    return int(runs), int(runs and repeatable)


def answer_kind(item_id: int) -> str:
    """How the known-answers model answers item ``item_id``: its gold, a wrong query, or prose."""
    return ("gold", "wrong", "prose")[item_id % 3]


def known_answer(record, gold_sql: str) -> str:
    """The known-answers model's output for ``record``; ``gold_sql`` is the gold of the dialect
    the run's prompts ask for (``record.gold_sql`` or ``record.gold_sql_mysql``)."""
    kind = answer_kind(record.id)
    if kind == "gold":
        return f"Here is the query:\n```sql\n{gold_sql}\n```"
    if kind == "wrong":
        return f"```sql\n{WRONG_SQL}\n```"
    return PROSE


def known_answers_model(records: Iterable, gold: str = "gold_sql") -> Callable[[str], str]:
    """The scripted model that gives every item its ``known_answer``, with the gold of the
    record attribute ``gold`` (``gold_sql_mysql`` for MySQL prompts)."""
    return scripted_model(records, lambda record: known_answer(record, getattr(record, gold)))


def known_answer_scores(record) -> tuple[int, int]:
    """(VES, EX) the known answer must get: prose does not run (0, 0); the wrong query runs and
    matches nothing (1, 0); the gold query as ``gold_answer_scores`` says."""
    kind = answer_kind(record.id)
    if kind == "prose":
        return 0, 0
    if kind == "wrong":
        return 1, 0
    return gold_answer_scores(record)


def check_known_answers(samples: Sequence[dict], records_by_id: Mapping) -> Sequence[dict]:
    """Assert each logged sample scored its known answer exactly and its log explains the
    verdict (the extracted SQL and the gold health are in it); returns ``samples``."""
    assert samples, "no samples logged"
    for sample in samples:
        record = records_by_id[sample["doc"]["id"]]
        assert (sample["ves"], sample["ex"]) == known_answer_scores(record), record.id
        logged = str(sample["filtered_resps"])
        assert "extracted_sql" in logged and "gold_status" in logged, record.id
    return samples


def run_logiccat(
    task: str,
    cache: Path,
    answer: Callable[[str], str],
    workdir: Path,
    *extra_args: str,
    chat: bool = False,
    include_path: Path | None = None,
) -> tuple[dict, dict[str, list[dict]]]:
    """``run_lm_eval`` on ``task`` (a comma-separated list may add tasks of ``include_path``)
    with the LogicCat bundle of ``cache``; ``extra_args`` go to the CLI (``--limit 6``,
    ``--metadata ...``)."""
    return run_lm_eval(
        task,
        answer=answer,
        include_path=include_path,
        chat=chat,
        workdir=workdir,
        extra_args=list(extra_args),
        env={"SQLBENCH_LMEVAL_CACHE": str(cache)},
    )


def write_predictions(path: Path, samples: Iterable[dict]) -> Path:
    """A predictions file (JSONL ``{"id", "prediction"}``) of each sample's first raw output."""
    lines = [{"id": s["doc"]["id"], "prediction": s["resps"][0][0]} for s in samples]
    return write_jsonl(path, lines)


def write_jsonl(path: Path, lines: Iterable[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def scores_path(predictions: Path) -> Path:
    """Where :func:`score_offline` writes the scores of ``predictions``."""
    return predictions.with_name(predictions.stem + "-scores.json")


def score_offline(predictions: Path, cache: Path, *options: str) -> dict:
    """``sqlbench-lmeval score logiccat PREDICTIONS`` with the bundle of ``cache`` and
    ``options`` (``--engine mysql``, ``--samples``); the scores file it wrote, parsed.

    Through the CLI's ``main`` in this process: a second interpreter would only import again
    what this one holds (``python -m sqlbench_lmeval`` itself is tested in tests/test_cli.py)."""
    output = scores_path(predictions)
    assert main(
        [
            "score", "logiccat", str(predictions),
            *options, "--output", str(output), "--cache-dir", str(cache), "--no-progress",
        ]
    ) == 0  # fmt: skip
    return json.loads(output.read_text(encoding="utf-8"))


def assert_offline_agrees(
    samples: Sequence[dict], cache: Path, predictions: Path, *options: str
) -> dict:
    """Score the samples' raw outputs offline (``write_predictions`` to ``predictions``, then
    ``score_offline`` with ``options``) and assert every item agrees with its logged sample on
    ``ITEM_SCORES``; returns the offline scores."""
    scored = score_offline(write_predictions(predictions, samples), cache, *options)
    assert_same_scores(samples, scored)
    return scored


def assert_same_scores(
    samples: Iterable[dict], scored: dict, names: Sequence[str] = ITEM_SCORES
) -> dict[int, dict]:
    """Assert each logged sample and the offline item of the same id agree on ``names``;
    returns the offline items by id."""
    items = {item["id"]: item for item in scored["items"]}
    for sample in samples:
        item = items[sample["doc"]["id"]]
        assert {n: item[n] for n in names} == {n: sample[n] for n in names}, item["id"]
    return items
