"""The one object that scores answers: a :class:`Scorer` is built once per run (limits, workers,
gold cache, the benchmark's hooks, progress, previews) by the lm-eval filters, ``score``,
``verify``, the repair model and sampled scoring, and runs ``stages.STAGES`` over their answers,
so every path gives the same numbers; what stops a run instead is in docs/failures.md.

>>> import os, sqlite3, tempfile
>>> from sqlbench_lmeval.execution import Database
>>> path = os.path.join(tempfile.mkdtemp(), "pets.db")
>>> with sqlite3.connect(path) as db:
...     _ = db.execute("CREATE TABLE pets (name)"), db.execute("INSERT INTO pets VALUES ('Rex')")
>>> item = Item(1, "Name the pets.", Database("sqlite", path), "SELECT name FROM pets", "sqlite")
>>> scorer = Scorer(workers=0, progress=False)  # 0: in this process (no sandbox: examples only)
>>> right, constant = scorer.score([item, item], ["SELECT name FROM pets", "SELECT 'Rex'"])
>>> right["ex"], right["data_dependence"], right["r_ves"]
(1, 'changed', 1.0)
>>> constant["ex"], constant["data_dependence"], constant["reads_no_table"], constant["r_ves"]
(1, 'no_table', True, 0.0)
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from sqlbench_lmeval.execution import GoldCache, Limits
from sqlbench_lmeval.execution.pool import WorkerPool
from sqlbench_lmeval.execution.runner import default_timeout
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable
from sqlbench_lmeval.paths import gold_cache_dir
from sqlbench_lmeval.scoring import cost
from sqlbench_lmeval.scoring.batch import Batch, Incoming
from sqlbench_lmeval.scoring.hooks import Hooks
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.preview import PREVIEW_ROWS, PREVIEW_ROWS_ENV
from sqlbench_lmeval.scoring.retry_envelope import score_with_retries
from sqlbench_lmeval.scoring.sampled import score_samples
from sqlbench_lmeval.scoring.stages import STAGES

#: Environment settings of a run through lm-eval, whose filters take no options.
WORKERS_ENV = "SQLBENCH_LMEVAL_WORKERS"
TIMEOUT_ENV = "SQLBENCH_LMEVAL_TIMEOUT"
GOLD_TIMEOUT_ENV = "SQLBENCH_LMEVAL_GOLD_TIMEOUT"
#: The row cap (``score --max-rows``): a larger TPC-DS scale factor makes gold results larger.
MAX_ROWS_ENV = "SQLBENCH_LMEVAL_MAX_ROWS"
#: "1": gold that does not finish leaves its items out of every mean instead of stopping.
EXCLUDE_UNFINISHED_GOLD_ENV = "SQLBENCH_LMEVAL_EXCLUDE_UNFINISHED_GOLD"


@dataclass(frozen=True)
class Scorer:
    """Scores answers under ``limits`` in ``workers`` sandboxed processes (None: one per CPU),
    gold through ``gold_cache``, with a benchmark's ``hooks``; ``progress`` shows a bar, and
    each score keeps ``preview_rows`` rows of both results."""

    limits: Limits = field(default_factory=Limits)
    workers: int | None = None
    gold_cache: GoldCache | None = None
    hooks: Hooks = field(default_factory=Hooks)
    progress: bool = True
    preview_rows: int = PREVIEW_ROWS

    @classmethod
    def from_env(cls, items: Sequence[Item], hooks: Hooks | None = None, progress: bool = True):
        """The scorer of a run through lm-eval: its settings from the environment
        (``$SQLBENCH_LMEVAL_TIMEOUT``, else the default of the items' engine; the row cap,
        gold's own limit, excluding unfinished gold, workers, previews), gold cached in the
        cache root."""
        workers = os.environ.get(WORKERS_ENV)
        rows = os.environ.get(PREVIEW_ROWS_ENV)
        return cls(
            limits=_limits_from_env(items),
            workers=int(workers) if workers else None,
            gold_cache=GoldCache(gold_cache_dir()),
            hooks=hooks or Hooks(),
            progress=progress,
            preview_rows=int(rows) if rows else PREVIEW_ROWS,
        )

    def score(self, items: Sequence[Item], outputs: Sequence, retried_run: bool = False):
        """One score dict per item for ``outputs[i]``, the answer to ``items[i]`` (None:
        never submitted; a repair model's envelope: its first and last attempts, see
        ``retry_envelope``, and with ``retried_run`` every item gets retry numbers; a metered
        answer is scored as its base model's output, with its cost added: ``scoring.cost``)."""
        if len(items) != len(outputs):
            raise ValueError(f"{len(items)} items but {len(outputs)} outputs")
        answers, costs = cost.unwrap_all(outputs)
        with fewer_collections():  # the score dicts too are made while every result is held
            scores = score_with_retries(items, answers, self._score_plain, retried_run=retried_run)
        return cost.with_cost(scores, costs)

    def _score_plain(self, items: Sequence[Item], outputs: Sequence) -> list[dict]:
        incoming = ((index, output, None) for index, output in enumerate(outputs))
        batch = self.run(items, incoming, expected=len(items))
        return [answer.to_json() for answer in batch.answers]

    def run(self, items: Sequence[Item], incoming: Iterable[Incoming], expected=None) -> Batch:
        """Every stage over ``incoming`` answers to ``items`` (any number per item: sampled
        scoring; gold runs once); the batch, whose ``answers`` are in input order.
        ``expected`` is about how many answers ``incoming`` yields (a lazy iterable is consumed
        while the SQL of the answers before runs).

        Raises :class:`EvaluationUnavailable` when the evaluation itself cannot run; nothing
        is scored then."""
        batch = Batch(items, incoming, expected)
        # One set of worker processes for every batch of the run (gold and answers, gold and
        # the answers on the perturbed copies): each starts and opens its databases once.
        with fewer_collections(), WorkerPool(self.workers) as batch.pool:
            for stage in STAGES:
                _run_stage(stage, batch, self)
        batch.pool = None  # closed: its workers are stopped
        return batch

    def score_samples(self, items: Sequence[Item], outputs: Sequence[Sequence]) -> list[dict]:
        """One score dict per item of several sampled answers each (``scoring.sampled``);
        metered samples are scored as their outputs, and the item costs their sum."""
        unwrapped = [cost.unwrap_all(samples) for samples in outputs]
        scores = score_samples(self, items, [answers for answers, _ in unwrapped])
        return cost.with_cost(scores, [cost.total(costs) for _, costs in unwrapped])


def _run_stage(stage, batch: Batch, scorer: Scorer) -> None:
    if not getattr(stage, "RUNS_SQL", False):
        stage.run(batch, scorer)
        return
    try:
        stage.run(batch, scorer)
    except EvaluationUnavailable:
        raise
    except Exception as error:  # the model's SQL failing is an outcome, never raises
        raise EvaluationUnavailable(execution_fault(error)) from error


#: Cyclic garbage collection while a run scores: a collection every 10,000 new objects instead
#: of Python's 700 (the older generations in step). Scoring holds every result (LogicCat: 4,036
#: gold results, the answers', the perturbed copies') while it makes more, and the default
#: thresholds walked them over and over: ~0.4 s of CPU of a LogicCat score run of ~2.5 s.
#: Garbage is still collected, in larger batches.
GC_THRESHOLD = (10_000, 10, 10)


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """:data:`GC_THRESHOLD` within the block: for the scoring run, and for a caller that goes on
    with its results (the score dicts, a command's output). Back at the default thresholds with
    every result still held, the next collection walks them all (LogicCat gold as the answers:
    a full collection of ~0.15 s right after the run)."""
    before = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _limits_from_env(items: Sequence[Item]) -> Limits:
    """``$SQLBENCH_LMEVAL_TIMEOUT``, else the default time limit of the items' engine; the row
    cap, gold's own limit and what to do with gold that does not finish from their variables."""
    timeout = os.environ.get(TIMEOUT_ENV)
    if timeout:
        timeout_s = float(timeout)
    else:
        engines = {item.database.engine for item in items}
        timeout_s = max((default_timeout(e) for e in engines), default=Limits().timeout_s)
    gold_timeout = os.environ.get(GOLD_TIMEOUT_ENV)
    max_rows = os.environ.get(MAX_ROWS_ENV)
    return Limits(
        timeout_s=timeout_s,
        gold_timeout_s=float(gold_timeout) if gold_timeout else None,
        exclude_unfinished_gold=os.environ.get(EXCLUDE_UNFINISHED_GOLD_ENV, "") == "1",
        **({"max_rows": int(max_rows)} if max_rows else {}),
    )


def execution_fault(error: BaseException) -> str:
    """The message of an unexpected exception while running SQL: the evaluation's fault."""
    lines = str(error).strip().splitlines()
    text = type(error).__name__ + (f": {lines[0][:300]}" if lines else "")
    return (
        f"executing the SQL failed inside the evaluation ({text}), not in a query: a fault of "
        "sqlbench-lmeval or of this machine, not of the model; run again, and if it repeats, "
        "report it with the command and this message"
    )
