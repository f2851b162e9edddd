"""Offline scoring of prediction files: ``sqlbench-lmeval score BENCHMARK PREDICTIONS.jsonl``.

For leaderboard submissions and outputs made outside lm-eval. Each input line is
``{"id": <item id>, "prediction": "<raw model output or SQL>"}``. Scoring goes through
``scoring.score_items``, the function the lm-eval filter calls, so the numbers are the same.

Input problems are reported, never guessed around: a malformed line names its line number,
an unknown id is an error that names it, a duplicated id is an error, and a missing id is
scored 0 with status ``missing`` and listed in the output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from sqlbench_lmeval import __version__
from sqlbench_lmeval.benchmarks import benchmark_module
from sqlbench_lmeval.compare import COMPARISON_VERSION
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.execution import GoldCache, Limits
from sqlbench_lmeval.paths import cache_dir as resolve_cache_dir
from sqlbench_lmeval.scoring import aggregate, score_items


def read_predictions(path: str | Path) -> dict[int, str]:
    """``{id: prediction}`` from a JSONL file; a UserError names the first bad line."""
    predictions: dict[int, str] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"cannot read predictions {path}: {error}") from error
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise UserError(f"{where}: not valid JSON ({error.msg})") from error
        if not isinstance(record, dict) or "id" not in record or "prediction" not in record:
            raise UserError(f'{where}: expected an object with "id" and "prediction"')
        item_id, prediction = record["id"], record["prediction"]
        if isinstance(item_id, bool) or not isinstance(item_id, (int, str)):
            raise UserError(f"{where}: id must be an integer, got {item_id!r}")
        try:
            item_id = int(item_id)
        except ValueError as error:
            raise UserError(f"{where}: id must be an integer, got {item_id!r}") from error
        if not isinstance(prediction, str):
            kind = type(prediction).__name__
            raise UserError(f"{where}: prediction must be a string, got {kind}")
        if item_id in predictions:
            raise UserError(f"{where}: id {item_id} appears more than once")
        predictions[item_id] = prediction
    if not predictions:
        raise UserError(f"{path}: no predictions")
    return predictions


def score_predictions(
    benchmark: str,
    predictions: Mapping[int, str],
    *,
    cache_dir=None,
    limits: Limits = Limits(),
    workers: int | None = None,
    progress: bool = True,
    **options,
) -> dict:
    """Score ``{id: raw output}`` against every item of ``benchmark``; the output JSON object."""
    module = benchmark_module(benchmark)
    items = module.load_items(cache_dir=cache_dir, **options)
    known = {item.id for item in items}
    unknown = sorted(set(predictions) - known)
    if unknown:
        shown = ", ".join(map(str, unknown[:20])) + (" ..." if len(unknown) > 20 else "")
        raise UserError(f"{len(unknown)} prediction id(s) are not {benchmark} items: {shown}")
    missing = sorted(known - set(predictions))
    scores = score_items(
        items,
        [predictions.get(item.id) for item in items],
        limits=limits,
        workers=workers,
        gold_cache=GoldCache(resolve_cache_dir(cache_dir) / "gold-results"),
        item_metrics=getattr(module, "item_metrics", None),
        prompt_tail=getattr(module, "PROMPT_TAIL", ""),
        progress=progress,
    )
    return {
        "task": benchmark,
        "comparison_version": COMPARISON_VERSION,
        "dataset_version": module.dataset_version(cache_dir=cache_dir, **options),
        "sqlbench_lmeval_version": __version__,
        "limits": {"timeout_s": limits.timeout_s, "max_rows": limits.max_rows},
        "missing_ids": missing,
        "metrics": aggregate(scores),
        "items": scores,
    }
