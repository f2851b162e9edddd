"""``sqlbench-lmeval verify``: check a submitted run from its raw outputs, with our own scorer.

For every task of ours in a run (see ``submission`` for what a run is), the checks below give
findings, each naming the items it concerns, and a severity:

- ``reject``: the run cannot stand as a result: its protocol is not the benchmark's (prompt
  text beyond what a recorded chat template adds, in any turn; few-shot, sampling on a greedy
  task, a system instruction, another task version or task definition), its claimed numbers
  differ from ours without a benign named cause, or its ids are duplicated or unknown;
- ``unattested``: nothing in the run records how its outputs were made (a predictions file or a
  ``score`` output: no prompt, model or settings); it is scored and checked for completeness,
  never shown as a verified run;
- ``finding``: the run stands, re-scored by us, but a reader must know something about its
  answers (items missing, constant answers, gold verbatim, truncation, outputs shared with
  another run, numbers that differ for a benign named cause, ...);
- ``info``: recorded facts (versions, settings, counts), never a problem.

The verdict of a task (and of the run: its worst task) is ``rejected`` with any reject, else
``unattested`` with an unattested finding, else ``verified with findings`` with any finding,
else ``verified``. ``sqlbench-lmeval verify`` exits 0 for verified, 4 when the worst run is
verified with findings, 5 unattested, 1 rejected (:data:`EXIT_CODES`).

Checks, in order:

1. completeness: every item of the task exactly once; a missing item scores 0 on the full
   denominator (the task's item count, whatever ``--limit`` the run used);
2. provenance: task name and version, package, lm-eval, ``dataset_version``,
   ``comparison_version`` and engine as the run recorded them against ours; the task
   definition in the results file (``doc_to_text``, ``description``, the YAML it came from);
   each logged document's question and gold; each item's prompt against the prompt the task
   builds now (sha256 of both; a chat template the run records may put its own markers around
   ours, nothing else, in any turn);
3. settings as the benchmark defines them: zero-shot, greedy decoding for the tasks that are
   not sampled (the sampled ones: their own sampling settings), chat template and system
   instruction, the generation limit and how many outputs it cut, and prompts too long for
   the model's context where the run records that context (lm-eval's ``max_length``; counted
   with the run's tokenizer when it loads offline);
4. re-scoring: every metric recomputed from the raw outputs with the installed scorer
   (``offline.score_outputs``, the code path of the lm-eval filter) and compared with the
   numbers the run claims, per item and in aggregate; each mismatch names its items and the
   likely cause;
5. integrity: answers that read no table (``table_reads``), answers that are the gold SQL
   (compared as parsed), and (:func:`cross_run_findings`) runs whose raw outputs equal another
   run's, whole or on a large share of the items.

The report carries a digest: the sha256 of the files read and the findings, which a
leaderboard can cite. Published numbers are ours, on the full denominator.
"""

from __future__ import annotations

import gc
import hashlib
import inspect
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from sqlbench_lmeval import __version__
from sqlbench_lmeval.benchmarks import benchmark_module
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.execution import Limits
from sqlbench_lmeval.execution.job import DEFAULT_LIMITS
from sqlbench_lmeval.execution.runner import default_timeout
from sqlbench_lmeval.lmeval.task_specs import TaskSpec, benchmark_spec, task_specs
from sqlbench_lmeval.offline import score_aligned, task_documents
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION
from sqlbench_lmeval.scoring.item import GOLD_HEALTHY, Item
from sqlbench_lmeval.scoring.metrics import EX, EX_READS_DATA, STRUCTURAL_SIMILARITY, VES, VOTED_EX
from sqlbench_lmeval.scoring.pipeline import (
    READS_NO_TABLE,
    TRUNCATION_ADVICE,
    UNREPEATABLE_FLAGS,
    aggregate,
    verdict,
)
from sqlbench_lmeval.scoring.sampling import normalized_sql
from sqlbench_lmeval.sql.normalization import normalize, parse_one, render
from sqlbench_lmeval.submission.logged import (
    DATA_OPTIONS,
    LoggedAnswer,
    LoggedTask,
    Submission,
    data_options,
    outputs_fingerprint,
)

#: The lm-eval release this checkout's tasks are verified with (the installed one).
LM_EVAL_VERSION = metadata.version("lm_eval")
#: A fact the run does not record (shown as such, never as the task's default).
NOT_RECORDED = "not recorded"
REJECT, UNATTESTED_SEVERITY, FINDING, INFO = "reject", "unattested", "finding", "info"
_RANK = {REJECT: 3, UNATTESTED_SEVERITY: 2, FINDING: 1, INFO: 0}
VERIFIED, WITH_FINDINGS, REJECTED = "verified", "verified with findings", "rejected"
UNATTESTED = "unattested"
#: The verdicts a leaderboard ranks; the others are listed apart with their reasons.
RANKED_VERDICTS = (VERIFIED, WITH_FINDINGS)
#: ``sqlbench-lmeval verify``'s exit code for the worst verdict of the runs it was given (3 is
#: the command line's own: the evaluation machinery failed).
EXIT_CODES = {VERIFIED: 0, WITH_FINDINGS: 4, UNATTESTED: 5, REJECTED: 1}
_VERDICTS = {3: REJECTED, 2: UNATTESTED, 1: WITH_FINDINGS, 0: VERIFIED}

