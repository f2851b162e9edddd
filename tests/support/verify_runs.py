"""Real lm-eval output folders of scripted TPC-DS models, for the verify and leaderboard tests,
and the edits that turn a clean run into a submission with exactly one problem.

``run_tpcds(model, workdir, cache, answers)`` runs the real ``lm_eval`` CLI on the full
``tpcds`` task (all 99 items, the sf 0.01 database of ``tpcds_cache`` in tests/conftest.py)
against the loopback server; ``answers`` maps a query number to the model's output, and every
other item gets :data:`WRONG`: a query that reads a table and answers nothing (so the clean run
has no finding: no constant, no gold verbatim, nothing cut off). The folder is lm-eval's own.

Edits work on the files lm-eval wrote: ``samples_lines``/``write_samples_lines`` read and
write the samples file (its lines as JSON objects, lm-eval's bare ``NaN`` kept), and
``results_json``/``write_results_json`` the results file. ``answer_differently`` is the
consistent edit: one item's raw output replaced and scored again by our lm-eval filter, as if
the model had written it, with the line's numbers and the task's aggregates updated to match.

``scoring_once()`` keeps the score of each answer ``verify`` runs, for the many verifications of
edited copies of one run: each answer is scored once, by the real scorer.
"""

from __future__ import annotations

import copy
import glob
import json
import math
import re
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import TPCDS_SCALE_FACTOR
from support.lm_eval_run import run_lm_eval

#: Reads store_sales and answers no TPC-DS question (no gold returns this one text row).
WRONG = "```sql\nSELECT 'no answer' AS answer FROM store_sales LIMIT 1\n```"
QUESTION = re.compile(r"\nQuestion: (.*?)\n\n", re.S)
#: The scale factor of the shared test database (``tpcds_cache`` in tests/conftest.py).
SCALE_FACTOR = TPCDS_SCALE_FACTOR


def scripted_tpcds(items, answers: dict[int, str]):
    """``answer(prompt)``: ``answers[query number]`` of the item the prompt asks, else WRONG."""
    by_question = {item.question.strip(): item.id for item in items}

    def answer(prompt: str) -> str:
        number = by_question[QUESTION.search(prompt).group(1).strip()]
        return answers.get(number, WRONG)

    return answer


def run_tpcds(
    workdir: Path,
    cache: Path,
    items,
    answers: dict[int, str],
    *,
    task: str = "tpcds",
    extra_args=(),
    chat: bool = False,
) -> Path:
    """The model folder lm-eval wrote for ``task`` answered by :func:`scripted_tpcds`."""
    workdir.mkdir(parents=True, exist_ok=True)
    run_lm_eval(
        task,
        answer=scripted_tpcds(items, answers),
        workdir=workdir,
        chat=chat,
        extra_args=["--metadata", json.dumps({"scale_factor": SCALE_FACTOR}), *extra_args],
        env={"SQLBENCH_LMEVAL_CACHE": str(cache), "SQLBENCH_LMEVAL_WORKERS": "2"},
    )
    (folder,) = [
        Path(p).parent for p in glob.glob(str(workdir / "lm_eval_output" / "*" / "results_*.json"))
    ]
    return folder


def copy_run(folder: Path, destination: Path) -> Path:
    """A copy of a model folder, to edit."""
    shutil.copytree(folder, destination)
    return destination


def _constant(name: str) -> float:
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[name]


def samples_path(folder: Path) -> Path:
    (path,) = folder.glob("samples_*.jsonl")
    return path


def samples_lines(folder: Path) -> list[dict]:
    text = samples_path(folder).read_text(encoding="utf-8")
    return [json.loads(line, parse_constant=_constant) for line in text.splitlines() if line]


def write_samples_lines(folder: Path, lines: list[dict]) -> None:
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    samples_path(folder).write_text(text, encoding="utf-8")


def results_path(folder: Path) -> Path:
    (path,) = folder.glob("results_*.json")
    return path


def results_json(folder: Path) -> dict:
    return json.loads(results_path(folder).read_text(encoding="utf-8"), parse_constant=_constant)


def write_results_json(folder: Path, data: dict) -> None:
    results_path(folder).write_text(json.dumps(data, indent=2), encoding="utf-8")


def recompute_aggregates(folder: Path, task: str) -> None:
    """The task's mean numbers in the results file made from the samples file's lines, as
    lm-eval computes them."""
    lines = samples_lines(folder)
    data = results_json(folder)
    block = data["results"][task]
    for key in list(block):
        name, _, kind = key.partition(",")
        # lm-eval's mean is over the lines that carry the number (ex_on_healthy_gold: the
        # items with healthy gold only).
        carried = [line[name] for line in lines if name in line]
        if kind and "_stderr" not in name and carried:
            block[key] = sum(carried) / len(carried)
    write_results_json(folder, data)


def edit_prompts(folder: Path, edit) -> None:
    """Every logged prompt replaced by ``edit(line, prompt)`` (``prompt``: as logged)."""
    lines = samples_lines(folder)
    for line in lines:
        arguments = line["arguments"]["gen_args_0"]
        arguments["arg_0"] = edit(line, arguments["arg_0"])
    write_samples_lines(folder, lines)


def answer_differently(folder: Path, task: str, item_id: int, output: str) -> None:
    """Make the run at ``folder`` look as if the model had answered ``item_id`` with ``output``:
    the raw response, the filter's score dict, the line's numbers (``process_results``) and the
    task's mean numbers in the results file all become what lm-eval would have written."""
    from sqlbench_lmeval.lmeval.hooks import ExecuteAndScore, process_results

    lines = samples_lines(folder)
    for line in lines:
        if line["doc"]["id"] == item_id:
            (score,) = ExecuteAndScore(benchmark="tpcds").apply([[output]], [line["doc"]])
            line["resps"] = [[output]]
            line["filtered_resps"] = [str(score)]
            line.update(process_results(line["doc"], [score]))
    write_samples_lines(folder, lines)
    recompute_aggregates(folder, task)


@contextmanager
def scoring_once():
    """While the block runs, ``verify`` scores each answer once: the score of an item's answer
    (on one database, gold cache and limits) is kept, and a later verification of a run that
    holds the same answer (an edited copy of a run verified before) takes it instead of running
    the answer again.

    Scoring is a function of the item, the answer, the data and the limits, so the verifications
    are the ones verify makes on its own: every check still runs on the real scores, made by the
    real scorer (its worker processes, DuckDB, the gold cache) the first time an answer is seen.
    Sampled and retried answers, whose scores depend on the batch, are always scored afresh."""
    from sqlbench_lmeval.submission import verify

    real = verify.score_outputs
    kept: dict[tuple, dict] = {}

    def score_outputs(scorer, items, outputs, cache_dir=None):
        if any(output is not None and not isinstance(output, str) for output in outputs):
            return real(scorer, items, outputs, cache_dir)
        # The scorer's settings, with its gold cache by folder (a new object per verification).
        context = (repr(scorer.hooks), str(cache_dir), scorer.limits, scorer.preview_rows)
        keys = [(*context, repr(item), output) for item, output in zip(items, outputs, strict=True)]
        new = {key: index for index, key in enumerate(keys) if key not in kept}
        if new:
            indexes = sorted(new.values())
            scores = real(
                scorer, [items[i] for i in indexes], [outputs[i] for i in indexes], cache_dir
            )
            kept.update((keys[i], score) for i, score in zip(indexes, scores, strict=True))
        return [copy.deepcopy(kept[key]) for key in keys]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(verify, "score_outputs", score_outputs)
        yield
