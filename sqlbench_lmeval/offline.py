"""Offline work on a benchmark: scoring predictions files (``sqlbench-lmeval score``: outputs
made outside lm-eval, leaderboard submissions, a logged run's answers) through the lm-eval
filter's own path (``scoring.scorer.Scorer``; retried answers through
``retry_envelope.score_with_retries``), so the numbers are the same, and writing every gold
result (``sqlbench-lmeval gold``); the input lines, what is refused and what is written:
docs/score.md (retried answers: docs/repair.md#scoring-retried-answers).

>>> import tempfile
>>> path = Path(tempfile.mkdtemp()) / "predictions.jsonl"
>>> _ = path.write_text('{"id": 7, "attempts": ["SELECT x", {"output": "SELECT y"}]}\\n')
>>> read_predictions(path)[7]  # the repair model's envelope
'{"sqlbench_repair": 1, "attempts": [{"output": "SELECT x"}, {"output": "SELECT y"}]}'
>>> _ = path.write_text('{"id": 7, "prediction": "SELECT 1"}\\n{"id": 7, "prediction": "SELECT 2"}')
>>> read_predictions(path, samples=True)  # score --samples: the lines of one id join
{7: ['SELECT 1', 'SELECT 2']}
>>> read_predictions(path)
Traceback (most recent call last):
...
sqlbench_lmeval.errors.UserError: ...predictions.jsonl:2: id 7 appears more than once
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from sqlbench_lmeval import __version__, benchmarks
from sqlbench_lmeval.benchmarks import Benchmark, task_module
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.execution import GoldCache, Job, Limits, engines, execute_many
from sqlbench_lmeval.jsonl import read_objects
from sqlbench_lmeval.lmeval.task_specs import DATA_OPTIONS, task_groups, task_spec
from sqlbench_lmeval.paths import gold_cache_dir, shared_path
from sqlbench_lmeval.scoring.answer import gold_health
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION
from sqlbench_lmeval.scoring.cost import unwrap, unwrap_all
from sqlbench_lmeval.scoring.item import GOLD_HEALTHY, Item
from sqlbench_lmeval.scoring.metrics import R_VES_TIME
from sqlbench_lmeval.scoring.preview import PREVIEW_ROWS
from sqlbench_lmeval.scoring.retry_envelope import attempts_of, from_attempts
from sqlbench_lmeval.scoring.scorer import Scorer, fewer_collections
from sqlbench_lmeval.scoring.stages.recheck_gold import recheck_gold
from sqlbench_lmeval.scoring.timed_efficiency import timed_r_ves
from sqlbench_lmeval.scoring.verdicts import aggregate
from sqlbench_lmeval.vocabulary import GoldStatus


def read_predictions(path: str | Path, *, samples: bool = False, name: str | None = None) -> dict:
    """``{id: prediction}`` from a JSONL file; a UserError names the first bad line.

    With ``samples`` (several sampled answers per id, ``score --samples``): ``{id: [outputs]}``,
    where a line's ``prediction`` is one output or a list of them, and further lines of the
    same id add theirs, in file order. ``name``: the benchmark or task the file is scored as;
    a line that records another ``task`` (the answers lm-eval's filter saved) is refused.
    """
    if samples:
        return _read_sampled_predictions(path, name)
    predictions: dict[int, str] = {}
    lines = read_objects(path, "predictions", required=("id",), one_of=("prediction", "attempts"))
    for where, record in _of_task(lines, name):
        item_id, prediction = _item_id(where, record["id"]), _single_prediction(where, record)
        if item_id in predictions:
            raise UserError(f"{where}: id {item_id} appears more than once")
        predictions[item_id] = prediction
    if not predictions:
        raise UserError(f"{path}: no predictions")
    return predictions


def _single_prediction(where: str, record: dict) -> str:
    """A line's answer: its ``prediction`` text, or the envelope of its ``attempts``."""
    if "attempts" not in record:
        prediction = record["prediction"]
        if not isinstance(prediction, str):
            kind = type(prediction).__name__
            raise UserError(f"{where}: prediction must be a string, got {kind}")
        return prediction
    if "prediction" in record:
        raise UserError(f"{where}: give prediction or attempts, not both")
    envelope = from_attempts(record["attempts"])
    if envelope is None:
        raise UserError(
            f'{where}: attempts must be a non-empty list of output strings or {{"output": '
            "<string>}} objects, in the order they were made"
        )
    return envelope


def _of_task(lines, name: str | None):
    """``lines``, refused at the first that records a ``task`` other than ``name``."""
    for where, record in lines:
        task = record.get("task")
        if name is not None and task is not None and task != name:
            raise UserError(
                f"{where}: the answers of task {task!r}, not of {name!r}: score them with "
                f"`sqlbench-lmeval score {task} ...` (another name scores other items)"
            )
        yield where, record


def _read_sampled_predictions(path: str | Path, name: str | None) -> dict[int, list[str]]:
    predictions: dict[int, list[str]] = {}
    lines = read_objects(path, "predictions", required=("id", "prediction"))
    for where, record in _of_task(lines, name):
        item_id, prediction = _item_id(where, record["id"]), record["prediction"]
        outputs = prediction if isinstance(prediction, list) else [prediction]
        if not outputs or not all(isinstance(output, str) for output in outputs):
            raise UserError(f"{where}: prediction must be a string or a non-empty list of strings")
        predictions.setdefault(item_id, []).extend(outputs)
    if not predictions:
        raise UserError(f"{path}: no predictions")
    counts = sorted({len(outputs) for outputs in predictions.values()})
    if len(counts) > 1:
        raise UserError(
            f"{path}: every id needs the same number of predictions (pass@k and voting compare "
            f"items), found {', '.join(map(str, counts))}"
        )
    return predictions


def _item_id(where: str, item_id) -> int:
    """The id of a predictions line as an integer; a UserError names the line otherwise."""
    if isinstance(item_id, bool) or not isinstance(item_id, (int, str)):
        raise UserError(f"{where}: id must be an integer, got {item_id!r}")
    try:
        return int(item_id)
    except ValueError as error:
        raise UserError(f"{where}: id must be an integer, got {item_id!r}") from error


def score_predictions(
    benchmark: str,
    predictions: Mapping[int, str],
    *,
    cache_dir=None,
    limits: Limits = Limits(),
    workers: int | None = None,
    progress: bool = True,
    preview_rows: int = PREVIEW_ROWS,
    task: str | None = None,
    ids: Iterable[int] | None = None,
    r_ves_time: int | None = None,
    **options,
) -> dict:
    """Score ``{id: raw output}`` against the items of ``benchmark``; the output JSON object.

    ``task`` names one of our tasks (``logiccat_mini``, ``tpcds_postgres``, ...): its items and
    prompted dialect, and its name in the output (default: the whole benchmark). ``ids``
    restricts the items further, e.g. to those an lm-eval ``--limit`` run logged; the output
    then scores exactly those. ``options`` choose the data and the prompted dialect, as for
    ``load_items`` (``source``, ``scale_factor``, ``dialect``, ...). ``r_ves_time``: also
    BIRD's time-based R-VES with that many timed iterations per correct answer
    (``scoring.timed_efficiency``; single answers only).
    """
    chosen = benchmarks.get(benchmark)
    options = {name: value for name, value in options.items() if value is not None}
    items, dataset_version = _items_and_version(benchmark, task, cache_dir, options)
    if ids is not None:
        wanted = set(ids)
        items = [item for item in items if item.id in wanted]
    name = task or benchmark
    known = {item.id for item in items}
    unknown = sorted(set(predictions) - known)
    if unknown:
        shown = ", ".join(map(str, unknown[:20])) + (" ..." if len(unknown) > 20 else "")
        raise UserError(f"{len(unknown)} prediction id(s) are not {name} items: {shown}")
    sampled = any(isinstance(outputs, list) for outputs in predictions.values())
    if r_ves_time is not None and sampled:
        raise UserError("--r-ves-time times single answers; it cannot be used with --samples")
    scorer = scorer_for(
        chosen,
        cache_dir,
        limits=limits,
        workers=workers,
        progress=progress,
        preview_rows=preview_rows,
    )
    outputs = [predictions.get(item.id) for item in items]
    # Fewer collections until the numbers are made, not only while the run scores: the results
    # are held until then, and each full collection walks them all.
    with fewer_collections():
        scores = score_outputs(scorer, items, outputs, cache_dir)
        if r_ves_time is not None:
            timed = timed_r_ves(items, scores, r_ves_time, limits, workers, progress)
            for score, value in zip(scores, timed, strict=True):
                score[R_VES_TIME] = value
        metrics = run_metrics(chosen, scores, sampled)
    if task is not None:
        options = {**task_spec(task).data_options(), **options}
    return {
        "task": name,
        "comparison_version": COMPARISON_VERSION,
        "dataset_version": dataset_version,
        "prediction_dialect": items[0].prompted_dialect if items else None,
        "engine": items[0].database.engine if items else None,
        "sqlbench_lmeval_version": __version__,
        "limits": {"timeout_s": limits.timeout_s, "max_rows": limits.max_rows},
        # What the items' ``work`` and ``gold_work`` count (None: the engine counts none).
        "work_unit": engines.get(items[0].database.engine).work_unit if items else None,
        "r_ves_time_iterations": r_ves_time,
        # The options that chose the data (as lm-eval's --metadata would), for `verify`.
        "data_options": {
            name: options[name] for name in DATA_OPTIONS if options.get(name) is not None
        },
        "missing_ids": sorted(known - set(predictions)),
        **_gold_note(dataset_version, benchmark),
        "metrics": metrics,
        "items": scores,
    }


def _gold_note(dataset_version: str | None, benchmark: str) -> dict:
    """``{"gold_note": ...}`` for a test set of ``benchmark`` whose gold its board hides
    (``benchmarks.gold_note``), else nothing. Only its own board is asked: asking every
    benchmark's would import the others (TPC-DS's, with DuckDB: ~70 ms of a LogicCat score)."""
    note = benchmarks.gold_note(dataset_version, among=(benchmark,))
    return {} if note is None else {"gold_note": note}


def group_predictions(
    group: str, predictions: Mapping[int, object], *, cache_dir=None, **options
) -> dict[str, dict]:
    """``{id: prediction}`` of lm-eval group ``group`` of ours split into its tasks, as
    :func:`score_group` takes them (``score logiccat_test PREDICTIONS.jsonl``); an id that is no
    item of the group is a UserError, so no answer is scored as another set's."""
    members = task_groups()[group]
    parts: dict[str, dict] = {}
    for member in members:
        spec = task_spec(member)
        ids = {
            item.id for item in task_items(spec.benchmark, member, cache_dir=cache_dir, **options)
        }
        parts[member] = {i: p for i, p in predictions.items() if i in ids}
    unknown = sorted(set(predictions) - {i for part in parts.values() for i in part})
    if unknown:
        shown = ", ".join(map(str, unknown[:20])) + (" ..." if len(unknown) > 20 else "")
        raise UserError(f"{len(unknown)} prediction id(s) are not {group} items: {shown}")
    return parts


def score_group(
    group: str, parts: Mapping[str, Mapping], *, every_item: bool = False, **options
) -> dict:
    """Score the tasks of the lm-eval group ``group`` (``logiccat``: its four categories) as
    one run logged them: ``parts`` is ``{task: {id: raw output}}``. Each task is scored as
    ``score_predictions(..., task=task, ids=its logged ids)`` scores it alone; ``options`` as
    for :func:`score_predictions`. ``every_item``: each task's items are all of its items,
    those ``parts`` lacks scoring 0 (a predictions file), not only the logged ones.

    One score dict, as lm-eval tables a group: ``task`` is the group, ``metrics`` are over
    the items of every task (a mean over all items is the size-weighted mean of the tasks',
    lm-eval's group row), ``tasks`` holds each task's ``metrics`` (the rows under it), and
    ``items`` lists every task's items, in the group's order of its tasks.
    """
    results = {
        task: score_predictions(
            task_spec(task).benchmark,
            predictions,
            task=task,
            ids=None if every_item else list(predictions),
            **options,
        )
        for task, predictions in parts.items()
    }
    first = next(iter(results.values()))
    # What names the data and how it ran is the same for the tasks of one group run.
    shared = ("dataset_version", "prediction_dialect", "engine", "limits", "data_options")
    for task, result in results.items():
        differing = [key for key in shared if result[key] != first[key]]
        if differing:
            raise UserError(
                f"the tasks of group {group} differ in {', '.join(differing)} "
                f"({first['task']} and {task}): score each task on its own"
            )
    scores = [score for result in results.values() for score in result["items"]]
    sampled = any(isinstance(output, list) for p in parts.values() for output in p.values())
    metrics = run_metrics(benchmarks.get(task_spec(first["task"]).benchmark), scores, sampled)
    return {
        **first,
        "task": group,
        "missing_ids": sorted(i for result in results.values() for i in result["missing_ids"]),
        "metrics": metrics,
        "tasks": {task: result["metrics"] for task, result in results.items()},
        "items": scores,
    }


def run_metrics(benchmark: Benchmark, scores: Sequence[Mapping], sampled: bool) -> dict:
    """The run's numbers: :func:`aggregate` of ``scores`` and the benchmark's own summaries
    (``aggregate_metrics``; TPC-DS: means over parseable predictions, Table 1 ratios), which a
    sampled run has none of: their per-item numbers are one answer's."""
    metrics = aggregate(scores)
    if benchmark.aggregate_metrics is not None and not sampled:
        metrics.update(benchmark.aggregate_metrics(scores))
    return metrics


def task_target(name: str) -> tuple[str, str | None]:
    """(benchmark, task) that ``name`` stands for: a benchmark (``logiccat``: all its items,
    task None) or one of our tasks (a UserError names ours otherwise).

    >>> task_target("logiccat"), task_target("logiccat_mini")
    (('logiccat', None), ('logiccat', 'logiccat_mini'))
    """
    if name in benchmarks.NAMES:
        return name, None
    return task_spec(name).benchmark, name


def task_items(benchmark: str, task: str | None = None, *, cache_dir=None, **options) -> list:
    """The items of ``task`` (one of our tasks of ``benchmark``; None: all of ``benchmark``),
    built from the documents the task gives lm-eval, so ids, gold and prompted dialect are the
    task's own. ``options`` as for ``load_items``; the task's own dialect unless one is given."""
    return _items_and_version(benchmark, task, cache_dir, options, version=False)[0]


def _items_and_version(benchmark, task, cache_dir, options, version: bool = True):
    """(:func:`task_items`, the dataset version its documents name: a task on a split of the
    data names the split, ``logiccat.split.version_with_split``); the version is None unless
    ``version``."""
    chosen = benchmarks.get(benchmark)
    if task is None:
        items = chosen.load_items(cache_dir=cache_dir, **options)
        return items, chosen.dataset_version(cache_dir=cache_dir, **options) if version else None
    spec = task_spec(task)
    if spec.benchmark != benchmark:
        raise UserError(f"task {task} belongs to {spec.benchmark}, not {benchmark}")
    docs = task_documents(spec, cache_dir=cache_dir, **options)
    named = docs[0].get("dataset_version") if docs else None
    if version and named is None:
        named = chosen.dataset_version(cache_dir=cache_dir, **{**spec.data_options(), **options})
    return [Item.from_doc(doc) for doc in docs], named


def task_documents(spec, *, cache_dir=None, **options) -> list[dict]:
    """The documents lm-eval gets for the task ``spec`` (``task_specs.TaskSpec``)."""
    documents = task_module(spec.benchmark).documents
    chosen = {**spec.data_options(), **{k: v for k, v in options.items() if v is not None}}
    return documents(cache_dir=cache_dir, **spec.dataset_kwargs, **chosen)


def scorer_for(benchmark: Benchmark, cache_dir=None, **settings) -> Scorer:
    """The :class:`Scorer` of ``benchmark``'s answers, gold cached under ``cache_dir``;
    ``settings`` are the Scorer's others (``limits``, ``workers``, ``progress``,
    ``preview_rows``)."""
    cache = GoldCache(gold_cache_dir(cache_dir))
    return Scorer(gold_cache=cache, hooks=benchmark.scoring_hooks(), **settings)


def score_outputs(scorer: Scorer, items, outputs, cache_dir=None) -> list[dict]:
    """One score dict per item of ``items`` (in order) for ``outputs[i]``, the answer to
    ``items[i]``: a raw output, a retried answer's envelope, a list of sampled outputs, or None
    (status ``missing``). Items of several tasks that share ids can be scored in one batch (one
    worker pool). Each keeps its raw output, question, gold SQL and database (its path relative
    to ``cache_dir``), so an item explains itself (and the explorer can show it)."""
    if any(isinstance(output, list) for output in outputs):  # read_predictions(samples=True)
        n = len(next(output for output in outputs if isinstance(output, list)))
        outputs = [[None] * n if output is None else output for output in outputs]
        scores = scorer.score_samples(items, outputs)
    else:  # a retried answer (an envelope) gives every item of the run retry numbers
        retried = any(attempts_of(output) is not None for output in outputs)
        scores = scorer.score(items, list(outputs), retried_run=retried)
    # Once per database, not per item: each call resolves two paths on disk.
    public = [item.database.public_path for item in items]
    shown = {path: shared_path(path, cache_dir) for path in set(public)}
    return [
        {
            **score,
            "raw_output": _logged_output(output),
            "question": item.question,
            "gold_sql": item.gold_sql,
            "db_path": shown[path],
        }
        for item, path, output, score in zip(items, public, outputs, scores, strict=True)
    ]


def _logged_output(output):
    """An item's raw output as kept in its score: a metered answer's is its base model's (what
    it cost is in the score's own fields, ``scoring.cost``), so metering changes no field."""
    if isinstance(output, list):
        return unwrap_all(output)[0]
    return unwrap(output)[0]


def gold_lines(
    benchmark: str,
    *,
    cache_dir=None,
    limits: Limits = Limits(),
    workers: int | None = None,
    progress: bool = True,
    **options,
) -> list[dict]:
    """Every gold result of ``benchmark`` (see :func:`gold_result_lines`), through the cache.

    ``options`` choose the data, as for ``load_items`` (``source``, ``scale_factor``, ...).
    """
    items = benchmarks.get(benchmark).load_items(cache_dir=cache_dir, **options)
    cache = GoldCache(gold_cache_dir(cache_dir))
    return gold_result_lines(
        items, gold_cache=cache, limits=limits, workers=workers, progress=progress
    )


def gold_result_lines(
    items,
    *,
    gold_cache: GoldCache | None = None,
    limits: Limits = Limits(),
    workers: int | None = None,
    progress: bool = True,
) -> list[dict]:
    """One JSON-ready dict per item: its gold query run, for audits.

    Keys: ``id, db_id, question, gold_sql, gold_status, flags, status, error, columns, rows``.
    Rows are in the engine's lossless JSON form (plain JSON values; tagged objects for values
    JSON cannot hold exactly). Gold that is not a query (``non_select``) is not run (status
    ``not_run``). ``gold_status`` is judged as in scoring: a build-time verdict first, else this
    run's result.
    Raises ``EvaluationUnavailable`` as scoring does (a database that cannot be opened, gold
    recorded as running at build time that errors or does not finish now:
    ``scoring.stages.recheck_gold``).
    """
    runnable = [item for item in items if item.gold_status != GoldStatus.NON_SELECT]
    jobs = [Job(item.database, item.gold_sql) for item in runnable]
    description = "gold SQL" if progress else None
    run = gold_cache.run if gold_cache is not None else execute_many
    ran = run(jobs, limits, workers=workers, progress=description)
    ran = recheck_gold(runnable, ran, limits, workers, gold_cache)
    outcomes = dict(zip((item.id for item in runnable), ran, strict=True))
    lines = []
    for item in items:
        outcome = outcomes.get(item.id)
        data = outcome.to_json() if outcome is not None else {}
        health = gold_health(outcome) if outcome is not None else item.gold_status
        lines.append(
            {
                "id": item.id,
                "db_id": item.database.name,
                "question": item.question,
                "gold_sql": item.gold_sql,
                "gold_status": item.gold_status if item.gold_status != GOLD_HEALTHY else health,
                "flags": list(item.flags),
                "status": outcome.status.value if outcome is not None else "not_run",
                "error": outcome.error if outcome is not None else None,
                "columns": data.get("columns", []),
                "rows": data.get("rows", []),
            }
        )
    return lines
