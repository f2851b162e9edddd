"""Full LogicCat runs as lm-eval writes them, for the verify and leaderboard benchmarks.

``write_logiccat_runs(folder, cache, count)`` writes ``count`` model folders of a
``--tasks logiccat`` run (the four category tasks, 4,036 items) with lm-eval's own
``EvaluationTracker`` (the code ``lm_eval --log_samples`` runs): our documents, the prompts the
tasks build, raw outputs, our filter's score dicts in ``filtered_resps`` and the numbers beside
them, and a results file with each task's config, version and means. Model ``k`` answers each
item with its gold query, a wrong query or prose, chosen from a hash of (k, item id), so every
run's outputs differ. Each distinct (item, answer) is scored once, through the scoring path the
filter uses, and the gold cache is warm afterwards.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

TASKS = ("physical", "mathematical", "commonsense", "hypothetical")
WRONG = "```sql\nSELECT 'not the answer' AS x, 42 AS y\n```"
PROSE = "I would need to know more before answering."


def _kind(model: int, item_id: int) -> int:
    return hashlib.sha256(f"{model}:{item_id}".encode()).digest()[0] % 3


def write_logiccat_runs(folder: Path, cache: Path, count: int, workers: int | None = None):
    """``count`` lm-eval model folders under ``folder``; their paths."""
    from lm_eval.loggers import EvaluationTracker

    from sqlbench_lmeval import benchmarks
    from sqlbench_lmeval.lmeval.hooks import process_results
    from sqlbench_lmeval.lmeval.task_specs import task_spec
    from sqlbench_lmeval.offline import score_outputs, scorer_for, task_documents
    from sqlbench_lmeval.scoring.item import Item

    scorer = scorer_for(benchmarks.get("logiccat"), cache, workers=workers, progress=False)
    per_task = {}
    for category in TASKS:
        spec = task_spec(f"logiccat_{category}")
        docs = task_documents(spec, cache_dir=cache)
        items = [Item.from_doc(doc) for doc in docs]
        answers = [f"```sql\n{item.gold_sql}\n```" for item in items]
        # Each kind of answer scored once per item; a model's claims are looked up.
        scored = [
            score_outputs(scorer, items, texts, cache)
            for texts in (answers, [WRONG] * len(items), [PROSE] * len(items))
        ]
        prompt = spec.prompt_function()
        per_task[spec.name] = (spec, docs, [prompt(doc) for doc in docs], scored)
    paths = []
    for model in range(count):
        name = f"model-{model:02d}"
        tracker = EvaluationTracker(output_path=str(folder / name))
        tracker.general_config_tracker.log_experiment_args(
            model_source="local-completions",
            model_args=f"model={name},base_url=http://127.0.0.1:1/v1/completions",
            system_instruction=None,
            chat_template=None,
            fewshot_as_multiturn=False,
        )
        results, configs, versions, n_samples = {}, {}, {}, {}
        lines_by_task = {}
        for task, (spec, docs, prompts, scored) in per_task.items():
            lines, sums = [], {}
            for index, (doc, prompt) in enumerate(zip(docs, prompts, strict=True)):
                kind = _kind(model, doc["id"])
                score = {
                    k: v
                    for k, v in scored[kind][index].items()
                    if k not in ("raw_output", "question", "gold_sql", "db_path")
                }
                output = scored[kind][index]["raw_output"]
                numbers = process_results(doc, [score])
                for key, value in numbers.items():
                    sums[key] = sums.get(key, 0.0) + value
                lines.append(
                    {
                        "doc_id": index,
                        "doc": doc,
                        "target": doc["gold_sql"],
                        "arguments": [(prompt, dict(spec.generation_kwargs))],
                        "resps": [[output]],
                        "filtered_resps": [score],
                        "filter": "score",
                        "metrics": list(numbers),
                        "doc_hash": "d",
                        "prompt_hash": "p",
                        "target_hash": "t",
                        **numbers,
                    }
                )
            lines_by_task[task] = lines
            results[task] = {
                "alias": task,
                **{f"{k},score": v / len(docs) for k, v in sums.items()},
            }
            configs[task] = {
                "task": task,
                "num_fewshot": 0,
                "generation_kwargs": dict(spec.generation_kwargs),
                "repeats": 1,
                "metadata": {"version": 1.0},
            }
            versions[task] = 1.0
            n_samples[task] = {"original": len(docs), "effective": len(docs)}
        tracker.save_results_aggregated(
            results={
                "results": results,
                "group_subtasks": {"logiccat": list(per_task)},
                "configs": configs,
                "versions": versions,
                "n-samples": n_samples,
                "config": {"model": "local-completions", "limit": None},
            },
            samples=None,
        )
        for task, lines in lines_by_task.items():
            tracker.save_results_samples(task_name=task, samples=lines)
        paths.append(Path(tracker.general_config_tracker.model_name_sanitized))
        (model_folder,) = (folder / name).iterdir()
        paths[-1] = model_folder
    return paths
