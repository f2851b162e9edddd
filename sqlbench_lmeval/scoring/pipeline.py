"""Score model outputs against gold SQL: extract, execute both sides, compare, aggregate.

This is the one code path behind every number we publish: the lm-eval batch filter
(``sqlbench_lmeval.lmeval.hooks``) and ``sqlbench-lmeval score`` both call
:func:`score_items`, so the two give the same numbers by construction.

Per item, in order:

1. the SQL is extracted from the raw model output (``extract.extract_sql``) and, when the
   prompt asked for another dialect than the engine's, translated into it (``dialects``);
2. prediction and gold run in sandboxed worker processes (gold through the on-disk cache);
3. the results are compared (``compare.compare``), ordered only when gold's outermost query
   has an ORDER BY; an answer that fails only by order, values or row count and is another of
   gold's right answers under its ties (``gold_ties``: gold's tie probe runs beside gold) is
   correct with reason ``tie_equivalent``; an item whose gold was recorded as broken when the
   data was prepared (``item.gold_broken``) is compared with no answer: every comparison 0,
   reason ``broken_gold`` for an answer that ran (docs/scoring.md, "Verdicts");
4. the item's gold health is reported beside the verdict, never folded into VES.

Scoring is total: whatever one output holds, it becomes that item's outcome and the run goes
on. An answer the extractor refuses (``multiple_statements``, ``not_read_only``,
``executable_comment``, see ``extract``; read in the dialect the prompt asked for) is status
``error`` with that reason and is not run; an exception while handling one answer
(extract, transpile, compare, structure) is status ``error`` with reason
``"<stage>: <exception type>: <message>"``; every number of such an item is 0. The SQL
failing in the engine is the answer's outcome (``error``, ``timeout``, ...), never an
exception; an exception out of the execution stage itself is the evaluation's own failure and
stops the run (below). An output cut
off by the generation limit (``Extraction.truncated``) is scored as usual, is marked
``truncated``, and gets reason ``truncated`` unless it matched gold (a refused answer too:
its error message still says why it was refused).

An answer that ran but does not read the data where gold does keeps its status and EX, is
flagged ``reads_no_table``, and scores 0 on ``ex_reads_data`` and ``r_ves``: one that names no
table (``SELECT 646.8 UNION ALL SELECT 1292.2``: numbers worked out from the question; see
``table_reads``), and one that matched gold but whose result stays the same on a perturbed copy
of the database where gold's changes (``SELECT 646.8 FROM pump LIMIT 1``; the second run, only
of answers that matched gold, is ``data_dependence``; its verdict is the item's
``data_dependence``).

What stops a run is a failure of the evaluation itself, never an output:
``EvaluationUnavailable`` (``execution.unavailable``: a database that cannot be opened, a server
that stays gone, a cache file that cannot be written, gold recorded as running at build time
that errors now, gold that does not finish, see :func:`recheck_gold`; any other exception out
of the execution stage, as :func:`execution_fault`) propagates to the caller, and nothing is
scored.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from statistics import fmean

from sqlbench_lmeval.execution import (
    GoldCache,
    Job,
    Limits,
    Outcome,
    Status,
    execute_many,
)
from sqlbench_lmeval.execution.pool import WorkerPool
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION, Verdict, compare, gold_order_matters
from sqlbench_lmeval.scoring.data_dependence import (
    DATA_DEPENDENCE,
    FLAGGED,
    NO_TABLE,
    Case,
    judge_all,
)
from sqlbench_lmeval.scoring.gold_ties import GoldTies, plan_batch, tie_verdict
from sqlbench_lmeval.scoring.item import (
    BROKEN_GOLD,
    EXCLUDED,
    GOLD_HEALTHY,
    GOLD_RAN,
    Item,
    gold_broken,
)
from sqlbench_lmeval.scoring.metrics import (
    ACCEPTABLE,
    EX,
    EX_ON_HEALTHY_GOLD,
    GOLD_WORK,
    LOGGED_NUMBERS,
    TIE_STATUS,
    WORK,
    Executed,
    compute_metrics,
    execution_metrics,
)
from sqlbench_lmeval.scoring.preview import PREVIEW_ROWS, result_preview
from sqlbench_lmeval.scoring.translate import TRANSPILE_ERROR, Transpile, engine_sql
from sqlbench_lmeval.sql.extract import (
    EXECUTABLE_COMMENT,
    MULTIPLE_STATEMENTS,
    NOT_READ_ONLY,
    Extraction,
    extract_sql,
)
from sqlbench_lmeval.sql.table_reads import surely_reads_no_table

#: The score-dict flag of an answer that ran but does not read the data where gold does (it
#: names no table, ``table_reads``, or its result does not depend on the data,
#: ``data_dependence``).
READS_NO_TABLE = "reads_no_table"

#: Flags that make a gold result unrepeatable: no answer can be checked against it.
UNREPEATABLE_FLAGS = frozenset({"random"})

#: Status of an item whose prediction was never submitted (offline scoring only).
MISSING = "missing"


#: Gold outcomes that say gold did not finish: this machine's doing, never the benchmark's.
UNFINISHED = frozenset({Status.TIMEOUT, Status.CRASHED})

#: Reason of an output cut off by the generation limit that did not match gold.
TRUNCATED = "truncated"

#: How an answer ended: one class per item, counted alike by ``score``, ``verify``, ``report``
#: and the explorer (the rule: docs/scoring.md, "Verdicts"). ``wrong_result``: ran, result
#: differs from gold; ``broken_gold``: ran, on an item whose gold gave no result when the data
#: was prepared (never compared); ``truncated``: cut off by the generation limit and not correct
#: (whatever its status); the rest are statuses.
VERDICTS = (
    "correct",
    "wrong_result",
    BROKEN_GOLD,
    "error",
    "timeout",
    "too_many_rows",
    "no_sql",
    "truncated",
    "crashed",
    MISSING,
)


def verdict(status: str, ex: float, truncated: bool, gold_status: str) -> str:
    """The :data:`VERDICTS` class of an answer with this ``status``, ``ex`` and truncation, on
    an item with this ``gold_status`` (a score dict's); :data:`EXCLUDED` for an item left out
    (in no verdict class: counted apart, as ``n_excluded``).

    >>> verdict("ok", 0, False, "ok"), verdict("ok", 0, False, "error")
    ('wrong_result', 'broken_gold')
    >>> verdict("timeout", 0, False, "error"), verdict("ok", 0, True, "error")
    ('timeout', 'truncated')
    """
    if status == EXCLUDED:
        return EXCLUDED
    if status == Status.OK.value and ex >= 0.5:
        return "correct"
    if truncated:
        return TRUNCATED
    if status != Status.OK.value:
        return status  # the answer's own failure: a fact about the answer, whatever gold did
    return BROKEN_GOLD if gold_broken(gold_status) else "wrong_result"


#: What to do about truncated outputs (printed by ``score``, shown by ``report``).
TRUNCATION_ADVICE = (
    "the output ended inside <think> or inside an unclosed code fence, i.e. at the generation "
    "limit; raise it with lm_eval --gen_kwargs max_gen_toks=N (task defaults: 512 for "
    "logiccat, 2048 for logiccat_cot, 4096 for tpcds; reasoning models need several thousand)"
)

#: What truncated outputs that end in a repetition loop mean (``Extraction.repetition_loop``).
LOOP_ADVICE = (
    "the output repeats the same text until the generation limit cuts it off; a larger "
    "max_gen_toks would not end the loop, so these items failed on the model, not the budget"
)

#: Why a refused answer was not run (``Extraction.problem`` -> the item's error message).
_REFUSED = {
    EXECUTABLE_COMMENT: (
        "executable comment (/*! ... */ or /*M! ... */): a MySQL-family server runs its text as "
        "code on some versions only, so the answer has no one meaning: refused, not run"
    ),
    MULTIPLE_STATEMENTS: "more than one statement: an answer must be exactly one query",
    NOT_READ_ONLY: "not a read-only query (SELECT or WITH ... SELECT): refused, not run",
}


@dataclass(frozen=True)
class Failure:
    """Why one item was not scored normally: its ``reason`` and ``error`` message."""

    reason: str
    error: str

    @classmethod
    def at(cls, stage: str, error: BaseException) -> Failure:
        """An exception at ``stage`` as ``"<stage>: <type>: <first line of message>"``."""
        lines = str(error).strip().splitlines()
        text = f"{stage}: {type(error).__name__}" + (f": {lines[0][:300]}" if lines else "")
        return cls(text, text)


ItemMetrics = Callable[[Item, "str | None"], Mapping[str, float]]


def execution_fault(error: BaseException) -> str:
    """The message of an unexpected exception while running SQL: the evaluation's fault."""
    lines = str(error).strip().splitlines()
    text = type(error).__name__ + (f": {lines[0][:300]}" if lines else "")
    return (
        f"executing the SQL failed inside the evaluation ({text}), not in a query: a fault of "
        "sqlbench-lmeval or of this machine, not of the model; run again, and if it repeats, "
        "report it with the command and this message"
    )


def gold_health(outcome: Outcome) -> str:
    """Judge a gold result: ok, empty, all_null, or the execution status when it did not run."""
    if outcome.status is not Status.OK:
        return outcome.status.value
    if not outcome.rows:
        return "empty"
    if all(value is None for row in outcome.rows for value in row):
        return "all_null"
    return GOLD_HEALTHY


def score_items(items: Sequence[Item], raw_outputs: Sequence[str | None], **options) -> list[dict]:
    """Score ``raw_outputs[i]`` as the answer to ``items[i]``; one result dict per item, in order.

    The score dicts of :func:`score_answers`, which documents the ``options``.
    """
    return score_items_with_outcomes(items, raw_outputs, **options).scores


@dataclass(frozen=True)
class Scored:
    """What :func:`score_answers` made, per answer in input order: the score dicts, the
    prediction outcomes (None: nothing ran), the gold outcomes, and whether gold's row order
    counts. Sampled scoring (``sampling``) compares predictions with each other."""

    scores: list[dict]
    predicted: list[Outcome | None]
    gold: list[Outcome]
    ordered: list[bool]


def score_items_with_outcomes(
    items: Sequence[Item],
    raw_outputs: Sequence[str | None],
    *,
    extracted: Sequence[tuple[Extraction | None, Failure | None]] | None = None,
    **options,
) -> Scored:
    """Score ``raw_outputs[i]`` as the answer to ``items[i]``, keeping the outcomes.

    ``extracted[i]``, when given, is :func:`extract_answer` of ``raw_outputs[i]``, already
    computed by the caller, so it is not done twice. ``options`` as for :func:`score_answers`.
    """
    if len(items) != len(raw_outputs):
        raise ValueError(f"{len(items)} items but {len(raw_outputs)} outputs")
    done = [None] * len(items) if extracted is None else extracted
    answers = zip(range(len(items)), raw_outputs, done, strict=True)
    return score_answers(items, answers, expected=len(items), **options)


#: One answer to score: (index of its item, raw output or None, ``extract_answer`` of the
#: output or None to have it extracted).
Answer = tuple[int, "str | None", "tuple[Extraction | None, Failure | None] | None"]


def score_answers(
    items: Sequence[Item],
    answers: Iterable[Answer],
    *,
    expected: int | None = None,
    limits: Limits = Limits(),
    workers: int | None = None,
    gold_cache: GoldCache | None = None,
    item_metrics: ItemMetrics | None = None,
    prompt_tail: str = "",
    transpile: Transpile | None = None,
    progress: bool = True,
    preview_rows: int = PREVIEW_ROWS,
) -> Scored:
    """Score each answer against its item's gold; :class:`Scored` lists in answer order.

    ``answers`` is consumed lazily, while the SQL of the answers before it runs (extraction
    overlaps execution); ``expected`` is about how many it yields. An item may have any number
    of answers (sampled scoring); its gold runs once.

    A raw output None marks a prediction that was never submitted: it is scored 0 with status
    ``missing`` and not executed. ``transpile`` translates predictions written in another
    dialect than the engine's (``Item.prediction_dialect``, see ``dialects``); a failed
    translation is status ``error`` with reason ``transpile_error``, not executed. Each score
    keeps the first ``preview_rows`` rows of gold's and the prediction's result
    (``gold_preview``, ``prediction_preview``; see ``preview``).

    Raises :class:`EvaluationUnavailable` when the evaluation itself cannot run (see the module
    docstring); nothing is scored then.
    """
    # Per answer, filled while ``answers`` is consumed (by the worker pool, below).
    indices: list[int] = []
    extractions: list[Extraction | None] = []
    failures: list[Failure | None] = []
    runs = []
    submitted: list[int] = []  # answers whose SQL runs

    def prediction_jobs() -> Iterator[Job]:
        for index, output, done in answers:
            item = items[index]
            if done is None:
                done = _extracted(output, prompt_tail, item.prompted_dialect)
            extraction, failure = done
            run = None
            if extraction is not None and failure is None:
                try:
                    run = engine_sql(item, extraction.sql, transpile)
                except Exception as error:  # a broken translator fails this item, not the run
                    failure = Failure.at("transpile", error)
            indices.append(index)
            extractions.append(extraction)
            failures.append(failure)
            runs.append(run)
            if run is not None and run.error is None:
                submitted.append(len(runs) - 1)
                yield Job(item.database, run.sql)

    gold_jobs = [Job(item.database, item.gold_sql) for item in items]
    pred_jobs = prediction_jobs()
    # One set of worker processes for every batch of this run (gold and answers, gold on the
    # perturbed copies, the answers there): each starts and opens its databases once.
    with WorkerPool(workers) as pool:
        try:
            # Gold's tie probes (``gold_ties``) run as more gold jobs of the same batch.
            ties = plan_batch(items, gold_jobs, limits, gold_cache)
            gold, predicted, ordered = _execute(
                items,
                ties.orders,
                gold_jobs + ties.probe_jobs,
                pred_jobs,
                limits,
                workers,
                gold_cache,
                progress,
                expected,
                pool,
            )
            gold, probes = gold[: len(items)], gold[len(items) :]
            gold = recheck_gold(items, gold, limits, workers, gold_cache, pool)
            gold_ties: list[GoldTies | None] = list(ties.finish(gold, probes))
        except EvaluationUnavailable:
            raise
        except Exception as error:
            # A fault of the evaluation while executing (the model's SQL failing is an outcome and
            # never raises): no item may score it, so the run stops.
            raise EvaluationUnavailable(execution_fault(error)) from error
        outcomes: list[Outcome | None] = [None] * len(runs)
        for i, outcome in zip(submitted, predicted, strict=True):
            outcomes[i] = outcome
        for i, run in enumerate(runs):
            if run is not None and run.error is not None:  # the translation failed: nothing ran
                outcomes[i] = Outcome(Status.ERROR, error=run.error)
        for i, failure in enumerate(failures):
            if failure is not None:  # refused or failed before running: nothing ran
                outcomes[i] = Outcome(Status.ERROR, error=failure.error)
        answer_gold = [gold[index] for index in indices]
        answer_ordered = [ordered[index] for index in indices]
        answered = [items[index] for index in indices]
        answer_ties = [gold_ties[index] for index in indices]
        parts = list(
            zip(
                answered,
                extractions,
                runs,
                outcomes,
                answer_gold,
                answer_ordered,
                answer_ties,
                failures,
                strict=True,
            )
        )
        scores = [_scored(*part, item_metrics) for part in parts]
        _judge_data_dependence(scores, parts, item_metrics, limits, workers, gold_cache, pool)
    for score, item, gold_outcome, outcome in zip(
        scores, answered, answer_gold, outcomes, strict=True
    ):
        score["gold_preview"] = result_preview(gold_outcome, preview_rows)
        score["prediction_preview"] = result_preview(outcome, preview_rows)
        if gold_outcome.status in UNFINISHED and item.gold_status in GOLD_RAN:
            # Only left by recheck_gold when the user asked to exclude such items.
            _exclude(score, gold_outcome)
    return Scored(scores, outcomes, answer_gold, answer_ordered)


def _judge_data_dependence(
    scores, parts, item_metrics, limits, workers, gold_cache, pool=None
) -> None:
    """Run the answers that matched gold (and named a table) once more on the perturbed copy
    of their database (``data_dependence``) and record the verdict in their scores; an answer
    whose result does not depend on the data is scored again, flagged ``reads_no_table``."""
    chosen = [
        index
        for index, score in enumerate(scores)
        if score[DATA_DEPENDENCE] is None
        and score["status"] == Status.OK.value
        and score[EX]
        and parts[index][7] is None  # no failure: the answer ran as it is
        and not surely_reads_no_table(parts[index][0].gold_sql, parts[index][0].dialect)
    ]
    if not chosen:
        return
    cases = []
    for index in chosen:
        item, _, run, pred, gold_outcome, ordered, *_ = parts[index]
        cases.append(Case(item, run.sql, pred, gold_outcome, ordered))
    try:
        verdicts = judge_all(cases, limits, workers, gold_cache, pool)
    except EvaluationUnavailable:
        raise
    except Exception as error:  # as for the first batch: the evaluation's fault, never a score
        raise EvaluationUnavailable(execution_fault(error)) from error
    for index, found in zip(chosen, verdicts, strict=True):
        if found in FLAGGED:  # its numbers change: scored again, with the verdict
            scores[index] = _scored(*parts[index], item_metrics, dependence=found)
        else:
            scores[index][DATA_DEPENDENCE] = found


def _exclude(score: dict, gold_outcome: Outcome) -> None:
    """Make ``score`` that of an item left out because its gold did not finish: status
    :data:`EXCLUDED`, no metric numbers (it is in no mean), the answer's own status kept."""
    score["prediction_status"] = score["status"]
    score["status"] = EXCLUDED
    score["reason"] = f"gold_{gold_outcome.status.value}"
    for name in [
        name
        for name, value in score.items()
        if isinstance(value, (int, float))
        and not isinstance(value, bool)
        and name != "id"
        and name not in LOGGED_NUMBERS
    ]:
        del score[name]


def failed_score(
    item_id: int, failure: Failure, category: str | None = None, engine: str | None = None
) -> dict:
    """The score dict of an item that could not be scored at all (e.g. its lm-eval document
    is unreadable): status ``error``, every number defined on ``engine`` 0, ``failure`` as
    reason and error."""
    return {
        "id": item_id,
        "category": category,
        "status": Status.ERROR.value,
        **dict.fromkeys(execution_metrics(engine), 0),
        "extracted_sql": None,
        "extraction": "failed",
        "executed_sql": None,
        "truncated": False,
        "repetition_loop": False,
        READS_NO_TABLE: False,
        DATA_DEPENDENCE: None,
        "error": failure.error,
        "reason": failure.reason,
        "gold_status": "unknown",
        "gold_error": None,
        "flags": [],
        "ordered": False,
        "comparison_version": COMPARISON_VERSION,
        WORK: None,
        GOLD_WORK: None,
        TIE_STATUS: None,
        ACCEPTABLE: None,
    }


def extract_answer(
    output: str | None, prompt_tail: str = "", dialect: str | None = None
) -> tuple[Extraction | None, Failure | None]:
    """The extraction of one output (None: never submitted) and why it cannot run, if so.

    ``dialect``: the one the answer was asked in (``Item.prompted_dialect``); its comments and
    strings decide where statements end (``extract``)."""
    return _extracted(output, prompt_tail, dialect)


def _extracted(
    output: str | None, prompt_tail: str, dialect: str | None
) -> tuple[Extraction | None, Failure | None]:
    if output is None:
        return None, None
    try:
        extraction = extract_sql(output, prompt_tail=prompt_tail, dialect=dialect)
    except Exception as error:  # e.g. a text sqlite3 or sqlglot chokes on
        return Extraction(None, "failed"), Failure.at("extract", error)
    if extraction.problem is not None:
        return extraction, Failure(extraction.problem, _REFUSED[extraction.problem])
    return extraction, None


def _execute(
    items, orders, gold_jobs, pred_jobs, limits, workers, gold_cache, progress, expected, pool=None
):
    """Gold outcomes and per-item gold order (in item order; ``orders`` holds those the tie
    plan already read, None for the others), prediction outcomes (in the order ``pred_jobs``
    yields them)."""
    # Gold and predictions run in one parallel batch, so a slow gold query overlaps the rest.
    # Once the last prediction job is made (the parent then mostly waits on the workers), a
    # thread parses gold for its ORDER BY; earlier it would slow the extraction that feeds them.
    description = "executing SQL" if progress else None
    with ThreadPoolExecutor(max_workers=1) as background:
        found = []
        pred_jobs = _then(
            pred_jobs, lambda: found.append(background.submit(_gold_orders, items, orders))
        )
        if gold_cache is not None:
            gold, predicted = gold_cache.run_together(
                gold_jobs,
                pred_jobs,
                limits,
                workers=workers,
                progress=description,
                expected=expected,
                pool=pool,
            )
        else:
            both = execute_many(
                itertools.chain(gold_jobs, pred_jobs),
                limits,
                workers=workers,
                progress=description,
                expected=None if expected is None else len(gold_jobs) + expected,
                pool=pool,
            )
            gold, predicted = both[: len(gold_jobs)], both[len(gold_jobs) :]
        return gold, predicted, found[0].result()


#: What the user can do about gold that does not finish.
UNFINISHED_ADVICE = (
    "give gold more time (--gold-timeout SECONDS; under lm_eval $SQLBENCH_LMEVAL_GOLD_TIMEOUT), "
    "run on a less loaded machine, or leave these items out of every mean "
    "(--exclude-unfinished-gold; under lm_eval $SQLBENCH_LMEVAL_EXCLUDE_UNFINISHED_GOLD=1)"
)


def recheck_gold(
    items: Sequence[Item],
    gold: Sequence[Outcome],
    limits: Limits = Limits(),
    workers: int | None = None,
    gold_cache: GoldCache | None = None,
    pool: WorkerPool | None = None,
) -> list[Outcome]:
    """``gold`` (outcomes of the items' gold, in item order), checked against what the build
    recorded. Two kinds of gold run once more, in fresh worker processes, under gold's own,
    longer time limit (``Limits.for_gold``: gold is the benchmark's, its cost is not the
    model's):

    - gold that ran at build time and did not finish now (``timeout``, ``crashed``). What
      finishes is stored in ``gold_cache`` under the key of ``limits`` (the next run reads
      it); what still does not finish raises :class:`EvaluationUnavailable` naming the items,
      unless ``limits.exclude_unfinished_gold``: then it stays unfinished, and scoring leaves
      those items out (status :data:`EXCLUDED`).
    - gold that ran at build time and errors now (also after the first rerun): the database is
      not the one the benchmark was built on (a table or database dropped, a file replaced, a
      server reloaded with other data). What still errors raises
      :class:`EvaluationUnavailable` naming the items.

    What runs now replaces the failed outcome. Gold that ran at build time and returns more
    rows than ``limits.max_rows`` now (a lower ``--max-rows`` than the build's) raises
    :class:`EvaluationUnavailable` too: no answer can be compared with a result cut off.
    Gold recorded as broken at build time (:func:`gold_broken`) is not run again: no answer is
    compared with it. ``pool``: the run's workers (``execute_many``); its idle ones are stopped
    first, so these runs too are on fresh processes."""
    rechecked = list(gold)
    unfinished = [
        index
        for index, (item, outcome) in enumerate(zip(items, gold, strict=True))
        if item.gold_status in GOLD_RAN and outcome.status in UNFINISHED
    ]
    if unfinished:
        jobs = [Job(items[index].database, items[index].gold_sql) for index in unfinished]
        gold_limits = limits.for_gold()
        again = _run_fresh(jobs, gold_limits, workers, pool)
        finished = [
            (job, outcome)
            for job, outcome in zip(jobs, again, strict=True)
            if outcome.status not in UNFINISHED
        ]
        if gold_cache is not None and finished:
            gold_cache.store([job for job, _ in finished], [o for _, o in finished], limits)
        still = [
            (items[index], outcome)
            for index, outcome in zip(unfinished, again, strict=True)
            if outcome.status in UNFINISHED
        ]
        if still and not limits.exclude_unfinished_gold:
            ids = ", ".join(str(item.id) for item, _ in still[:100])
            ids += ", ..." if len(still) > 100 else ""
            raise EvaluationUnavailable(
                f"gold of {len(still)} item(s) did not finish, also when run again on a fresh "
                f"worker with gold's own limit of {gold_limits.timeout_s:g} s (items {ids}; "
                f"{_some_items(still)}); gold is the benchmark's, so no answer is scored "
                f"against it: {UNFINISHED_ADVICE}"
            )
        for index, outcome in zip(unfinished, again, strict=True):
            rechecked[index] = outcome
    # Gold that finished only now is checked like the rest: it may error.
    broken = [
        index
        for index, (item, outcome) in enumerate(zip(items, rechecked, strict=True))
        if item.gold_status in GOLD_RAN and outcome.status is Status.ERROR
    ]
    if broken:
        jobs = [Job(items[index].database, items[index].gold_sql) for index in broken]
        again = _run_fresh(jobs, limits.for_gold(), workers, pool)
        failing = [
            (items[index], outcome)
            for index, outcome in zip(broken, again, strict=True)
            if outcome.status is Status.ERROR
        ]
        if failing:
            raise EvaluationUnavailable(
                f"gold that ran when the benchmark's data was prepared fails now "
                f"({_some_items(failing)}): the database is not the one the benchmark was built "
                "on (a table or database dropped or changed, another engine version?); "
                "prepare the data again"
            )
        for index, outcome in zip(broken, again, strict=True):
            rechecked[index] = outcome
    too_many = [
        (item, outcome)
        for item, outcome in zip(items, rechecked, strict=True)
        if item.gold_status in GOLD_RAN and outcome.status is Status.TOO_MANY_ROWS
    ]
    if too_many:
        raise EvaluationUnavailable(
            f"gold of {len(too_many)} item(s) returns more rows than the limit of "
            f"{limits.max_rows} (items {', '.join(str(item.id) for item, _ in too_many[:100])}"
            f"{', ...' if len(too_many) > 100 else ''}): gold is the benchmark's, so no answer "
            "is compared with a result cut off; raise the limit (--max-rows; under lm_eval "
            "$SQLBENCH_LMEVAL_MAX_ROWS)"
        )
    return rechecked


def _run_fresh(jobs, limits, workers, pool) -> list[Outcome]:
    if pool is not None:
        pool.renew()
    return execute_many(jobs, limits, workers=workers, pool=pool)


def _some_items(failing: Sequence[tuple[Item, Outcome]]) -> str:
    """The first items of ``failing`` with their errors, for a message."""
    shown = "; ".join(f"item {item.id}: {outcome.error}" for item, outcome in failing[:3])
    return shown + (f" and {len(failing) - 3} more" if len(failing) > 3 else "")


def _then(jobs: Iterable[Job], action: Callable[[], object]) -> Iterator[Job]:
    """``jobs``, then ``action()`` once they are all taken."""
    yield from jobs
    action()


def _gold_orders(items: Sequence[Item], known: Sequence[bool | None]) -> list[bool]:
    """Per item, whether its gold result has a defined row order (outermost ORDER BY): as the
    tie plan read it (``known``; a cold run parses gold once), else parsed here (gold whose
    tie record was stored, so not planned)."""
    memo: dict[tuple[str, str], bool] = {}
    orders = []
    for item, order in zip(items, known, strict=True):
        if order is None:
            key = (item.gold_sql, item.dialect)
            if key not in memo:
                try:
                    memo[key] = gold_order_matters(item.gold_sql, item.dialect)
                except Exception:  # unreadable gold: unordered, as for gold sqlglot cannot parse
                    memo[key] = False
            order = memo[key]
        orders.append(order)
    return orders


def _scored(
    item, extraction, run, pred, gold_outcome, ordered, ties, failure, item_metrics, dependence=None
) -> dict:
    """:func:`_score_one`, or, if scoring this item raised, the item as a scoring failure.
    ``dependence``: the ``data_dependence`` verdict of a run on the perturbed copy, if any."""
    gold = (gold_outcome, ordered, ties)
    try:
        return _score_one(item, extraction, run, pred, gold, failure, item_metrics, dependence)
    except _StageError as error:
        failure = error.failure
    except Exception as error:
        failure = Failure.at("score", error)
    failed = Outcome(Status.ERROR, error=failure.error)
    try:  # with the benchmark's numbers for "no SQL", so every item has the same metrics
        return _score_one(item, extraction, None, failed, gold, failure, item_metrics)
    except _StageError:  # those numbers cannot be had: the execution numbers alone
        return _score_one(item, extraction, None, failed, gold, failure, None)


class _StageError(Exception):
    """Carries the Failure of a stage inside :func:`_score_one` out to :func:`_scored`."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.reason)
        self.failure = failure


def _score_one(item, extraction, run, pred, gold, failure, item_metrics, dependence=None) -> dict:
    gold_outcome, ordered, ties = gold
    health = gold_health(gold_outcome)
    # A build-time verdict (e.g. non_select, or an error SQLite hides) outranks what ran now.
    gold_status = item.gold_status if item.gold_status != GOLD_HEALTHY else health
    result = {
        "id": item.id,
        "category": item.category,
        "status": MISSING if pred is None else pred.status.value,
        # Every per-answer metric (``metrics.COMPUTED``) defined on the item's engine: 0
        # unless the answer is compared.
        **dict.fromkeys(execution_metrics(item.database.engine), 0),
        "extracted_sql": None if extraction is None else extraction.sql,
        "extraction": MISSING if extraction is None else extraction.method,
        # The dialect the answer was asked in, and the SQL that ran (translated from it).
        "prediction_dialect": item.prompted_dialect,
        "executed_sql": None if run is None or failure is not None else run.sql,
        "truncated": extraction is not None and extraction.truncated,
        "repetition_loop": extraction is not None and extraction.repetition_loop,
        READS_NO_TABLE: False,
        DATA_DEPENDENCE: None,
        "error": None if pred is None else pred.error,
        "reason": MISSING if pred is None else None,
        "gold_status": gold_status,
        "gold_error": gold_outcome.error,
        "flags": list(item.flags),
        "ordered": ordered,
        # Carried per item so a sample log alone says which rules judged it.
        "comparison_version": COMPARISON_VERSION,
        # What r_ves divided: the engine's count of work (``Outcome.work``), never averaged.
        WORK: None if pred is None else pred.work,
        GOLD_WORK: gold_outcome.work,
        # Gold's ties (``gold_ties``): how its right answers were had, and how many there are
        # (a decimal string: it can exceed what a JSON reader's float holds).
        TIE_STATUS: None if ties is None else ties.status,
        ACCEPTABLE: None if ties is None else ties.acceptable,
    }
    if failure is not None:  # refused or failed: nothing to compare, every number stays 0
        refused_when_cut = result["truncated"] and failure.reason in _REFUSED
        # Cut off by the generation limit: that came first, whatever the fragment holds.
        result["reason"] = TRUNCATED if refused_when_cut else failure.reason
    elif pred is not None:
        try:
            verdict = _compared(item, pred, gold_outcome, ordered, ties)
        except Exception as error:
            raise _StageError(Failure.at("compare", error)) from error
        # Gold that is itself a calculation on constants (116 LogicCat items) reads no table
        # either: answering it the same way is no shortcut.
        asked = pred.status is Status.OK and not surely_reads_no_table(item.gold_sql, item.dialect)
        if asked and surely_reads_no_table(run.sql, item.dialect):
            dependence = NO_TABLE
        elif not asked:
            dependence = None
        constant = dependence in FLAGGED
        executed = Executed(
            item=item,
            sql=None if run is None else run.sql,
            predicted=pred,
            gold=gold_outcome,
            ordered=ordered,
            verdict=verdict,
            reads_no_table=constant,
            ties=ties,
        )
        result.update(compute_metrics(executed), reason=verdict.reason)
        if run is not None and run.error is not None:
            result["reason"] = TRANSPILE_ERROR
        elif result["truncated"] and not result[EX]:
            # The output was cut off by the generation limit: that, not the SQL, failed first.
            result["reason"] = TRUNCATED
        result[READS_NO_TABLE] = constant
        result[DATA_DEPENDENCE] = dependence
    if healthy_gold(gold_status, item.flags):
        # Carried by these items only: lm-eval's mean and ``aggregate``'s are over them.
        result[EX_ON_HEALTHY_GOLD] = result[EX]
    if item_metrics is not None:
        # A refused or failed answer has no SQL to measure: its numbers are those of no SQL.
        sql = None if extraction is None or failure is not None else extraction.sql
        try:
            values = item_metrics(item, sql)
        except Exception as error:
            raise _StageError(Failure.at("structure", error)) from error
        # Numbers become floats; anything else (e.g. ``parsed_dialect``) is logged as it is and
        # never averaged (``aggregate`` and ``process_results`` take numbers only).
        result.update(
            {
                name: float(value) if isinstance(value, (int, float)) else value
                for name, value in values.items()
            }
        )
    return result


def _compared(item, pred: Outcome, gold_outcome: Outcome, ordered: bool, ties) -> Verdict:
    """The answer compared with gold; on an item whose gold is broken (:func:`gold_broken` of
    its build-time status), not compared at all: every comparison 0, reason
    :data:`BROKEN_GOLD` for an answer that ran, else the answer's own failure."""
    if gold_broken(item.gold_status):
        ran = pred.status is Status.OK
        return Verdict(False, False, False, BROKEN_GOLD if ran else f"pred_{pred.status.value}")
    return tie_verdict(compare(pred, gold_outcome, ordered=ordered), pred, gold_outcome, ties)


def healthy_gold(gold_status: str, flags) -> bool:
    """Whether gold returned a non-empty, not all-NULL result that can be repeated (no
    RAND()): the items ``ex_on_healthy_gold`` is over."""
    return gold_status == GOLD_HEALTHY and not UNREPEATABLE_FLAGS & set(flags)


def aggregate(scores: Sequence[Mapping]) -> dict:
    """Means of every numeric per-item metric, EX per category, and counts that explain them.

    ``ex_on_healthy_gold`` restricts EX to items whose gold returned a non-empty, not all-NULL
    result that can be repeated (no RAND()): the number least disturbed by broken gold.
    Items :data:`EXCLUDED` (their gold did not finish) are in no mean and not in ``n``:
    ``n_excluded`` and ``excluded_ids`` count them.
    """
    excluded = [s["id"] for s in scores if s["status"] == EXCLUDED]
    if excluded:  # in no mean; counted apart (a run where nothing was excluded is unchanged)
        counted = [s for s in scores if s["status"] != EXCLUDED]
        metrics = aggregate(counted)
        metrics["n_excluded"] = len(excluded)
        metrics["excluded_ids"] = excluded
        metrics["status_counts"] = dict(Counter(s["status"] for s in scores))
        metrics["gold_status_counts"] = dict(Counter(s["gold_status"] for s in scores))
        metrics["reason_counts"] = dict(Counter(s["reason"] for s in scores))
        metrics.setdefault("verdict_counts", {})[EXCLUDED] = len(excluded)
        return metrics
    if not scores:
        return {"n": 0}
    numeric = [
        name
        for name, value in scores[0].items()
        if isinstance(value, (int, float))
        and not isinstance(value, bool)
        and name != "id"
        and name not in LOGGED_NUMBERS
    ]
    metrics: dict = {"n": len(scores)}
    for name in numeric:
        metrics[name] = fmean(float(s[name]) for s in scores if name in s)
    for category in sorted({s["category"] for s in scores if s.get("category")}):
        in_category = [s for s in scores if s.get("category") == category]
        metrics[f"ex_{category}"] = fmean(s[EX] for s in in_category)
        metrics[f"n_{category}"] = len(in_category)
    healthy = [s for s in scores if healthy_gold(s["gold_status"], s["flags"])]
    metrics["n_healthy_gold"] = len(healthy)
    metrics[EX_ON_HEALTHY_GOLD] = fmean(s[EX] for s in healthy) if healthy else 0.0
    metrics["status_counts"] = dict(Counter(s["status"] for s in scores))
    metrics["gold_status_counts"] = dict(Counter(s["gold_status"] for s in scores))
    metrics["reason_counts"] = dict(Counter(s["reason"] for s in scores))
    metrics["verdict_counts"] = dict(
        Counter(
            verdict(s["status"], s[EX], bool(s.get("truncated")), s["gold_status"]) for s in scores
        )
    )
    metrics["n_truncated"] = sum(1 for s in scores if s.get("truncated"))
    metrics["n_truncated_loops"] = sum(1 for s in scores if s.get("repetition_loop"))
    metrics["n_reads_no_table"] = sum(1 for s in scores if s.get(READS_NO_TABLE))
    return metrics


__all__ = [
    "COMPARISON_VERSION",
    "BROKEN_GOLD",
    "EXCLUDED",
    "LOOP_ADVICE",
    "READS_NO_TABLE",
    "TRUNCATED",
    "TRUNCATION_ADVICE",
    "VERDICTS",
    "Failure",
    "Item",
    "failed_score",
    "aggregate",
    "extract_answer",
    "gold_health",
    "Scored",
    "score_answers",
    "score_items",
    "score_items_with_outcomes",
    "recheck_gold",
    "verdict",
]
