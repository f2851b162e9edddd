"""The suspect-gold audit across scored runs: items where no run matches gold while at least
``agree`` runs of different models return one and the same other result (each run's answer run
again in the sandbox and compared by the ``ex`` rule), with gold's result and theirs side by side,
and the items whose gold is unhealthy. Advice to the user and to the benchmark's authors: it
changes no score (the rule and its defaults: docs/gold-audit.md#the-suspect-gold-audit).

>>> agreeing([("a", "m1", 1), ("b", "m2", 1), ("c", "m2", 1), ("d", "m3", 2)], same=int.__eq__)
[(['a', 'b', 'c'], ['m1', 'm2'], 1), (['d'], ['m3'], 2)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlbench_lmeval.execution import GoldCache, Job, Limits, Status, execute_many
from sqlbench_lmeval.offline import task_items, task_target
from sqlbench_lmeval.paths import gold_cache_dir
from sqlbench_lmeval.report.metadata import run_metadata
from sqlbench_lmeval.report.runs import Run
from sqlbench_lmeval.scoring.compare import gold_order_matters, same_result
from sqlbench_lmeval.scoring.item import EXCLUDED, GOLD_HEALTHY
from sqlbench_lmeval.scoring.preview import result_preview
from sqlbench_lmeval.sql.extract import extract_sql
from sqlbench_lmeval.vocabulary import ScoreStatus

#: Runs of different models that must return one and the same other result (default).
AGREE = 3
#: Statuses of an item that was not answered (not counted among the runs that answered it).
NOT_ANSWERED = frozenset({ScoreStatus.MISSING, EXCLUDED})


def audit_gold(
    runs: Sequence[Run],
    *,
    agree: int = AGREE,
    cache_dir=None,
    limits: Limits = Limits(),
    workers: int | None = None,
    progress: bool = True,
    **options,
) -> dict:
    """The audit of ``runs`` (as ``report`` reads them): a JSON-ready dict whose ``suspect``
    lists the items, each with its ``id``; ``options`` choose the data as for ``score``
    (``source``, ``url``, ...)."""
    if agree < 2:
        raise ValueError("agree must be at least 2: one run alone is no evidence against gold")
    model_of = {run.name: run_metadata(run).model_args or run.name for run in runs}
    suspect, unhealthy, tasks = [], {}, []
    for name in sorted({task.name for run in runs for task in run.tasks}):
        answered = {}  # id -> [(run name, ScoredItem)]
        engines = set()
        for run in runs:
            for task in run.tasks:
                if task.name != name:
                    continue
                engines.add(task.engine)
                for scored in task.items:
                    if scored.status not in NOT_ANSWERED:
                        answered.setdefault(scored.id, []).append((run.name, scored))
                    if scored.gold_status != GOLD_HEALTHY:
                        unhealthy[(name, scored.id)] = scored
        candidates = {
            item_id: pairs
            for item_id, pairs in answered.items()
            if not any(scored.ex == 1 for _, scored in pairs)
            and len({model_of[run] for run, scored in pairs if scored.status == Status.OK}) >= agree
        }
        tasks.append({"task": name, "items_answered": len(answered), "candidates": len(candidates)})
        if candidates:
            engine = next(iter(engines - {None}), None) if len(engines - {None}) == 1 else None
            suspect += _suspects_of_task(
                name,
                candidates,
                model_of,
                agree,
                engine,
                cache_dir,
                limits,
                workers,
                progress,
                options,
            )
    return {
        "agree": agree,
        "runs": [{"name": run.name, "model": model_of[run.name]} for run in runs],
        "tasks": tasks,
        "suspect": suspect,
        "unhealthy": [
            {
                "task": name,
                "id": item_id,
                "gold_status": scored.gold_status,
                "flags": list(scored.flags),
                "gold_error": scored.details.get("gold_error"),
            }
            for (name, item_id), scored in sorted(unhealthy.items())
        ],
    }


def _suspects_of_task(
    name, candidates, model_of, agree, engine, cache_dir, limits, workers, progress, options
) -> list[dict]:
    """The suspect items among ``candidates`` of task ``name``: each answer that ran is run
    again, the results grouped by the ``ex`` rule."""
    benchmark, task = task_target(name)
    data = {key: value for key, value in {"engine": engine, **options}.items() if value is not None}
    items = {item.id: item for item in task_items(benchmark, task, cache_dir=cache_dir, **data)}
    chosen = [item_id for item_id in sorted(candidates) if item_id in items]
    answers = []  # (item id, run name, SQL)
    for item_id in chosen:
        item = items[item_id]
        for run, scored in candidates[item_id]:
            sql = scored.details.get("executed_sql") or scored.extracted_sql
            # The statement rule again: a score file is the submitter's, and may say anything.
            extraction = extract_sql(sql or "", dialect=item.dialect)
            if scored.status == Status.OK and extraction.sql and extraction.problem is None:
                answers.append((item_id, run, extraction.sql))
    gold_jobs = [Job(items[i].database, items[i].gold_sql) for i in chosen]
    cache = GoldCache(gold_cache_dir(cache_dir))
    gold = dict(zip(chosen, cache.run(gold_jobs, limits, workers=workers), strict=True))
    description = f"{name}: answers against gold" if progress else None
    jobs = [Job(items[i].database, sql) for i, _, sql in answers]
    ran = execute_many(jobs, limits, workers=workers, progress=description)
    results: dict[int, list] = {}
    for (item_id, run, sql), outcome in zip(answers, ran, strict=True):
        if outcome.status is Status.OK:
            results.setdefault(item_id, []).append((run, model_of[run], (outcome, sql)))
    found = []
    for item_id, entries in sorted(results.items()):
        item = items[item_id]
        ordered = gold_order_matters(item.gold_sql, item.dialect)

        def same(a, b, ordered=ordered) -> bool:
            return same_result(a[0], b[0], ordered=ordered)

        groups = agreeing(entries, same=same)
        runs, models, (outcome, sql) = groups[0]
        if len(models) < agree or same_result(outcome, gold[item_id], ordered=ordered):
            continue
        found.append(
            {
                "task": name,
                "id": item_id,
                "question": item.question,
                "gold_sql": item.gold_sql,
                "gold_status": item.gold_status,
                "gold_result": result_preview(gold[item_id]),
                "gold_error": gold[item_id].error,
                "agreed_result": result_preview(outcome),
                "agreeing_runs": runs,
                "agreeing_models": len(models),
                "runs_answered": len(candidates[item_id]),
                "example_sql": sql,
            }
        )
    return found


def agreeing(entries: Sequence[tuple], same: Callable) -> list[tuple[list, list, object]]:
    """``entries`` of (run, model, result) grouped by ``same`` results: (runs, distinct models,
    the group's first result) per group, the groups with the most models first (ties: in the
    order their first entry came)."""
    groups: list[tuple[list, list, object]] = []
    for run, model, result in entries:
        for runs, models, first in groups:
            if same(result, first):
                runs.append(run)
                if model not in models:
                    models.append(model)
                break
        else:
            groups.append(([run], [model], result))
    return sorted(groups, key=lambda group: -len(group[1]))


__all__ = ["AGREE", "agreeing", "audit_gold"]