#: Share of a run's answered items whose raw output is byte for byte another run's (given in
#: the same verify or leaderboard call) from which that is a finding naming both runs. Two
#: models that write SQL independently rarely agree to the byte on a quarter of the items.
SHARED_OUTPUTS_SHARE = 0.25

#: Numbers closer than this are equal (scores are means of 0/1 or similarities in [0, 1]).
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Finding:
    """One result of a check: its severity, what it says, and the items it concerns."""

    check: str  # completeness, provenance, settings, rescoring, integrity
    code: str  # a stable name, e.g. duplicate_items
    severity: str  # reject, finding, info
    message: str
    items: tuple[int, ...] = ()
    task: str | None = None

    def to_json(self) -> dict:
        return {
            "task": self.task,
            "check": self.check,
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "items": list(self.items),
        }

    @classmethod
    def from_json(cls, data: Mapping) -> Finding:
        return cls(
            data["check"],
            data["code"],
            data["severity"],
            data["message"],
            tuple(data.get("items") or ()),
            data.get("task"),
        )


@dataclass(frozen=True)
class TaskVerification:
    """The verification of one task of a run."""

    task: str
    benchmark: str
    findings: tuple[Finding, ...]
    metrics: Mapping  # ours, on the full denominator (``scoring.pipeline.aggregate``)
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
    """Verify every task of ours in ``submission`` (see the module docstring). ``options``
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
    batches: dict[tuple, list[_Checked]] = {}
    for task in checked:
        key = (task.spec.benchmark, task.spec.sampled, _samples_per_item(task))
        batches.setdefault(key, []).append(task)
    for (benchmark, _, _), group in batches.items():
        scores = score_aligned(
            benchmark_module(benchmark),
            [item for task in group for item in task.items],
            [task.predictions.get(item.id) for task in group for item in task.items],
            cache_dir=cache_dir,
            limits=limits,
            workers=workers,
            progress=progress,
            preview_rows=0,  # a verification keeps numbers, not result rows
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


@dataclass
class _Checked:
    """A task between the checks that read the run and the ones that need its scores."""

    logged: LoggedTask
    spec: TaskSpec
    found: list[Finding]
    docs: list[dict]
    items: list[Item]
    answers: dict[int, LoggedAnswer]
    prompts: dict[int, dict]
    facts: dict
    predictions: dict
    scores: list[dict] = field(default_factory=list)

    def add(self, check, code, severity, message, items=()) -> None:
        self.found.append(Finding(check, code, severity, message, tuple(items), self.logged.name))


def _check_task(submission, logged: LoggedTask, cache_dir, source, given) -> _Checked:
    """Completeness, provenance and settings of one task, and the answers to score."""
    spec = _spec_of(logged.name)
    options = {**_run_options(logged, submission), **given}
    docs = task_documents(spec, cache_dir=cache_dir, source=source, **options)
    items = [Item.from_doc(doc) for doc in docs]
    task = _Checked(logged, spec, [], docs, items, {}, {}, {}, {})
    by_id = {item.id: item for item in items}
    task.answers = _completeness(logged, by_id, submission, task.add)
    if submission.kind != "lm-eval":
        task.add(
            "provenance",
            "unattested",
            UNATTESTED_SEVERITY,
            f"a {submission.kind} file records no prompt, model or generation settings: its "
            "outputs are scored and checked for completeness, but nothing shows how they were "
            "made, so it is not a verified run",
        )
    chat = chat_run(submission.settings)
    template = submission.settings.get("chat_template")
    task.prompts = _provenance(
        spec, logged, docs, task.answers, task.add, task.facts, chat, template or None
    )
    if submission.kind == "lm-eval":
        _task_definition(spec, logged, submission, task.add, task.facts)
    task.facts.update(_settings(spec, logged, submission, task.answers, task.prompts, task.add))
    task.predictions = {
        item_id: _prediction(answer, spec)
        for item_id, answer in task.answers.items()
        if answer.outputs
    }
    return task


def _samples_per_item(task: _Checked) -> int | None:
    """Samples per item of a sampled task (batches must agree), None for the others."""
    if not task.spec.sampled:
        return None
    counts = {len(outputs) for outputs in task.predictions.values()}
    return max(counts, default=0)


def _finish_task(task: _Checked) -> TaskVerification:
    """Re-scoring, truncation and integrity checks on the task's scores; its verification."""
    scores, answers = task.scores, task.answers
    logged_scores = [score for score in scores if score["id"] in answers]
    _rescoring(task.spec, task.logged, answers, scores, logged_scores, task.add)
    _truncation(scores, task.add)
    _integrity(scores, {item.id: item for item in task.items}, task.add)
    metrics = aggregate(scores)
    extra = getattr(benchmark_module(task.spec.benchmark), "aggregate_metrics", None)
    if extra is not None and not task.spec.sampled:
        metrics.update(extra(scores))
    dataset_versions = {doc.get("dataset_version") for doc in task.docs} - {None}
    return TaskVerification(
        task=task.logged.name,
        benchmark=task.spec.benchmark,
        findings=tuple(task.found),
        metrics=metrics,
        metrics_logged=aggregate(logged_scores),
        claimed=dict(task.logged.claimed_metrics),
        facts=task.facts,
        items=tuple(
            _item_row(score, task.prompts.get(score["id"]), task.answers.get(score["id"]))
            for score in scores
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


def _completeness(logged: LoggedTask, by_id, submission, add) -> dict[int, LoggedAnswer]:
    """The logged answer of each item (the first, if logged twice); findings for the rest."""
    answers: dict[int, LoggedAnswer] = {}
    duplicated, unknown, unnamed = [], [], []
    for answer in logged.answers:
        if answer.item_id is None:
            unnamed.append(answer.where)
        elif answer.item_id not in by_id:
            unknown.append(answer.item_id)
        elif answer.item_id in answers:
            duplicated.append(answer.item_id)
        else:
            answers[answer.item_id] = answer
    if unnamed:
        add(
            "completeness",
            "unnamed_lines",
            REJECT,
            f"{len(unnamed)} line(s) name no item id: " + ", ".join(unnamed[:5]),
        )
    if duplicated:
        ids = sorted(set(duplicated))
        add(
            "completeness",
            "duplicate_items",
            REJECT,
            f"{len(ids)} item(s) answered more than once (only one answer per item counts; "
            "which one would be the submitter's choice)",
            ids,
        )
    if unknown:
        ids = sorted(set(unknown))
        add(
            "completeness",
            "unknown_items",
            REJECT,
            f"{len(ids)} id(s) are not items of {logged.name}",
            ids,
        )
    missing = sorted(set(by_id) - set(answers))
    if missing:
        limit = (submission.settings.get("config") or {}).get("limit")
        how = f" (the run used --limit {limit})" if limit is not None else ""
        add(
            "completeness",
            "missing_items",
            FINDING,
            f"{len(missing)} of {len(by_id)} items have no answer{how}: they score 0 on the "
            f"full denominator ({len(by_id)} items)",
            missing,
        )
    return answers


def _provenance(
    spec: TaskSpec,
    logged: LoggedTask,
    docs,
    answers,
    add,
    facts,
    chat: str | None,
    template: str | None,
) -> dict[int, dict]:
    """Versions as recorded against ours (into ``facts``), and each item's prompt against the
    one we build (per item: both hashes and ``same``/``wrapped``/``added_text``/``edited``/
    ``not_logged``; ``chat``: the chat template or chat model the run records, None: none;
    ``template``: the recorded template's text, when the run holds it)."""
    if logged.version is not None and spec.version is not None:
        if _as_version(logged.version) != _as_version(spec.version):
            add(
                "provenance",
                "task_version",
                REJECT,
                f"task version {logged.version}, ours is {spec.version}",
            )
    run_docs = [answer.doc for answer in answers.values() if answer.doc]
    ours = {doc["id"]: doc for doc in docs}
    for key, code in (("dataset_version", "dataset_version"), ("engine", "engine")):
        theirs = sorted({str(doc[key]) for doc in run_docs if doc.get(key)})
        mine = sorted({str(doc[key]) for doc in docs if doc.get(key)})
        if theirs and theirs != mine:
            add(
                "provenance",
                code,
                FINDING,
                f"{key} {', '.join(theirs)} in the run, {', '.join(mine)} here: the items the "
                "run answered are not the ones scored here",
            )
    packages = sorted(
        {
            str(doc["sqlbench_lmeval_version"])
            for doc in run_docs
            if doc.get("sqlbench_lmeval_version")
        }
    )
    if packages and packages != [__version__]:
        add(
            "provenance",
            "package_version",
            INFO,
            f"run made with sqlbench-lmeval {', '.join(packages)}, verified with {__version__}",
        )
    versions = sorted(
        {
            str(version)
            for answer in answers.values()
            if (version := answer.claimed_fields(("comparison_version",)).get("comparison_version"))
        }
    )
    facts.update(
        {
            "task_version": f"{logged.version} (ours {spec.version})",
            "engine": ", ".join(sorted({str(d["engine"]) for d in docs if d.get("engine")})),
            "dataset_version (run)": ", ".join(
                sorted({str(d["dataset_version"]) for d in run_docs if d.get("dataset_version")})
            )
            or None,
            "sqlbench_lmeval_version (run)": ", ".join(packages) or None,
            "comparison_version (run)": ", ".join(versions) or None,
        }
    )
    if versions and versions != [COMPARISON_VERSION]:
        add(
            "provenance",
            "comparison_version",
            FINDING,
            f"the run was judged under comparison version {', '.join(versions)}; this "
            f"scorer's is {COMPARISON_VERSION}",
        )
    build = spec.prompt_function()
    prompts: dict[int, dict] = {}
    by_state: dict[str, list[int]] = {}
    edited_docs = []
    for item_id, answer in answers.items():
        prompt = build(ours[item_id])
        state = _prompt_state(answer.prompt, prompt, chat, template)
        prompts[item_id] = {
            "prompt_sha256": _sha256(prompt),
            "logged_prompt_sha256": None if answer.prompt is None else _sha256(answer.prompt),
            "prompt": state,
        }
        by_state.setdefault(state, []).append(item_id)
        if any(
            key in answer.doc and answer.doc[key] != ours[item_id].get(key) for key in _ASKED_FIELDS
        ):
            edited_docs.append(item_id)
    if by_state.get("not_logged") and logged.samples is not None:
        add(
            "provenance",
            "prompt_not_logged",
            UNATTESTED_SEVERITY,
            f"{len(by_state['not_logged'])} line(s) of the samples log hold no prompt: nothing "
            "records what the model was asked there",
            by_state["not_logged"],
        )
    if by_state.get("edited"):
        add(
            "provenance",
            "edited_prompt",
            REJECT,
            f"{len(by_state['edited'])} logged prompt(s) differ from the prompt the task builds "
            "(an edited question, schema or instruction)",
            by_state["edited"],
        )
    if by_state.get("added_text"):
        how = (
            f"the run's chat template ({chat})"
            if chat
            else "a chat template (the run records none)"
        )
        add(
            "provenance",
            "added_prompt_text",
            REJECT,
            f"{len(by_state['added_text'])} logged prompt(s) hold the task's prompt with text "
            f"around it that {how} does not add (a hint, an example, a system turn): the model "
            "was not asked the benchmark's question alone",
            by_state["added_text"],
        )
    if edited_docs:
        add(
            "provenance",
            "edited_documents",
            FINDING,
            f"{len(edited_docs)} logged document(s) hold another question or gold than the "
            "task's (the log was edited, or made from other data)",
            edited_docs,
        )
    return prompts


#: Fields of a logged document that make the question asked; another value is another item.
_ASKED_FIELDS = ("question", "gold_sql")

#: What chat templates put around a message: special tokens (``<|im_start|>``, ``<s>``,
#: ``<start_of_turn>``, ``[INST]``, ``<<SYS>>``) and the role names they introduce.
_TEMPLATE_MARKER = re.compile(
    r"<\|[^<>|\s]{1,40}\|>|</?[A-Za-z_][\w-]{0,30}>|\[/?INST\]|<</?SYS>>|<｜[^<>｜]{1,40}｜>"
)
_ROLE_WORDS = frozenset({"system", "user", "assistant", "model", "human", "gpt", "bot"})
#: A date a template writes when it renders (Llama 3.1's "Today Date: 26 Jul 2024"): the
#: template holds the text around it, never the date itself.
_RENDERED_DATE = re.compile(
    r"\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4}\b"
    r"|\b\d{4}-\d{2}-\d{2}\b"
)


def chat_run(settings: Mapping) -> str | None:
    """The chat template or chat model a run records (lm-eval's results file), as a short text;
    None when it records neither (a completions model without ``--apply_chat_template``).

    lm-eval writes ``chat_template`` null without ``--apply_chat_template``, the template's text
    (or name) with it, and ``""`` for an API chat model, which formats the messages itself."""
    template = settings.get("chat_template")
    model = str((settings.get("config") or {}).get("model") or settings.get("model_source") or "")
    if isinstance(template, str) and template:
        sha = settings.get("chat_template_sha")
        return f"template sha256 {str(sha)[:12]}" if sha else f"template {template[:40]!r}"
    if isinstance(template, str) or model.endswith("chat-completions"):
        return f"chat model {model or 'unnamed'}"
    return None


def _task_definition(spec: TaskSpec, logged: LoggedTask, submission, add, facts) -> None:
    """The task as the results file records it (lm-eval's config: ``doc_to_text`` as source
    text, ``description``, the YAML file it came from) against ours.

    A task override (``--include_path`` with a YAML of its own) that changes the prompt shows
    here even when the samples log was edited back to our prompts."""
    config = logged.config
    if not config:
        add(
            "provenance",
            "task_config_missing",
            FINDING,
            "the results file records no config for this task: its definition was not compared",
        )
        return
    source = (config.get("metadata") or {}).get("config_source")
    facts["config_source"] = source or NOT_RECORDED
    recorded = config.get("doc_to_text")
    ours = _source_of(spec.prompt_function())
    packages = {str(a.doc.get("sqlbench_lmeval_version")) for a in logged.answers if a.doc} - {
        "None"
    }
    if isinstance(recorded, str) and ours is not None and recorded.strip() != ours.strip():
        # The same release writes the same source; another release may have edited a
        # docstring, and its prompts are compared item by item anyway.
        same_release = packages == {__version__}
        add(
            "provenance",
            "task_definition",
            REJECT if same_release else FINDING,
            f"the results file's doc_to_text is not this task's ({recorded.strip()[:120]!r}"
            + (f", from {source}" if source else "")
            + ("" if same_release else f"; run made with sqlbench-lmeval {', '.join(packages)}")
            + ")",
        )
    description = config.get("description")
    if description:
        add(
            "provenance",
            "task_description",
            REJECT,
            f"the task config adds a description before every prompt: {str(description)[:200]!r}",
        )


def _source_of(function) -> str | None:
    """The source text of ``function``, as lm-eval records a ``!function`` in its config."""
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return None


def _prompt_state(logged: str | None, ours: str, chat: str | None, template: str | None) -> str:
    """``same``, ``wrapped`` (inside the run's recorded chat template: its markers only),
    ``added_text`` (our prompt, with other text around it), ``edited`` or ``not_logged``."""
    if logged is None:
        return "not_logged"
    if logged == ours:
        return "same"
    messages = _chat_messages(logged)
    if messages is not None:
        # An API chat request: exactly one user turn holding our prompt, nothing else (a system
        # turn or an earlier exchange is text the benchmark does not give).
        contents = [m.get("content") for m in messages]
        if chat and len(messages) == 1 and messages[0].get("role") == "user":
            if contents[0] in (ours, ours.strip()):
                return "wrapped"
        return "added_text" if any(ours.strip() in str(c) for c in contents) else "edited"
    # A template adds markers around the text; lm-eval's chat formatting may strip its ends.
    core = ours if ours in logged else ours.strip()
    if not core or core not in logged:
        return "edited"
    before, _, after = logged.partition(core)
    if chat and _template_only(before, template) and _template_only(after, template):
        return "wrapped"
    return "added_text"


def _template_only(text: str, template: str | None) -> bool:
    """Whether ``text`` holds nothing but a chat template's markers, role names and text the
    recorded template itself writes (a default system message)."""
    for piece in _TEMPLATE_MARKER.sub("\n", text).split("\n"):
        piece = piece.strip()
        if not piece or piece.casefold() in _ROLE_WORDS:
            continue
        if template and all(
            part.strip() in template for part in _RENDERED_DATE.split(piece) if part.strip()
        ):
            continue
        return False
    return True


def _chat_messages(text: str) -> list[dict] | None:
    """The messages of a prompt logged as a JSON chat (API chat models), else None."""
    if not text.startswith("["):
        return None
    try:
        messages = json.loads(text)
    except ValueError:
        return None
    if isinstance(messages, list) and all(isinstance(m, dict) for m in messages):
        return messages
    return None


def _settings(spec: TaskSpec, logged, submission, answers, prompts, add) -> dict:
    """Decoding, shots, template and limits as the run recorded them, against the task's."""
    config = logged.config
    generation = dict(config.get("generation_kwargs") or {})
    logged_kwargs = [dict(answer.generation) for answer in answers.values() if answer.generation]
    observed = [generation, *logged_kwargs] if generation or logged_kwargs else []
    facts: dict = {
        "num_fewshot": config.get("num_fewshot"),
        "generation_kwargs": generation or (logged_kwargs[0] if logged_kwargs else None),
        "repeats": config.get("repeats"),
    }
    shots = config.get("num_fewshot")
    if shots:
        add(
            "settings",
            "not_zero_shot",
            REJECT,
            f"{shots}-shot: the benchmark is zero-shot (examples change every prompt)",
        )
    if spec.greedy:
        sampling = [
            kw for kw in observed if kw.get("do_sample") or _positive(kw.get("temperature"))
        ]
        if sampling:
            shown = sampling[0]
            ids = [
                item_id
                for item_id, answer in answers.items()
                if answer.generation
                and (
                    answer.generation.get("do_sample")
                    or _positive(answer.generation.get("temperature"))
                )
            ]
            add(
                "settings",
                "sampling_on_greedy_task",
                REJECT,
                f"sampled decoding (do_sample={shown.get('do_sample')}, temperature="
                f"{shown.get('temperature')}) on a greedy task: {spec.name} is defined with "
                "do_sample false, temperature 0",
                ids,
            )
    else:
        wanted = {k: spec.generation_kwargs.get(k) for k in ("do_sample", "temperature", "top_p")}
        differ = [kw for kw in observed if any(k in kw and kw[k] != v for k, v in wanted.items())]
        if differ:
            add(
                "settings",
                "sampling_settings",
                REJECT,
                f"sampling settings differ from the task's {wanted}: {differ[0]}",
            )
        repeats = config.get("repeats")
        if repeats is not None and int(repeats) != spec.repeats:
            add(
                "settings",
                "repeats",
                REJECT,
                f"{repeats} samples per item; the task asks for {spec.repeats}",
            )
    limits = sorted({kw.get("max_gen_toks") for kw in observed if kw.get("max_gen_toks")})
    # What the run records, never the task's defaults in its place: a predictions file or a
    # score output records no settings at all.
    facts["max_gen_toks"] = limits[-1] if limits else NOT_RECORDED
    if limits and limits != [spec.max_gen_toks]:
        add(
            "settings",
            "generation_limit",
            INFO,
            f"max_gen_toks {', '.join(map(str, limits))} (task default {spec.max_gen_toks})",
        )
    run = submission.settings
    attested = submission.kind == "lm-eval"
    chat = chat_run(run)
    facts["chat_template"] = (f"on ({chat})" if chat else "off") if attested else NOT_RECORDED
    facts["chat_template_sha"] = run.get("chat_template_sha")
    if not attested:
        for key in ("num_fewshot", "generation_kwargs", "repeats"):
            if facts.get(key) is None:
                facts[key] = NOT_RECORDED
    recorded = run.get("lm_eval_version")
    facts["lm_eval_version"] = recorded or NOT_RECORDED
    if attested and recorded and str(recorded) != LM_EVAL_VERSION:
        add(
            "provenance",
            "lm_eval_version",
            FINDING,
            f"the run records lm-eval {recorded}; this benchmark's tasks are defined for, and "
            f"verified with, lm-eval {LM_EVAL_VERSION}",
        )
    elif attested and not recorded:
        add("provenance", "lm_eval_version", FINDING, "the results file records no lm-eval version")
    if run.get("system_instruction"):
        add(
            "settings",
            "system_instruction",
            REJECT,
            "a system instruction was added to every prompt: "
            f"{str(run['system_instruction'])[:200]!r}",
        )
    facts["limit"] = (run.get("config") or {}).get("limit")
    facts["max_length"] = run.get("max_length")
    _context(run, answers, facts, add)
    return facts


def _context(run: Mapping, answers: Mapping[int, LoggedAnswer], facts: dict, add) -> None:
    """Prompts that cannot fit the model's context with room for the generation limit.

    lm-eval's ``hf`` model keeps the last ``max_length - max_gen_toks`` tokens of a longer
    prompt and drops the rest (the start of the schema) without a word. The run records
    ``max_length``; the prompt is counted with the run's own tokenizer when it loads offline.
    """
    max_length = run.get("max_length")
    budget = facts.get("max_gen_toks")
    if not isinstance(max_length, int) or not isinstance(budget, int):
        facts["context_check"] = "not recorded (no max_length in the run)"
        return
    tokenizer, name = _tokenizer(run)
    if tokenizer is None:
        facts["context_check"] = f"not checked: tokenizer {name!r} not available offline"
        add(
            "settings",
            "context_not_checked",
            INFO,
            f"the run's context is {max_length} tokens, but its tokenizer ({name}) is not "
            "available offline, so prompt lengths were not counted",
        )
        return
    room = max_length - budget
    ids = sorted(answers)
    texts = [answers[i].prompt or "" for i in ids]
    counts = [len(ids_) for ids_ in tokenizer(texts, add_special_tokens=False)["input_ids"]]
    over = [item_id for item_id, count in zip(ids, counts, strict=True) if count > room]
    facts["context_check"] = f"counted with {name}"
    facts["prompt_tokens_max"] = max(counts, default=0)
    if over:
        add(
            "settings",
            "prompt_exceeds_context",
            FINDING,
            f"{len(over)} prompt(s) longer than the {room} tokens the model's context of "
            f"{max_length} leaves beside max_gen_toks {budget} (longest: {max(counts)} "
            "tokens): lm-eval cut them from the left, dropping the start of the schema; "
            "lower max_gen_toks or use a model with a longer context",
            over,
        )


def _tokenizer(run: Mapping):
    """The run's tokenizer, loaded from local files only, and its name (None if it cannot)."""
    arguments = (run.get("config") or {}).get("model_args")
    if isinstance(arguments, str):
        arguments = dict(part.split("=", 1) for part in arguments.split(",") if "=" in part)
    arguments = arguments if isinstance(arguments, Mapping) else {}
    name = arguments.get("tokenizer") or arguments.get("pretrained")
    if not name:
        return None, None
    try:
        from transformers import AutoTokenizer  # optional: transformers (the hf extra)

        return AutoTokenizer.from_pretrained(str(name), local_files_only=True), str(name)
    except Exception:  # not installed, not cached, not a tokenizer: say so, never fail
        return None, str(name)


def _prediction(answer: LoggedAnswer, spec: TaskSpec):
    """What the run answered, as ``offline.score_outputs`` takes it."""
    if spec.sampled:
        return list(answer.outputs)
    return answer.outputs[0]


def _rescoring(spec, logged, answers, scores, logged_scores, add) -> None:
    """Claimed numbers (per item: the logged score dict and the numbers beside it; in
    aggregate: the results file) against ours."""
    ours = {score["id"]: score for score in scores}
    mismatched: dict[str, list[int]] = {}
    for item_id, answer in answers.items():
        mine = ours[item_id]
        names = [name for name, value in mine.items() if name != "id" and _is_number(value)]
        claims = [(False, answer.claimed_fields(names)), (True, answer.claimed_numbers)]
        for beside, claim in claims:
            differ = [
                name
                for name, value in claim.items()
                if _is_number(value)
                and _is_number(mine.get(name))
                and not _close(value, mine[name])
            ]
            if differ:
                cause = _likely_cause(answer, claim, mine, differ, beside)
                mismatched.setdefault(cause, []).append(item_id)
                break
    for cause, ids in mismatched.items():
        benign = cause.startswith(BENIGN_CAUSES)
        add(
            "rescoring",
            "item_mismatch",
            FINDING if benign else REJECT,
            f"{len(ids)} item(s) claim numbers this scorer does not give; likely cause: {cause}"
            + ("" if benign else " (no benign cause: the claims do not stand)"),
            sorted(set(ids)),
        )
    explained = bool(mismatched) and all(c.startswith(BENIGN_CAUSES) for c in mismatched)
    effective = (logged.n_samples or {}).get("effective")
    if effective is not None and int(effective) != len(logged.answers):
        add(
            "rescoring",
            "aggregate_not_compared",
            INFO,
            f"the results file averages over {effective} items, the samples log holds "
            f"{len(logged.answers)} lines: its aggregates were not compared",
        )
        return
    mine = aggregate(logged_scores) if logged_scores else {}
    differ = [
        f"{name} claimed {value:.4f}, re-scored {mine[name]:.4f}"
        for name, value in sorted(logged.claimed_metrics.items())
        if _is_number(mine.get(name)) and not _close(value, mine[name], 1e-6)
    ]
    if differ:
        add(
            "rescoring",
            "aggregate_mismatch",
            FINDING if explained else REJECT,
            "the run's aggregate numbers differ from the re-scored ones over the same items: "
            + "; ".join(differ[:8])
            + (" ..." if len(differ) > 8 else "")
            + (
                " (explained by the items' benign differences above)"
                if explained
                else " (no item explains it: the claimed numbers do not stand)"
            ),
        )


#: Causes of a claimed number differing from ours that leave the run standing (re-scored by
#: us): another comparison version, or an answer that hit a time limit here or there.
BENIGN_CAUSES = ("the run was judged under comparison version", "execution limits or machine speed")


def _likely_cause(answer: LoggedAnswer, claim: Mapping, mine: Mapping, names, beside) -> str:
    """Why ``claim`` (the logged score dict's numbers, or with ``beside`` the numbers logged
    beside it) differs from ours on ``names``."""
    claimed = answer.claimed or {}
    version = claimed.get("comparison_version")
    if version is not None and str(version) != COMPARISON_VERSION:
        return f"the run was judged under comparison version {version} (now {COMPARISON_VERSION})"
    status = claimed.get("status")
    if status is not None and status != mine["status"]:
        if {status, mine["status"]} & {"timeout", "crashed"}:
            return (
                f"execution limits or machine speed: status {status} in the run, "
                f"{mine['status']} here"
            )
        if claimed.get("gold_status") not in (None, mine["gold_status"]):
            return (
                f"gold status {claimed.get('gold_status')} in the run, "
                f"{mine['gold_status']} here: other data or engine"
            )
        return f"status {status} in the run, {mine['status']} here"
    if answer.claimed and beside:
        inner = [
            n
            for n in names
            if _is_number(answer.claimed.get(n)) and not _close(answer.claimed[n], claim[n])
        ]
        if inner:
            return "the sample's metrics differ from its own score dict: edited after scoring"
    if (
        status is not None
        and status != "ok"
        and any(claim.get(n) for n in (EX, VES) if _is_number(claim.get(n)))
    ):
        return f"numbers claimed for an answer whose own status is {status}: edited"
    return "same status, another verdict: other comparison rules, gold result or edited numbers"


def _truncation(scores, add) -> None:
    cut = [score["id"] for score in scores if score.get("truncated")]
    if cut:
        add(
            "settings",
            "truncated_outputs",
            FINDING,
            f"{len(cut)} output(s) were cut off by the generation limit: {TRUNCATION_ADVICE}",
            cut,
        )


def _integrity(scores, by_id: Mapping[int, Item], add) -> None:
    constant = [score["id"] for score in scores if score.get(READS_NO_TABLE)]
    if constant:
        correct = sum(1 for score in scores if score.get(READS_NO_TABLE) and score[EX])
        add(
            "integrity",
            "reads_no_table",
            FINDING,
            f"{len(constant)} answer(s) do not read the data: they name no table (constants "
            "such as SELECT 646.8), or matched gold with a result that stays the same on a "
            f"perturbed copy of the database where gold's changes; {correct} of them match "
            "gold. EX counts them, ex_reads_data and r_ves do not",
            constant,
        )
    verbatim = [
        score["id"]
        for score in scores
        if (answers := _answers(score)) and _is_gold(by_id[score["id"]], answers)
    ]
    if verbatim:
        sampled = any("samples" in score for score in scores)
        add(
            "integrity",
            "gold_verbatim",
            FINDING,
            f"{len(verbatim)} answer(s) ({len(verbatim) / len(scores):.1%} of the items) are "
            "the gold SQL (compared as parsed: comments, spacing, the case of names and the "
            "names of aliases aside"
            + ("; in this sampled run, any of an item's samples)" if sampled else ")"),
            verbatim,
        )


def _answers(score: Mapping) -> list[str]:
    """The SQL a score holds: its extracted answer, or, in a sampled run (whose score has no
    answer of its own), each sample's."""
    found = [sample.get("extracted_sql") for sample in score.get("samples", ())]
    return [sql for sql in [score.get("extracted_sql"), *found] if sql]


def _is_gold(item: Item, answers: Sequence[str]) -> bool:
    """Whether one of ``answers`` is the item's gold SQL, as parsed (:func:`_sql_key`).

    Parsing and normalising costs milliseconds a query, too much for every answer of a
    LogicCat run: the tokens are compared first (sqlglot's, without comments, case folded),
    and only an answer of gold's shape whose names differ (another alias) is parsed."""
    gold_tokens = _tokens(item.gold_sql, item.dialect)
    if gold_tokens is None:
        return any(_text_key(sql) == _text_key(item.gold_sql) for sql in answers)
    alike = []
    for sql in answers:
        tokens = _tokens(sql, item.prompted_dialect)
        if tokens == gold_tokens:
            return True
        if tokens is not None and _shape(tokens) == _shape(gold_tokens):
            alike.append(sql)
    if not alike:
        return False
    gold = _sql_key(item.gold_sql, item.dialect)
    return any(_sql_key(sql, item.prompted_dialect) == gold for sql in alike)


def _text_key(sql: str) -> str:
    return normalized_sql(sql).rstrip(";").strip().casefold()


def _tokens(sql: str, dialect: str) -> tuple | None:
    """The kinds and texts (case folded) of ``sql``'s tokens, without its comments and final
    ``;`` (None: it does not tokenize)."""
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except Exception:  # sqlglot's TokenError and whatever odd input makes it raise
        return None
    kept = [(token.token_type, token.text.casefold()) for token in tokens]
    while kept and kept[-1][0] == TokenType.SEMICOLON:
        kept.pop()
    return tuple(kept)


def _shape(tokens: tuple) -> tuple:
    """``tokens`` without the names (tables, columns, aliases): the author's choice."""
    return tuple(token for token in tokens if token[0] not in _NAME_TOKENS)


#: ``;`` and the comments after it, at the end of a query.
_TRAILING_COMMENTS = re.compile(r";(?:\s|--[^\n]*(?:\n|$)|/\*.*?\*/)*\Z", re.S)
#: Tokens that name something (a table, column, alias or CTE): the author's choice.
_NAME_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER, TokenType.ALIAS})


