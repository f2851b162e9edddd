"""The lm-eval hooks every task shares: :class:`ExecuteAndScore`, the filter that scores all of a
task's responses in one batch and returns each document's full score dict, and
:func:`process_results`, which picks from it the numbers that are rows of lm-eval's table (why
the work sits in the filter: docs/layout.md#scoring-inside-lm-eval). A failure of the
evaluation itself is raised out of the filter once the answers are saved as a predictions file
for ``sqlbench-lmeval score`` (docs/failures.md).

>>> score = {"id": 7, "status": "ok", "ves": 1, "ex": 0, "work": 120}  # a logged count, no row
>>> process_results({"engine": "sqlite"}, [score])  # a metric the dict lacks is 0
{'ves': 1, 'ex': 0, 'ex_strict': 0, 'ex_set': 0, 'ex_reads_data': 0, 'r_ves': 0}
>>> process_results({"engine": "sqlite"}, [])["ves"]  # no score dict: zeros, never an error
0
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from lm_eval.api.filter import Filter

from sqlbench_lmeval import benchmarks
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable
from sqlbench_lmeval.lmeval.task_specs import task_specs
from sqlbench_lmeval.lmeval.versions import filter_output, register_metrics
from sqlbench_lmeval.paths import cache_dir
from sqlbench_lmeval.scoring.answer import Answer, Failure
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.metrics import METRICS, NOT_IN_LM_EVAL_TABLE, execution_metrics
from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.timeouts import timed_out_line
from sqlbench_lmeval.vocabulary import Stage


class ExecuteAndScore(Filter):
    """Extract, execute and compare every response of a task in one parallel batch.

    ``benchmark`` names the :class:`~sqlbench_lmeval.benchmarks.Benchmark` whose hooks take
    part (``Benchmark.scoring_hooks``: per-item numbers, the translation of predictions written
    in another dialect).
    """

    #: ``score`` option for the predictions file the answers are saved to (sampled: --samples).
    SCORE_OPTION = ""

    def __init__(self, benchmark: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.benchmark = benchmarks.get(benchmark)

    def apply(self, resps, docs):
        """One score dict per document, in order (as the installed lm-eval passes it on:
        ``versions.filter_output``). A document that cannot be read is scored 0
        with the reason (a run of hours must end in scores); a failure of the evaluation itself
        raises (:class:`EvaluationUnavailable`), as no score may hide it: so does any other
        exception out of the batch's scoring, which is never an answer's doing (an answer's
        own failures are its outcome)."""
        docs, resps = list(docs), list(resps)
        items: list[Item | None] = []
        scores: list[dict | None] = []
        for doc in docs:
            try:
                items.append(Item.from_doc(doc))
                scores.append(None)
            except Exception as error:
                items.append(None)
                failure = Failure.at(Stage.DOCUMENT, error)
                scores.append(Answer.unreadable(_doc_id(doc), failure, _doc_engine(doc)).to_json())
        scorable = [i for i, item in enumerate(items) if item is not None]
        answers = [resps[i] if i < len(resps) else None for i in scorable]
        try:
            scored = self.score([items[i] for i in scorable], answers)
        except EvaluationUnavailable as error:
            # One traceback in lm-eval's output, ending in the cause (the pool's internals
            # would say nothing more to the user).
            raise EvaluationUnavailable(
                f"{error}\n{self._save_unscored([items[i] for i in scorable], answers, docs)}"
            ) from None
        except Exception as error:
            text = Failure.at(Stage.SCORING, error).error
            raise EvaluationUnavailable(
                f"{text}: a fault of the evaluation, not of the model\n"
                f"{self._save_unscored([items[i] for i in scorable], answers, docs)}"
            ) from error
        for i, score in zip(scorable, scored, strict=True):
            scores[i] = score
        excluded = [item.id for item in map(ScoredItem.from_score, scores) if item.excluded]
        if excluded:  # lm-eval's results file cannot say it: its means are over the others
            print(
                f"sqlbench-lmeval: {len(excluded)} of {len(scores)} {self.benchmark.name} "
                "documents left out of every mean: their gold did not finish (ids "
                f"{', '.join(str(i) for i in excluded)}); the samples log keeps them",
                file=sys.stderr,
                flush=True,
            )
        late = timed_out_line(scores)
        if late:  # lm-eval's table shows only the numbers; say which answers ran out of time
            print(f"sqlbench-lmeval: {self.benchmark.name}: {late}", file=sys.stderr, flush=True)
        return [filter_output(score) for score in scores]

    def _save_unscored(self, items: list[Item], resps: list, docs: list) -> str:
        """Write the answers as a predictions file that records their task; what to tell the
        user about it (``score`` with the task's name: the benchmark's would score every item
        of the benchmark, those of another task missing)."""
        task = _task_of(docs) or self.benchmark.name
        folder = cache_dir() / UNSCORED_DIR
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        path = folder / f"{task}-{stamp}-{os.getpid()}.jsonl"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            write_predictions(path, items, [self.prediction(r) for r in resps], task)
        except OSError as error:
            return f"The model's answers could not be saved ({error}); they are not scored."
        option = f" {self.SCORE_OPTION}" if self.SCORE_OPTION else ""
        return (
            f"The model's {len(items)} answers are not scored; they are saved in {path}. Once "
            f"the cause is fixed, score them with `sqlbench-lmeval score {task} "
            f"{path}{option} --output scores.json` and the task's options (--engine, "
            "--dialect, ...)."
        )

    def prediction(self, responses):
        """A document's responses as the ``prediction`` of a predictions file."""
        return _first_response(responses)

    def score(self, items: list[Item], resps: list) -> list[dict]:
        """The score dicts of ``items`` given each one's responses (``resps[i]``)."""
        # Greedy decoding gives one response per document; the first is the answer. The
        # sqlbench-repair model answers with all its attempts (see retry_envelope).
        scorer = Scorer.from_env(items, self.benchmark.scoring_hooks())
        return scorer.score(items, [_first_response(responses) for responses in resps])


