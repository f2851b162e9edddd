"""``sqlbench-lmeval submission``: a benchmark board's predictions file from an lm-eval run of its
test set (LogicCat: ``logiccat_test``, upstream's ``test.json`` records with ``query`` set to
the run's SQL). Each answer is the SQL our extraction finds in the raw output, in the board's
dialect; an item the run lacks, or whose answer holds no SQL we would run, is written with an
empty ``query`` and counted (what the file holds and how to adapt it: docs/which-number.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sqlbench_lmeval import benchmarks
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.lmeval.task_specs import task_groups, task_spec
from sqlbench_lmeval.scoring.stages.extract import extract_answer
from sqlbench_lmeval.sql.dialects import TranspileError, sqlglot_transpile
from sqlbench_lmeval.submission.logged import LoggedTask, read_submissions


@dataclass(frozen=True)
class SubmissionFile:
    """What :func:`write_submission` wrote: the file, its records, and how many of them hold
    the run's SQL, and why the others are empty."""

    path: Path
    task: str
    records: int
    answered: int
    missing: int  # items the run has no answer to
    no_sql: int  # answers in which no SQL we would run was found (prose, refused statements)
    untranslated: int  # SQL that could not be written in the board's dialect

    def summary(self) -> str:
        """The one line the command prints."""
        empty = self.missing + self.no_sql + self.untranslated
        return (
            f"{self.task}: wrote {self.records} records to {self.path}: {self.answered} with the "
            f"run's SQL, {empty} empty ({self.missing} not in the run, {self.no_sql} without "
            f"SQL, {self.untranslated} not translatable to the board's dialect)"
        )


def write_submission(task: str, run: str, output: str | Path, *, cache_dir=None, source=None):
    """Write the predictions file of the board whose test set is ``task`` from the lm-eval run
    folder ``run`` to ``output`` (a JSON list, written whole or not at all); returns the
    :class:`SubmissionFile`. A run that logged none of ``task``'s tasks, or whose documents are
    of another split or data, is refused: its answers are no answers to the board's items."""
    board = benchmarks.board_of_task(task)
    members = task_groups().get(task, (task,))
    submissions = read_submissions(run)
    if len(submissions) != 1:
        raise UserError(f"{run} holds {len(submissions)} models; pass one model folder")
    logged = [t for t in submissions[0].tasks if t.name in members]
    if not logged:
        shown = ", ".join(t.name for t in submissions[0].tasks) or "none"
        raise UserError(f"{run} logged no task of {task} (logged: {shown})")
    queries: dict[int, str] = {}
    counts = {"no_sql": 0, "untranslated": 0}
    for logged_task in logged:
        spec = task_spec(logged_task.name)
        prompt_tail = benchmarks.get(spec.benchmark).prompt_tail
        for item_id, (sql, problem) in _answers(logged_task, board, prompt_tail).items():
            if problem is not None:
                counts[problem] += 1
            queries[item_id] = sql
    records = board.records(queries, cache_dir=cache_dir, source=source)
    known = {record["idx"] for record in records}
    unknown = sorted(set(queries) - known)
    if unknown:
        raise UserError(f"{len(unknown)} logged id(s) are not items of {task}: {unknown[:10]}")
    _write_json(Path(output), records)
    answered = sum(1 for record in records if record["query"])
    return SubmissionFile(
        path=Path(output),
        task=task,
        records=len(records),
        answered=answered,
        missing=len(known - set(queries)),
        no_sql=counts["no_sql"],
        untranslated=counts["untranslated"],
    )


def _answers(logged: LoggedTask, board, prompt_tail: str) -> dict[int, tuple[str, str | None]]:
    """Each logged item's SQL in the board's dialect, and why it is empty (None: it is not)."""
    answers: dict[int, tuple[str, str | None]] = {}
    for answer in logged.answers:
        doc = answer.doc
        if not board.is_board_data(doc.get("dataset_version")):
            raise UserError(
                f"{answer.where}: the run's document is of {doc.get('dataset_version')!r}, not "
                f"of {board.task}'s data: a run of another split is no submission to the board"
            )
        if answer.item_id in answers:
            raise UserError(f"{answer.where}: id {answer.item_id} is logged more than once")
        dialect = doc.get("prediction_dialect") or board.dialect
        extraction, failure = extract_answer(
            answer.outputs[0] if answer.outputs else "", prompt_tail, dialect
        )
        if extraction is None or extraction.sql is None or failure is not None:
            answers[answer.item_id] = ("", "no_sql")
            continue
        try:
            sql = _in_dialect(extraction.sql, dialect, board.dialect)
        except TranspileError:
            answers[answer.item_id] = ("", "untranslated")
            continue
        answers[answer.item_id] = (sql, None)
    return answers


def _in_dialect(sql: str, written_in: str, wanted: str) -> str:
    """``sql`` as the board reads it: unchanged when the run was asked in the board's dialect,
    else translated by sqlglot."""
    return sql if written_in == wanted else sqlglot_transpile(sql, read=written_in, write=wanted)


def _write_json(path: Path, records: list[Mapping]) -> None:
    """``records`` as an indented JSON list (upstream's files are indented), UTF-8 unescaped,
    through a temporary file renamed into place."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(records, ensure_ascii=False, indent=2) + "\n", "utf-8")
    temporary.replace(path)


__all__ = ["SubmissionFile", "write_submission"]