def _sql_key(sql: str, dialect: str) -> str:
    """``sql`` as a canonical text: sqlglot's normalised tree (``sql.normalization``: aliases
    and CTE names canonical, unquoted names in one case) written without comments; the text
    with its whitespace and case folded when it does not parse as one query."""
    # A comment after the final ``;`` reads as a statement of its own (sqlglot's Semicolon).
    tree = parse_one(_TRAILING_COMMENTS.sub("", sql), dialect)
    if tree is not None:
        try:
            normalised, _ = normalize(tree, dialect)
            return "tree:" + render(_canonical_names(normalised)).casefold()
        except Exception:  # sqlglot fails on odd input: fall back to the text, never stop
            pass
    return "text:" + _text_key(sql)


def _canonical_names(tree: exp.Expression) -> exp.Expression:
    """``tree`` (normalised: column references name their tables) with the names its author
    chose made canonical: CTEs numbered in order, table aliases dropped."""
    ctes: dict[str, str] = {}
    for number, cte in enumerate(tree.find_all(exp.CTE)):
        ctes[cte.alias_or_name.casefold()] = f"cte_{number}"
        cte.set("alias", exp.TableAlias(this=exp.to_identifier(f"cte_{number}")))
    for table in tree.find_all(exp.Table):
        table.set("alias", None)
        if not table.db and table.name.casefold() in ctes:
            table.set("this", exp.to_identifier(ctes[table.name.casefold()]))
    for column in tree.find_all(exp.Column):
        if column.table and column.table.casefold() in ctes:
            column.set("table", exp.to_identifier(ctes[column.table.casefold()]))
    return tree


