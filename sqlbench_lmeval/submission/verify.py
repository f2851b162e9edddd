"""``sqlbench-lmeval verify``: check a submitted run from its raw outputs, with our own scorer: the
checks of :data:`CHECKS` (one module each in ``submission/checks/``, in order, as sqlglot's
optimizer lists its rules) give findings of a severity, the worst of which is the verdict of a
task and of the run, and the report carries a digest a leaderboard can cite (the checks,
severities and verdicts: docs/verify.md; the exit codes: docs/cli.md#exit-codes).

>>> findings = [
...     Finding("integrity", "gold_verbatim", FINDING, "2 answers are the gold SQL", (3, 9)),
...     Finding("provenance", "lm_eval_version", INFO, "lm-eval 0.4.13"),
... ]
>>> verdict_of(findings), EXIT_CODES[verdict_of(findings)]
('verified with findings', <ExitCode.DONE: 0>)
>>> worst_verdict([VERIFIED, REJECTED, UNATTESTED])
'rejected'"""

from __future__ import annotations

import gc
import hashlib
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from sqlbench_lmeval import __version__, benchmarks
from sqlbench_lmeval.errors import ExitCode, UserError
from sqlbench_lmeval.execution import Limits
from sqlbench_lmeval.execution.job import DEFAULT_LIMITS
from sqlbench_lmeval.execution.runner import default_timeout
from sqlbench_lmeval.lmeval.task_specs import DATA_OPTIONS, TaskSpec, benchmark_spec, task_specs
from sqlbench_lmeval.offline import run_metrics, score_outputs, scorer_for, task_documents
from sqlbench_lmeval.scoring.answer import READS_NO_TABLE
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.metrics import EX, EX_READS_DATA, STRUCTURAL_SIMILARITY, VES, VOTED_EX
from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.scoring.verdicts import aggregate, item_verdict
from sqlbench_lmeval.submission.checks import (
    attestation,
    completeness,
    cost,
    integrity,
    provenance,
    rescoring,
    settings,
    task_definition,
    truncation,
)
from sqlbench_lmeval.submission.checks.base import (
    FINDING,
    INFO,
    REJECT,
    UNATTESTED_SEVERITY,
    CheckedTask,
    Finding,
)
from sqlbench_lmeval.submission.checks.chat_wrap import chat_run
from sqlbench_lmeval.submission.checks.integrity import output_key
from sqlbench_lmeval.submission.logged import (
    LoggedAnswer,
    LoggedTask,
    Submission,
    data_options,
    outputs_fingerprint,
)
from sqlbench_lmeval.vocabulary import RunVerdict

_RANK = {REJECT: 3, UNATTESTED_SEVERITY: 2, FINDING: 1, INFO: 0}
VERIFIED, WITH_FINDINGS, REJECTED = (
    RunVerdict.VERIFIED,
    RunVerdict.WITH_FINDINGS,
    RunVerdict.REJECTED,
)
UNATTESTED = RunVerdict.UNATTESTED
#: The verdicts a leaderboard ranks; the others are listed apart with their reasons.
RANKED_VERDICTS = (VERIFIED, WITH_FINDINGS)
#: What a verdict of ``verified`` proves and what it cannot, in every report and after
#: ``verify``'s verdicts (docs/verify.md#what-verified-means).
VERIFIED_MEANS = (
    "Verified proves that the logged outputs, re-scored here, give the numbers the run claims, "
    "under the benchmark's prompts, settings and task definition. It cannot prove that a model "
    "wrote them: lm-eval's files record prompts and outputs, not what made them. Gold copied "
    "into the answers (whole, inside a query of their own, as ours or as published) and "
    "answers shared with another run given alongside are found and keep a run off the "
    "leaderboard's ranking; a lookup of gold rewritten past recognition, or copied from a run "
    "not given, is not found."
)
#: ``sqlbench-lmeval verify``'s exit code for the worst verdict of the runs it was given: a
#: verified run is a success, findings or not (``verify ... && next`` goes on); rejected and
#: unattested have codes of their own, never a crash's 1 (docs/cli.md#exit-codes).
EXIT_CODES = {
    VERIFIED: ExitCode.DONE,
    WITH_FINDINGS: ExitCode.DONE,
    UNATTESTED: ExitCode.UNATTESTED,
    REJECTED: ExitCode.REJECTED,
}
_VERDICTS = {3: REJECTED, 2: UNATTESTED, 1: WITH_FINDINGS, 0: VERIFIED}

#: The checks of a task, in order, one module each (``submission/checks/``): those that read
#: the run run first, then the task's answers are scored, then those that read the scores.
CHECKS = (
    completeness,
    attestation,
    provenance,
    task_definition,
    settings,
    cost,
    rescoring,
    truncation,
    integrity,
)