#: Folder under the cache root where answers the evaluation could not score are kept.
UNSCORED_DIR = "unscored"


def write_predictions(path: Path, items: list[Item], predictions: list, task: str) -> None:
    """A predictions file as ``sqlbench-lmeval score`` reads it: ``{"id", "prediction",
    "task"}`` per line (ASCII JSON: a lone surrogate in an output survives as its escape);
    ``score`` refuses it under another task's name (``offline.recorded_task``)."""
    with open(path, "w", encoding="ascii") as handle:
        for item, prediction in zip(items, predictions, strict=True):
            line = {"id": item.id, "prediction": prediction, "task": task}
            handle.write(json.dumps(line) + "\n")


def _task_of(docs) -> str | None:
    """The task the documents name (``scoring.item.documents_dataset``), if one of ours."""
    names = {doc.get("task") for doc in docs if isinstance(doc, dict)}
    if len(names) == 1 and (name := names.pop()) in task_specs():
        return name
    return None


def _first_response(responses) -> str:
    """The answer among one document's responses: the first, if it is text; else ""."""
    if isinstance(responses, str):
        return responses
    if isinstance(responses, (list, tuple)) and responses and isinstance(responses[0], str):
        return responses[0]
    return ""


def _doc_id(doc) -> int:
    try:
        return int(doc["id"])
    except Exception:
        return -1


def _doc_engine(doc) -> str | None:
    """The engine a document names, None for a document that is not a dict."""
    return doc.get("engine") if isinstance(doc, dict) else None


def process_results(doc: dict, results: list) -> dict[str, float]:
    """The numbers of one document's score dict (made by :class:`ExecuteAndScore`; ``results``
    is ``[score]`` on every lm-eval version we support) that are rows
    of lm-eval's table (not ``scoring.metrics.NOT_IN_LM_EVAL_TABLE``: the work counts, gold's
    own complexity counts), as written; zeros when ``results`` holds no score dict, or one
    :class:`ScoredItem` cannot read (never raises: lm-eval calls this after the whole run)."""
    score = results[0] if isinstance(results, (list, tuple)) and len(results) == 1 else None
    # A metric not defined on the document's engine (r_ves where the engine counts no work)
    # is left out, so lm-eval's table has no row for it rather than a 0 never measured.
    defined = execution_metrics(_doc_engine(doc))
    item = _read(score)
    if item is None:
        return dict.fromkeys(defined, 0)
    if item.excluded:
        # Its gold did not finish and the user asked to leave such items out: no number, so
        # lm-eval's means leave it out (the samples log keeps its score dict, which says why).
        return {}
    numbers = {name: item.values.get(name, 0) for name in defined}
    numbers.update(
        (name, value)
        for name, value in item.values.items()
        if name not in numbers and name not in NOT_IN_LM_EVAL_TABLE
    )
    return numbers


def _read(score) -> ScoredItem | None:
    """``score`` read, or None when it is not a score dict (or one too malformed to read)."""
    try:
        return ScoredItem.from_score(score) if isinstance(score, dict) else None
    except Exception:  # lm-eval calls process_results after the whole run: never raise
        return None


# lm-eval imports this module while it reads our task YAML (``!function``), before it builds the
# tasks' metrics: the moment to make our metric names known to a version that looks them up.
try:
    register_metrics({m.name: m.higher_is_better for m in METRICS if m.in_lm_eval_table})
except Exception as error:  # noqa: BLE001 - without them lm-eval only warns: never stop a run
    import warnings

    warnings.warn(
        f"sqlbench-lmeval could not register its metrics with lm-eval ({error!r}); lm-eval "
        "will warn that they are not in its registry (the numbers are unaffected)",
        RuntimeWarning,
        stacklevel=1,
    )