def cross_run_findings(verifications: Sequence[Verification]) -> list[Verification]:
    """``verifications`` with a finding on each task whose raw outputs equal another run's
    (``identical_outputs``), or share at least :data:`SHARED_OUTPUTS_SHARE` of its answers
    with another run's, item by item (``shared_outputs``, naming both). Runs are told apart by
    position, so two runs of one name are compared too."""
    labels = [_label(v, verifications) for v in verifications]
    by_print: dict[tuple[str, str], list[int]] = {}
    for index, verification in enumerate(verifications):
        for task in verification.tasks:
            if task.items and any(item["verdict"] != "missing" for item in task.items):
                by_print.setdefault((task.task, task.outputs_sha256), []).append(index)
    outputs = {
        (index, task.task): {
            item["id"]: item["output_sha256"] for item in task.items if item.get("output_sha256")
        }
        for index, verification in enumerate(verifications)
        for task in verification.tasks
    }
    updated = []
    for index, verification in enumerate(verifications):
        extra = []
        for task in verification.tasks:
            twins = [
                other
                for other in by_print.get((task.task, task.outputs_sha256), [])
                if other != index
            ]
            if twins:
                extra.append(
                    Finding(
                        "integrity",
                        "identical_outputs",
                        FINDING,
                        f"raw outputs identical, item by item, to run(s) "
                        f"{', '.join(labels[i] for i in twins)}: the same model run twice, or a "
                        "copy",
                        task=task.task,
                    )
                )
            mine = outputs[(index, task.task)]
            for other in range(len(verifications)):
                theirs = outputs.get((other, task.task))
                if other == index or theirs is None or other in twins or not mine:
                    continue
                shared = sorted(i for i, sha in mine.items() if theirs.get(i) == sha)
                if len(shared) >= SHARED_OUTPUTS_SHARE * len(mine):
                    extra.append(
                        Finding(
                            "integrity",
                            "shared_outputs",
                            FINDING,
                            f"run {labels[index]} shares {len(shared)} of its {len(mine)} "
                            f"answers ({len(shared) / len(mine):.0%}) byte for byte with run "
                            f"{labels[other]}: outputs copied from it, the same model, or a run "
                            "assembled from several",
                            tuple(shared),
                            task.task,
                        )
                    )
        updated.append(verification.with_findings(extra) if extra else verification)
    return updated