@dataclass(frozen=True)
class TaskVerification:
    """The verification of one task of a run."""

    task: str
    benchmark: str
    findings: tuple[Finding, ...]
    metrics: Mapping  # ours, on the full denominator (``scoring.verdicts.aggregate``)
    metrics_logged: Mapping  # ours, over the logged items only (lm-eval's denominator)
    claimed: Mapping  # the run's aggregate numbers
    facts: Mapping  # provenance and settings as recorded
    items: tuple[Mapping, ...]  # per item: id, category, verdict, numbers, prompt hash
    outputs_sha256: str
    dataset_version: str | None

    @property
    def verdict(self) -> str:
        return verdict_of(self.findings)


@dataclass(frozen=True)
class Verification:
    """The verification of a run: its tasks, run-wide findings, inputs and digest."""

    run: str
    source: str
    kind: str
    tasks: tuple[TaskVerification, ...]
    findings: tuple[Finding, ...]  # about the run as a whole (cross-run findings too)
    inputs: tuple[tuple[str, str], ...]
    settings: Mapping

    @property
    def all_findings(self) -> tuple[Finding, ...]:
        return self.findings + tuple(f for task in self.tasks for f in task.findings)

    @property
    def verdict(self) -> str:
        return verdict_of(self.all_findings)

    def with_findings(self, extra: Iterable[Finding]) -> Verification:
        return Verification(
            self.run,
            self.source,
            self.kind,
            self.tasks,
            self.findings + tuple(extra),
            self.inputs,
            self.settings,
        )

    def digest(self) -> str:
        """sha256 over the files read, the versions that judged them and every finding."""
        content = {
            "inputs": [list(entry) for entry in self.inputs],
            "sqlbench_lmeval_version": __version__,
            "comparison_version": COMPARISON_VERSION,
            "verdict": self.verdict,
            "tasks": [
                {"task": task.task, "verdict": task.verdict, "outputs_sha256": task.outputs_sha256}
                for task in self.tasks
            ],
            "findings": [finding.to_json() for finding in self.all_findings],
        }
        text = json.dumps(content, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("ascii")).hexdigest()

    def to_json(self) -> dict:
        return {
            "run": self.run,
            "source": self.source,
            "kind": self.kind,
            "verdict": self.verdict,
            "verified_means": VERIFIED_MEANS,
            "digest": self.digest(),
            "sqlbench_lmeval_version": __version__,
            "comparison_version": COMPARISON_VERSION,
            "inputs": [{"file": name, "sha256": sha} for name, sha in self.inputs],
            "settings": _jsonable(self.settings),
            "findings": [finding.to_json() for finding in self.findings],
            "tasks": [
                {
                    "task": task.task,
                    "benchmark": task.benchmark,
                    "verdict": task.verdict,
                    "dataset_version": task.dataset_version,
                    "outputs_sha256": task.outputs_sha256,
                    "metrics": _jsonable(task.metrics),
                    "metrics_logged": _jsonable(task.metrics_logged),
                    "claimed": _jsonable(task.claimed),
                    "facts": _jsonable(task.facts),
                    "findings": [finding.to_json() for finding in task.findings],
                    "items": [_jsonable(item) for item in task.items],
                }
                for task in self.tasks
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping) -> Verification:
        """The verification :meth:`to_json` wrote (e.g. a leaderboard's cached one)."""
        tasks = tuple(
            TaskVerification(
                task=task["task"],
                benchmark=task["benchmark"],
                findings=tuple(Finding.from_json(f) for f in task["findings"]),
                metrics=task["metrics"],
                metrics_logged=task["metrics_logged"],
                claimed=task["claimed"],
                facts=task["facts"],
                items=tuple(task["items"]),
                outputs_sha256=task["outputs_sha256"],
                dataset_version=task.get("dataset_version"),
            )
            for task in data["tasks"]
        )
        return cls(
            run=data["run"],
            source=data["source"],
            kind=data["kind"],
            tasks=tasks,
            findings=tuple(Finding.from_json(f) for f in data["findings"]),
            inputs=tuple((entry["file"], entry["sha256"]) for entry in data["inputs"]),
            settings=data.get("settings") or {},
        )


def verdict_of(findings: Iterable[Finding]) -> str:
    """rejected, unattested, verified with findings or verified: the worst severity of
    ``findings``."""
    worst = max((_RANK[finding.severity] for finding in findings), default=0)
    return _VERDICTS[worst]


def worst_verdict(verdicts: Iterable[str]) -> str:
    """The worst of ``verdicts`` (verified when there are none)."""
    rank = {verdict: level for level, verdict in _VERDICTS.items()}
    return _VERDICTS[max((rank[v] for v in verdicts), default=0)]


# --- the checks --------------------------------------------------------------------------------


def verify_submission(
    submission: Submission,
    *,
    cache_dir=None,
    limits: Limits | None = None,
    workers: int | None = None,
    progress: bool = False,
    source=None,
    options: Mapping | None = None,
) -> Verification:
    """Verify every task of ours in ``submission`` (docs/verify.md). ``options``
    choose the data (``scale_factor``, ``engine``, ``url``) over what the run recorded.
    ``limits``: what the answers are re-scored under; None: :func:`run_limits`."""
    with no_full_collections():
        return _verify_submission(submission, cache_dir, limits, workers, progress, source, options)


@contextmanager
def no_full_collections() -> Iterator[None]:
    """CPython's garbage collector without its full collections while the block runs (a
    verification, and the writing of its report).

    A verification keeps about a million objects alive to its end (the logged lines, the
    documents, the score dicts) and makes little cyclic garbage that outlives the young
    generations; each full collection walks all of them, several times a run, for about a
    tenth of a full LogicCat verification's time and nothing to free. The young generations
    are still collected; the thresholds are restored afterwards."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, 1 << 30)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, old)


def _verify_submission(submission, cache_dir, limits, workers, progress, source, options):
    if limits is None:
        limits = run_limits(submission, options)
    findings = []
    if submission.other_tasks:
        findings.append(
            Finding(
                "completeness",
                "other_tasks",
                INFO,
                f"tasks that are not ours were not verified: {', '.join(submission.other_tasks)}",
            )
        )
    checked = [
        _check_task(submission, logged, cache_dir, source, options or {})
        for logged in submission.tasks
    ]
    # Every task's answers in one batch per benchmark and kind: one worker pool, and the
    # workers stay busy across tasks.
    batches: dict[tuple, list[CheckedTask]] = {}
    for task in checked:
        key = (task.spec.benchmark, task.spec.sampled, _samples_per_item(task))
        batches.setdefault(key, []).append(task)
    for (benchmark, _, _), group in batches.items():
        scorer = scorer_for(
            benchmarks.get(benchmark),
            cache_dir,
            limits=limits,
            workers=workers,
            progress=progress,
            preview_rows=0,  # a verification keeps numbers, not result rows
        )
        scores = score_outputs(
            scorer,
            [item for task in group for item in task.items],
            [task.predictions.get(item.id) for task in group for item in task.items],
            cache_dir,
        )
        for task in group:
            task.scores, scores = scores[: len(task.items)], scores[len(task.items) :]
    tasks = tuple(_finish_task(task) for task in checked)
    return Verification(
        run=submission.name,
        source=submission.source,
        kind=submission.kind,
        tasks=tasks,
        findings=tuple(findings),
        inputs=submission.inputs,
        settings=_run_settings(submission.settings),
    )


def run_limits(
    submission: Submission,
    options: Mapping | None = None,
    timeout_s: float | None = None,
    max_rows: int = DEFAULT_LIMITS.max_rows,
) -> Limits:
    """The limits ``submission`` is re-scored under: ``timeout_s``, else the default time limit
    of the engine its tasks ran on (the longest, should they differ; ``options`` choose the
    engine over what the run recorded), which is what the run's own scoring used unless it was
    told otherwise: 60 s on PostgreSQL, 10 s elsewhere (``runner.default_timeout``)."""

    if timeout_s is None:
        engines = {
            {**_run_options(logged, submission), **(options or {})}.get("engine")
            for logged in submission.tasks
        }
        timeout_s = max(default_timeout(engine) for engine in engines or {None})
    return Limits(timeout_s=timeout_s, max_rows=max_rows)


def _spec_of(name: str) -> TaskSpec:
    specs = task_specs()
    if name in specs:
        return specs[name]
    spec = benchmark_spec(name)  # a `score` output of a whole benchmark names the benchmark
    if spec is None:
        raise UserError(f"{name!r} is not a sqlbench-lmeval task; ours: {', '.join(specs)}")
    return spec


def _check_task(submission, logged: LoggedTask, cache_dir, source, given) -> CheckedTask:
    """The checks that read the run (completeness, provenance, settings, ...) on one task, and
    the answers to score."""
    spec = _spec_of(logged.name)
    options = {**_run_options(logged, submission), **given}
    docs = task_documents(spec, cache_dir=cache_dir, source=source, **options)
    items = [Item.from_doc(doc) for doc in docs]
    task = CheckedTask(submission, logged, spec, docs, items)
    for check in CHECKS:
        if not check.NEEDS_SCORES:
            check.check(task)
    task.predictions = {
        item_id: _prediction(answer, spec)
        for item_id, answer in task.answers.items()
        if answer.outputs
    }
    return task


def _samples_per_item(task: CheckedTask) -> int | None:
    """Samples per item of a sampled task (batches must agree), None for the others."""
    if not task.spec.sampled:
        return None
    counts = {len(outputs) for outputs in task.predictions.values()}
    return max(counts, default=0)


def _finish_task(task: CheckedTask) -> TaskVerification:
    """The checks that read the task's scores (re-scoring, truncation, integrity); its
    verification."""
    for check in CHECKS:
        if check.NEEDS_SCORES:
            check.check(task)
    scored, answers = task.scored, task.answers
    logged_scores = [score for score in scored if score.id in answers]
    # The benchmark's own summaries (TPC-DS) read the score dicts themselves.
    metrics = run_metrics(benchmarks.get(task.spec.benchmark), task.scores, task.spec.sampled)
    dataset_versions = {doc.get("dataset_version") for doc in task.docs} - {None}
    dialects = {item.id: item.prompted_dialect for item in task.items}
    return TaskVerification(
        task=task.logged.name,
        benchmark=task.spec.benchmark,
        findings=tuple(task.found),
        metrics=metrics,
        metrics_logged=aggregate(logged_scores),
        claimed=dict(task.logged.claimed_metrics),
        facts=task.facts,
        items=tuple(
            _item_row(
                score,
                task.prompts.get(score.id),
                task.answers.get(score.id),
                dialects.get(score.id),
            )
            for score in scored
        ),
        outputs_sha256=outputs_fingerprint(task.logged),
        dataset_version=next(iter(dataset_versions), None),
    )


def _run_options(logged: LoggedTask, submission: Submission) -> dict:
    """The data options the run used (lm-eval ``--metadata``), as far as they choose data."""
    options = data_options(logged)
    if submission.kind == "score":  # a `score` output records its own
        recorded = submission.settings.get("data_options") or {}
        options.update({k: v for k, v in recorded.items() if k in DATA_OPTIONS})
        if submission.settings.get("engine"):
            options.setdefault("engine", submission.settings["engine"])
    return options


def _prediction(answer: LoggedAnswer, spec: TaskSpec):
    """What the run answered, as ``offline.score_outputs`` takes it."""
    if spec.sampled:
        return list(answer.outputs)
    return answer.outputs[0]


# --- per-item rows and small helpers ------------------------------------------------------------


def _item_row(
    score: ScoredItem, prompt: Mapping | None, answer: LoggedAnswer | None, dialect: str | None
) -> dict:
    row = {
        "id": score.id,
        "category": score.category,
        "verdict": item_verdict(score),
        "status": score.status,
        "reason": score.reason,
        "healthy_gold": score.healthy_gold,
        "truncated": score.truncated,
        READS_NO_TABLE: score.reads_no_table,
    }
    for name in (VES, EX, EX_READS_DATA, STRUCTURAL_SIMILARITY, VOTED_EX):
        if name in score.values:  # as written: an int stays an int in the report
            row[name] = score.values[name]
    if prompt is not None:
        row.update(prompt)
    row.update(cost.cost_fields(score))  # a metered answer's tokens and latency
    if answer is not None and answer.outputs:
        # The outputs' fingerprint, normalised, for the overlap between runs
        # (submission/cross_run.py): a byte added to a copied answer must not hide it.
        row["output_key"] = output_key(answer.outputs, score.answers, dialect or "sqlite")
    return row


def _run_settings(settings: Mapping) -> dict:
    keep = (
        "model_name",
        "config",
        "chat_template_sha",
        "system_instruction",
        "max_length",
        "lm_eval_version",
        "transformers_version",
        "date",
        "model_name_sanitized",
        "comparison_version",
        "dataset_version",
        "engine",
        "sqlbench_lmeval_version",
        "limits",
    )
    return {key: settings[key] for key in keep if key in settings}


def _jsonable(value):
    """``value`` with NaN/inf as None and tuples as lists (strict JSON)."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    return value


__all__ = [
    "FINDING",
    "INFO",
    "REJECT",
    "REJECTED",
    "VERIFIED",
    "WITH_FINDINGS",
    "Finding",
    "TaskVerification",
    "Verification",
    "EXIT_CODES",
    "RANKED_VERDICTS",
    "UNATTESTED",
    "VERIFIED_MEANS",
    "chat_run",
    "verdict_of",
    "worst_verdict",
    "verify_submission",
]