def _label(verification: Verification, verifications: Sequence[Verification]) -> str:
    """A run's name, with its source when another run given with it has the same name."""
    same = sum(1 for other in verifications if other.run == verification.run)
    return verification.run if same == 1 else f"{verification.run} ({verification.source})"


# --- per-item rows and small helpers ------------------------------------------------------------


def _item_row(score: Mapping, prompt: Mapping | None, answer: LoggedAnswer | None) -> dict:
    row = {
        "id": score["id"],
        "category": score.get("category"),
        "verdict": verdict(score["status"], score[EX], bool(score.get("truncated"))),
        "status": score["status"],
        "reason": score.get("reason"),
        "healthy_gold": score["gold_status"] == GOLD_HEALTHY
        and not UNREPEATABLE_FLAGS & set(score.get("flags") or ()),
        "truncated": bool(score.get("truncated")),
        READS_NO_TABLE: bool(score.get(READS_NO_TABLE)),
    }
    for name in (VES, EX, EX_READS_DATA, STRUCTURAL_SIMILARITY, VOTED_EX):
        if _is_number(score.get(name)):
            row[name] = score[name]
    if prompt is not None:
        row.update(prompt)
    if answer is not None and answer.outputs:
        # The raw outputs' fingerprint, for the overlap between runs (cross_run_findings).
        row["output_sha256"] = _sha256(json.dumps(list(answer.outputs), ensure_ascii=True))
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


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _as_version(value) -> str:
    try:
        return repr(float(value))
    except (TypeError, ValueError):
        return str(value)


def _positive(value) -> bool:
    return _is_number(value) and value > 0


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _close(a, b, tolerance: float = TOLERANCE) -> bool:
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tolerance


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
    "chat_run",
    "cross_run_findings",
    "verdict_of",
    "worst_verdict",
    "verify_submission",
]
