"""``sqlbench-lmeval leaderboard``: verified runs in, a ranking with uncertainty out: each run
verified (and cached by the content of its files), then per task and dataset version every
model's EX with its bootstrap interval, rank interval and McNemar/Holm groups, unranked runs
listed apart, written as ``leaderboard.html`` (with forest plots of EX), ``.csv``, ``.json``,
``.md`` and the runs' verification reports (the rules: docs/verify.md#verify-and-leaderboard)."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from sqlbench_lmeval import __version__, benchmarks
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.execution import Limits
from sqlbench_lmeval.execution.job import DEFAULT_LIMITS
from sqlbench_lmeval.lmeval.task_specs import task_groups
from sqlbench_lmeval.paths import write_text_atomically
from sqlbench_lmeval.report.explorer import asset as explorer_asset
from sqlbench_lmeval.report.explorer import script_json
from sqlbench_lmeval.report.stats import (
    LEVEL,
    RESAMPLES,
    SEED,
    bootstrap_cis,
    bootstrap_ranks,
    holm,
    not_different_groups,
    paired_mcnemar_matrix,
)
from sqlbench_lmeval.report.tables import Section, Table, fmt, to_markdown
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION
from sqlbench_lmeval.scoring.metrics import (
    EX,
    EX_ON_HEALTHY_GOLD,
    EX_READS_DATA,
    STRUCTURAL_SIMILARITY,
    VES,
)
from sqlbench_lmeval.submission import leaderboard_cost
from sqlbench_lmeval.submission.cross_run import SHARED_OUTPUTS_SHARE, cross_run_findings
from sqlbench_lmeval.submission.leaderboard_plot import forest_plot
from sqlbench_lmeval.submission.logged import read_submissions, sha256_file
from sqlbench_lmeval.submission.verify import (
    INFO,
    RANKED_VERDICTS,
    REJECT,
    REJECTED,
    UNATTESTED,
    UNATTESTED_SEVERITY,
    VERIFIED,
    WITH_FINDINGS,
    TaskVerification,
    Verification,
    run_limits,
    verdict_of,
    verify_submission,
)
from sqlbench_lmeval.submission.verify_report import report_stem, write_verification

#: Severities of the findings that keep a run off the ranking (its reasons).
NOT_RANKED_SEVERITIES = (REJECT, UNATTESTED_SEVERITY)
#: Share of a run's answered items that are gold (``gold_verbatim``: our gold or the published
#: one, whole or inside the answer) from which the run is listed apart, never ranked: a model
#: that writes its own SQL rarely writes the benchmark's gold token for token on one item in
#: ten; a run made of gold is a lookup, not a model.
GOLD_COPY_SHARE = 0.10
#: Findings on decoding that make a run one of other settings: ranked apart from (not among)
#: the runs on the task's settings.
OTHER_SETTINGS_CODES = ("decoding_settings", "generation_limit")
#: Family-wise error level of the groups.
ALPHA = 0.05
LEADERBOARD_FILE = "leaderboard.html"
REPORTS = "verifications"
#: The four verdicts in the order the page counts them: the ranked two, then the two apart.
VERDICT_ORDER = (VERIFIED, WITH_FINDINGS, REJECTED, UNATTESTED)
#: A run's findings are listed with its reasons (these severities) first.
_SEVERITY_ORDER = {REJECT: 0, UNATTESTED_SEVERITY: 1}
#: What each kind of finding means, in a few words (docs/verify.md lists them with their
#: verdicts); a code not named here is shown with its underscores as spaces.
FINDING_TITLES = {
    "missing_items": "items not answered, scored 0",
    "reads_no_table": "answers that do not read the data",
    "gold_verbatim": "answers that are gold",
    "truncated_outputs": "outputs cut by the generation limit",
    "identical_outputs": "outputs identical to another run's",
    "shared_outputs": "outputs shared with another run",
    "cost_tokens_differ": "token counts their tokenizer does not give",
    "edited_documents": "logged questions or gold edited",
    "task_config_missing": "no task configuration recorded",
    "lm_eval_version": "another lm-eval version",
    "comparison_version": "judged under another comparison version",
    "dataset_version": "run on other data",
    "engine": "run on another engine",
    "prompt_exceeds_context": "prompts longer than the model's context",
    "item_mismatch": "claimed item scores differ from ours",
    "aggregate_mismatch": "claimed task numbers differ from ours",
    "edited_prompt": "prompts edited",
    "added_prompt_text": "text added to the prompts",
    "task_definition": "another prompt function",
    "task_description": "a task description added",
    "not_zero_shot": "few-shot examples in the prompts",
    "sampling_on_greedy_task": "sampling on a greedy task",
    "sampling_settings": "sampling settings not the task's",
    "decoding_settings": "decoding settings that change greedy answers",
    "generation_limit": "another generation limit",
    "repeats": "several answers per item",
    "system_instruction": "a system instruction",
    "task_version": "another task version",
    "duplicate_items": "items answered twice",
    "unknown_items": "ids the task does not have",
    "unnamed_lines": "lines with no item id",
    "unattested": "nothing records how the outputs were made",
    "prompt_not_logged": "prompts not logged",
}


@dataclass(frozen=True)
class LeaderboardFiles:
    html: Path
    csv: Path
    json: Path
    markdown: Path
    verified: tuple[str, ...]  # runs re-scored now
    cached: tuple[str, ...]  # runs whose verification came from the cache


def build_leaderboard(
    specs: Sequence[str],
    output: str | Path,
    *,
    cache_dir=None,
    timeout_s: float | None = None,
    max_rows: int = DEFAULT_LIMITS.max_rows,
    workers: int | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    progress: bool = False,
    source=None,
    options=None,
    task: str | None = None,
) -> LeaderboardFiles:
    """Verify (or take from the cache) every run of ``specs`` and write the leaderboard. Each
    run is re-scored with ``max_rows`` and ``timeout_s``, else its engine's default time limit
    (``verify.run_limits``). ``task``: the task of predictions files (and the one task taken
    from every other run)."""
    folder = Path(output)
    reports = folder / REPORTS
    reports.mkdir(parents=True, exist_ok=True)
    verifications, verified, cached = [], [], []
    hashes = _FileHashes(reports / "file-hashes.json")
    submissions = [
        sub for spec in specs for sub in read_submissions(spec, task=task, hasher=hashes)
    ]
    hashes.save()
    if not submissions:
        raise UserError("no runs given")
    # Before any scoring: two runs of one name could not be told apart on the board.
    names = [submission.name for submission in submissions]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        sources = "; ".join(f"{sub.name}: {sub.source}" for sub in submissions if sub.name in twice)
        raise UserError(
            f"two runs have the same name ({', '.join(twice)}: {sources}); name them with NAME=PATH"
        )
    for submission in submissions:
        limits = run_limits(submission, options, timeout_s, max_rows)
        # By content only: a renamed run is the same run (its name is set on reading).
        key = _cache_key(submission.inputs, limits, options, [t.name for t in submission.tasks])
        path = reports / f"cache-{key}.json"
        if path.exists():
            verification = dataclasses.replace(
                Verification.from_json(json.loads(path.read_text("utf-8"))),
                run=submission.name,
                source=submission.source,
            )
            cached.append(submission.name)
        else:
            verification = verify_submission(
                submission,
                cache_dir=cache_dir,
                limits=limits,
                workers=workers,
                progress=progress,
                source=source,
                options=options,
            )
            # Written only once scoring finished (a failure raised above), and whole: a run
            # stopped mid-write leaves no cache entry behind.
            text = json.dumps(verification.to_json(), ensure_ascii=False, allow_nan=False)
            write_text_atomically(path, text, errors="backslashreplace")
            verified.append(submission.name)
        verifications.append(verification)
    verifications = cross_run_findings(verifications)
    links = {}
    for verification in verifications:
        stem = report_stem(verification.run, verification.inputs)
        # A report whose digest is unchanged (same files, versions and findings) stays.
        marker = reports / f"{stem}.digest"
        digest = verification.digest()
        if not marker.exists() or marker.read_text(encoding="ascii") != digest:
            write_verification(verification, reports, stem)
            marker.write_text(digest, encoding="ascii")
        links[verification.run] = f"{REPORTS}/{stem}.html"
    data = leaderboard_data(verifications, links, resamples=resamples, seed=seed)
    files = LeaderboardFiles(
        html=folder / LEADERBOARD_FILE,
        csv=folder / "leaderboard.csv",
        json=folder / "leaderboard.json",
        markdown=folder / "leaderboard.md",
        verified=tuple(verified),
        cached=tuple(cached),
    )
    files.json.write_text(
        json.dumps(data, ensure_ascii=False, allow_nan=False, indent=1) + "\n",
        encoding="utf-8",
        errors="backslashreplace",
    )
    _write_csv(data, files.csv)
    files.markdown.write_text(
        to_markdown("Leaderboard", _sections(data)), encoding="utf-8", errors="backslashreplace"
    )
    files.html.write_text(render_leaderboard(data), encoding="utf-8", errors="backslashreplace")
    return files


class _FileHashes:
    """sha256 of run files, remembered with each file's size and modification time (as git's
    index does), so an unchanged file of a large run is not read again to find its cache."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.known = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.known = {}

    def __call__(self, file: Path) -> str:
        stat = file.stat()
        key = str(file.resolve())
        entry = self.known.get(key)
        if entry and entry[:2] == [stat.st_size, stat.st_mtime_ns]:
            return entry[2]
        digest = sha256_file(file)
        self.known[key] = [stat.st_size, stat.st_mtime_ns, digest]
        return digest

    def save(self) -> None:
        self.path.write_text(json.dumps(self.known), encoding="utf-8")


def _cache_key(inputs, limits: Limits, options=None, tasks=()) -> str:
    """The cache entry of a run's verification: its files' contents, the tasks taken from
    them, the data options, the scorer's versions and the limits; never its name."""
    content = {
        "tasks": list(tasks),
        "options": {key: str(value) for key, value in sorted((options or {}).items())},
        "inputs": [list(entry) for entry in inputs],
        "sqlbench_lmeval_version": __version__,
        "comparison_version": COMPARISON_VERSION,
        "limits": [limits.timeout_s, limits.max_rows],
        # 2: a failure of the evaluation stops re-scoring; verifications kept before could
        # hold such failures scored as the model's 0s, so none of them is reused.
        # 3: a run of another tested lm-eval version is no finding, and claims made by an
        # lm-eval version's way of passing results are named as that, not as an edit.
        # 4: items carry normalised output keys, gold copies are found in more forms.
        # 5: gold copies are counted of the answered items, saying how many were answered.
        "verification_format": 5,
    }
    text = json.dumps(content, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:32]


# --- the numbers --------------------------------------------------------------------------------


def leaderboard_data(
    verifications: Sequence[Verification],
    links: dict[str, str],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict:
    """Every table of the leaderboard as JSON-ready data (docs/verify.md)."""
    boards: dict[tuple[str, str | None], list] = {}
    for verification in verifications:
        for task in _with_groups(verification.tasks):
            boards.setdefault((task.task, task.dataset_version), []).append((verification, task))
    tasks = []
    for (task_name, dataset_version), entries in boards.items():
        tasks.append(_board(task_name, dataset_version, entries, links, resamples, seed))
    return {
        "title": "Leaderboard",
        "sqlbench_lmeval_version": __version__,
        "comparison_version": COMPARISON_VERSION,
        "level": LEVEL,
        "alpha": ALPHA,
        "resamples": resamples,
        "seed": seed,
        "cost_legend": leaderboard_cost.LEGEND,
        "tasks": tasks,
    }


def _with_groups(tasks: Sequence[TaskVerification]) -> list[TaskVerification]:
    """``tasks``, with every complete lm-eval group of ours (``logiccat``: its four category
    tasks, 4,036 items) as one task in their place, as lm-eval reports it."""
    by_name = {task.task: task for task in tasks}
    merged, covered = [], set()
    for group, members in task_groups().items():
        if not members or not all(name in by_name for name in members):
            continue
        parts = [by_name[name] for name in members]
        versions = {part.dataset_version for part in parts}
        if len(versions) != 1:
            continue
        merged.append(
            TaskVerification(
                task=group,
                benchmark=parts[0].benchmark,
                findings=tuple(f for part in parts for f in part.findings),
                metrics={},
                metrics_logged={},
                claimed={},
                facts={},
                items=tuple(item for part in parts for item in part.items),
                outputs_sha256=hashlib.sha256(
                    "".join(part.outputs_sha256 for part in parts).encode("ascii")
                ).hexdigest(),
                dataset_version=parts[0].dataset_version,
            )
        )
        covered.update(members)
    return merged + [task for task in tasks if task.task not in covered]


def _board(task_name, dataset_version, entries, links, resamples, seed) -> dict:
    ids = sorted({item["id"] for _, task in entries for item in task.items})
    categories = sorted(
        {item["category"] for _, t in entries for item in t.items if item.get("category")}
    )
    models = []
    names = {task_name, *task_groups().get(task_name, ())}  # a group's findings: its tasks'
    for verification, task in entries:
        by_id = {item["id"]: item for item in task.items}
        rows = [by_id.get(i, {}) for i in ids]
        # The task's own findings and the run's about it (e.g. outputs identical to another's).
        findings = [*task.findings, *(f for f in verification.findings if f.task in names)]
        model = {
            "name": verification.run,
            "verdict": verdict_of(findings),
            "run_verdict": verification.verdict,
            "digest": verification.digest(),
            "report": links.get(verification.run),
            "n": len(ids),
            # Items it logged an answer for (``missing_items`` names the others): a run is
            # ranked only beside runs that answered the same items (:func:`_set_apart`).
            "_answered": frozenset(ids) - _missing_items(findings),
            VES: _mean(rows, VES),
            EX_ON_HEALTHY_GOLD: _mean([r for r in rows if r.get("healthy_gold")], EX),
            EX_READS_DATA: _mean(rows, EX_READS_DATA),
            "truncation_rate": _mean([{"t": float(bool(r.get("truncated")))} for r in rows], "t"),
            "findings": sum(1 for f in findings if f.severity != INFO),
            "findings_summary": findings_summary(findings),
            # Why a run is not ranked (rejected, unattested): the findings the verdict rests on.
            "reasons": [
                f"{f.code}: {f.message}" for f in findings if f.severity in NOT_RANKED_SEVERITIES
            ],
            "gold_copy_share": _gold_copy_share(rows, findings),
            "other_settings": [
                f"{f.code}: {f.message}" for f in findings if f.code in OTHER_SETTINGS_CODES
            ],
        }
        ex = [_value(r, EX) for r in rows]
        model.update(_interval(EX, ex, resamples, seed))
        model["by_category"] = {
            category: _interval(
                EX,
                [_value(r, EX) for r in rows if r.get("category") == category],
                resamples,
                seed,
            )
            for category in categories
        }
        if any(STRUCTURAL_SIMILARITY in r for r in rows):
            model[STRUCTURAL_SIMILARITY] = _mean(rows, STRUCTURAL_SIMILARITY)
        model.update(leaderboard_cost.model_cost(rows, findings))  # metered runs: tokens
        model["answered"] = len(model["_answered"])
        model["_ex"] = ex
        model["_outputs"] = {row["id"]: row["output_key"] for row in rows if row.get("output_key")}
        models.append(model)
    reference = _set_apart(models)
    ranked = [m for m in models if m["standing"] == RANKED]
    if ranked:
        matrix = np.array([m["_ex"] for m in ranked], dtype=float).T
        for model, interval in zip(
            ranked, bootstrap_ranks(matrix, resamples=resamples, seed=seed), strict=True
        ):
            model.update(rank=interval.rank, rank_low=interval.low, rank_high=interval.high)
        p = paired_mcnemar_matrix(matrix)
        pairs = [(i, j) for i in range(len(ranked)) for j in range(i + 1, len(ranked))]
        adjusted = holm([p[i][j] for i, j in pairs])
        different = [[False] * len(ranked) for _ in ranked]
        for (i, j), value in zip(pairs, adjusted, strict=True):
            different[i][j] = different[j][i] = value < ALPHA
        order = sorted(range(len(ranked)), key=lambda i: (-ranked[i][EX], ranked[i]["name"]))
        groups = not_different_groups(order, different)
        for model in ranked:
            model["groups"] = ""
        for index, group in enumerate(groups):
            for member in group:
                ranked[member]["groups"] += _letter(index)
        # On a category, a model's rank is its place among the ranked models there.
        for category in categories:
            values = [m["by_category"][category][EX] for m in ranked]
            for model in ranked:
                mine = model["by_category"][category][EX]
                higher = sum(1 for v in values if not _missing(v) and v > mine)
                model["by_category"][category]["rank"] = None if _missing(mine) else 1 + higher
    for model in models:
        del model["_ex"], model["_outputs"], model["_answered"]
        model.setdefault("rank", None)
        model.setdefault("rank_low", None)
        model.setdefault("rank_high", None)
        model.setdefault("groups", "")
    models.sort(key=lambda m: (m["rank"] is None, m["rank"] or 0, -m[EX], m["name"]))
    apart = [m for m in models if m["standing"] != RANKED]
    apart.sort(key=lambda m: (m["verdict"], m["name"]))
    return {
        "task": task_name,
        "dataset_version": dataset_version,
        # A board's test set scored with our copy of its hidden gold says so (logiccat_test).
        "gold_note": benchmarks.gold_note(dataset_version),
        "n_items": len(ids),
        # How many items the ranked runs answered (each the same ones): fewer than n_items
        # when every run of the ranked verdicts is partial (a board of --limit runs).
        "ranked_items": len(reference),
        "categories": categories,
        # The runs of each verdict (all of them), and the runs of a ranked verdict that are
        # listed apart all the same (gold copies, partial runs, shared outputs, other decoding
        # settings).
        "verdicts": {
            verdict: sorted(m["name"] for m in models if m["verdict"] == verdict)
            for verdict in VERDICT_ORDER
        },
        "set_apart": sorted(
            m["name"] for m in models if m["verdict"] in RANKED_VERDICTS and m["standing"] != RANKED
        ),
        # TPC-DS: the paper's primary metric, shown beside EX (not ranked by).
        "similarity": any(STRUCTURAL_SIMILARITY in model for model in models),
        # Metered runs (sqlbench-metered): the cost columns and their legend are shown.
        "cost": leaderboard_cost.board_has_cost(models),
        "models": [_finite(model) for model in models if model["standing"] == RANKED],
        # Rejected and unattested runs, and those set apart: listed with their reasons.
        "not_ranked": [_finite(model) for model in apart],
    }


#: A run's standing on its board: ranked, or one of the reasons it is listed apart.
RANKED, NOT_VERIFIED = "ranked", "not verified"
GOLD_COPIES, SHARED, OTHER_SETTINGS = "gold copies", "shared outputs", "other decoding settings"
PARTIAL = "partial run"


def _missing_items(findings) -> set[int]:
    """The items a run logged no answer for (``missing_items``: ``--limit``, or lines gone)."""
    return {item for f in findings if f.code == "missing_items" for item in f.items}


def _gold_copy_share(rows, findings) -> float:
    """The share of a run's answered items whose answer is gold (``gold_verbatim``)."""
    answered = {row["id"] for row in rows if row.get("output_key")}
    copied = {item for f in findings if f.code == "gold_verbatim" for item in f.items}
    return len(copied & answered) / len(answered) if answered else 0.0


def _reference_items(models: list[dict]) -> frozenset:
    """The items the ranked runs answered: of the sets of items the verified runs answered
    (those not set apart for gold copies or other settings), the largest (every item of the
    task when a run answered them all), then the one most runs answered, then the one of the
    lowest ids (a rule that cannot depend on the runs' order)."""
    sets = [
        m["_answered"]
        for m in models
        if m["verdict"] in RANKED_VERDICTS
        and m["gold_copy_share"] < GOLD_COPY_SHARE
        and not m["other_settings"]
    ]
    if not sets:
        return frozenset()
    return min(set(sets), key=lambda s: (-len(s), -sets.count(s), sorted(s)))


def _set_apart(models: list[dict]) -> frozenset:
    """Each model's ``standing`` (:data:`RANKED` or why it is listed apart: not verified, gold
    copies, a partial run, other decoding settings, shared outputs), its
    ``shared_output_share`` and, when apart, the reasons (the rule:
    docs/verify.md#the-leaderboard-and-unranked-runs).

    Shared outputs: a run's share is the share of its answered items whose output (normalised,
    ``integrity.output_key``) a run still on the board gave too. From the highest share down,
    while a share reaches ``SHARED_OUTPUTS_SHARE``, the runs of the highest share leave the
    board: a run assembled from two others leaves first, and its sources, once it is gone, stay;
    two copies of one run both leave (which came first cannot be told).

    Partial runs: a run is ranked only beside runs that answered the same items
    (:func:`_reference_items`, which it returns); one that answered others, or fewer, is listed
    apart saying how many it answered."""
    reference = _reference_items(models)
    for model in models:
        model["standing"] = RANKED
        if model["verdict"] not in RANKED_VERDICTS:
            model["standing"] = NOT_VERIFIED
        elif model["gold_copy_share"] >= GOLD_COPY_SHARE:
            model["standing"] = GOLD_COPIES
            model["reasons"].append(
                f"gold copies: {model['gold_copy_share']:.0%} of its answered items are gold "
                f"(listed apart from {GOLD_COPY_SHARE:.0%}): a lookup of gold, not a model"
            )
        elif model["_answered"] != reference:
            model["standing"] = PARTIAL
            theirs = ("all " if len(reference) == model["n"] else "") + f"{len(reference):,}"
            model["reasons"].append(
                f"partial run: answered {model['answered']:,} of the task's {model['n']:,} "
                f"items; the ranked runs answered {theirs} (a run is ranked only beside runs "
                "that answered the same items)"
            )
        elif model["other_settings"]:
            model["standing"] = OTHER_SETTINGS
            model["reasons"] += model["other_settings"]
    remaining = [m for m in models if m["standing"] == RANKED]
    while True:
        shares = {id(m): _shared_share(m, [o for o in remaining if o is not m]) for m in remaining}
        for model in remaining:
            model["shared_output_share"] = shares[id(model)]
        top = max(shares.values(), default=0.0)
        if top < SHARED_OUTPUTS_SHARE:
            break
        for model in [m for m in remaining if shares[id(m)] == top]:
            model["standing"] = SHARED
            model["reasons"].append(
                f"shared outputs: {top:.0%} of its answered items are answered alike by "
                f"another run of this board (listed apart from {SHARED_OUTPUTS_SHARE:.0%})"
            )
        remaining = [m for m in remaining if m["standing"] == RANKED]
    for model in models:
        model.setdefault("shared_output_share", None)
    return reference


def _shared_share(model: dict, others: list[dict]) -> float:
    mine = model["_outputs"]
    if not mine:
        return 0.0
    shared = {
        item for item, key in mine.items() if any(o["_outputs"].get(item) == key for o in others)
    }
    return len(shared) / len(mine)


def findings_summary(findings) -> list[dict]:
    """Every finding that is not a fact, in words: its kind (``title``), how many items it
    concerns (0: the run as a whole), its severity and its full message; those that keep a run
    off the ranking first, then by the number of items.

    >>> from sqlbench_lmeval.submission.verify import Finding
    >>> [s["text"] for s in findings_summary([Finding("integrity", "reads_no_table", "finding",
    ...     "1 answer(s) read no table", (5,))])]
    ['answers that do not read the data (1 item)']
    """
    merged: dict[tuple[str, str], list] = {}  # a group's tasks may each have one kind
    for finding in findings:
        if finding.severity != INFO:
            merged.setdefault((finding.severity, finding.code), []).append(finding)
    counts = {
        key: len({item for finding in found for item in finding.items})
        for key, found in merged.items()
    }
    summary = []
    # The reasons a run is not ranked first, then the kinds that concern the most items.
    for (severity, code), found in sorted(
        merged.items(),
        key=lambda entry: (_SEVERITY_ORDER.get(entry[0][0], 2), -counts[entry[0]], entry[0][1]),
    ):
        title = FINDING_TITLES.get(code, code.replace("_", " "))
        count = counts[(severity, code)]
        text = title + (f" ({count} item{'s' if count != 1 else ''})" if count else "")
        messages = dict.fromkeys(finding.message for finding in found)  # once each, in order
        summary.append(
            {
                "code": code,
                "severity": severity,
                "title": title,
                "items": count,
                "text": text,
                "message": " / ".join(messages),
            }
        )
    return summary


def _findings_text(model) -> str:
    return "; ".join(s["text"] for s in model["findings_summary"]) or "none"


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _letter(index: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return letters[index] if index < len(letters) else f"[{index + 1}]"


def _value(row, name) -> float:
    value = row.get(name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _mean(rows, name) -> float:
    values = [_value(r, name) for r in rows if name in r]
    return float(np.mean(values)) if values else math.nan


def _interval(prefix, values, resamples, seed) -> dict:
    if not values:
        return {prefix: math.nan, f"{prefix}_low": math.nan, f"{prefix}_high": math.nan}
    (interval,) = bootstrap_cis(np.array(values).reshape(-1, 1), resamples=resamples, seed=seed)
    return {prefix: interval.mean, f"{prefix}_low": interval.low, f"{prefix}_high": interval.high}


def _finite(value):
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    return value


# --- renderings ---------------------------------------------------------------------------------


def _ci(model, prefix=EX) -> str:
    mean = model.get(prefix)
    if mean is None:
        return "–"
    return f"{mean:.3f} [{model[f'{prefix}_low']:.3f}, {model[f'{prefix}_high']:.3f}]"


def _rank_text(model) -> tuple[str, str]:
    if model["rank"] is None:
        return "–", "–"
    return str(model["rank"]), f"{model['rank_low']}–{model['rank_high']}"


def _category_text(model, category) -> str:
    """EX on a category and the model's rank there: ``0.500 (#2)``."""
    values = model["by_category"][category]
    rank = values.get("rank")
    return fmt(values[EX]) + (f" (#{rank})" if rank is not None else "")


def verdict_counts_text(board) -> str:
    """``Ranked: 1 verified, 1 verified with findings. Not ranked (listed apart): 1 rejected,
    0 unattested.``, and, when there are any, ``, 2 verified but set apart (gold copies, partial
    runs, shared outputs, other decoding settings)``."""
    counts = {verdict: len(names) for verdict, names in board["verdicts"].items()}
    set_apart = board.get("set_apart") or []
    ranked = ", ".join(
        f"{counts[v] - sum(1 for m in board['not_ranked'] if m['verdict'] == v)} {v}"
        for v in RANKED_VERDICTS
    )
    apart = ", ".join(f"{counts[v]} {v}" for v in VERDICT_ORDER if v not in RANKED_VERDICTS)
    if set_apart:
        apart += (
            f", {len(set_apart)} verified but set apart (gold copies, partial runs, shared "
            "outputs, other decoding settings)"
        )
    return f"Ranked: {ranked}. Not ranked (listed apart): {apart}."


def _sections(data) -> list[Section]:
    method = (
        f"EX with its {data['level']:.0%} percentile bootstrap interval over items "
        f"({data['resamples']:,} resamples, seed {data['seed']}); every number is re-scored "
        "from the run's raw outputs over every item of the task (missing items score 0). Rank "
        "interval: paired bootstrap over items. Group: models sharing a letter are not "
        f"significantly different (exact McNemar on EX, Holm-adjusted over all pairs, "
        f"alpha {data['alpha']}). Only verified runs (with or without findings) are ranked; "
        "rejected runs (the protocol is not the benchmark's, or claims that do not stand) and "
        "unattested ones (nothing records how their outputs were made) are listed apart with "
        "their reasons, and so are verified runs whose answers are gold in "
        f"{GOLD_COPY_SHARE:.0%} of their answered items or more, partial runs (a run is ranked "
        "only beside runs that answered the same items, all the task's when a run did), "
        f"runs that share {SHARED_OUTPUTS_SHARE:.0%} "
        "or more of their answers with another run, and runs on other decoding settings than "
        "the task's. Verified means the outputs score as claimed under the benchmark's "
        "protocol; nothing attests that a model wrote them. EX on a category is followed by "
        "the model's rank among the ranked models there (#n). Findings: each kind the "
        "verification found, with the number of items it concerns (the model's verification "
        "report has them all)."
    )
    sections = [Section("Method", (method,))]
    for board in data["tasks"]:
        similarity = ("Struct. sim.",) if board["similarity"] else ()
        columns = (
            "Rank",
            "Rank 95%",
            "Group",
            "Model",
            "EX [95% CI]",
            "EX healthy gold",
            *similarity,
            "VES",
            *(f"EX {c}" for c in board["categories"]),
            "EX reads data",
            "Truncated",
            *(leaderboard_cost.COLUMNS if board.get("cost") else ()),
            "Verdict",
            "Findings",
        )
        rows = []
        for model in board["models"]:
            rank, interval = _rank_text(model)
            rows.append(
                (
                    rank,
                    interval,
                    model["groups"] or "–",
                    model["name"],
                    _ci(model),
                    fmt(model[EX_ON_HEALTHY_GOLD]),
                    *((fmt(model.get(STRUCTURAL_SIMILARITY)),) if similarity else ()),
                    fmt(model[VES]),
                    *(_category_text(model, c) for c in board["categories"]),
                    fmt(model[EX_READS_DATA]),
                    f"{model['truncation_rate']:.1%}"
                    if model["truncation_rate"] is not None
                    else "–",
                    *(leaderboard_cost.cost_cells(model) if board.get("cost") else ()),
                    model["verdict"],
                    _findings_text(model),
                )
            )
        title = board["task"] + (
            f" ({board['dataset_version']})" if board["dataset_version"] else ""
        )
        note = f" Scored with the {board['gold_note']}." if board.get("gold_note") else ""
        blocks = [f"{_items_text(board)}.{note} {verdict_counts_text(board)}"]
        blocks.append(Table(columns, tuple(rows)))
        if board["not_ranked"]:
            blocks += [
                "Not ranked:",
                Table(
                    (
                        "Model",
                        "Verdict",
                        "EX (re-scored, not ranked)",
                        "EX healthy gold",
                        "Gold copies",
                        "Shared outputs",
                        *(leaderboard_cost.COLUMNS if board.get("cost") else ()),
                        "Reasons",
                        "Other findings",
                    ),
                    tuple(
                        (
                            m["name"],
                            m["verdict"],
                            _ci(m),
                            fmt(m[EX_ON_HEALTHY_GOLD]),
                            _share(m["gold_copy_share"]),
                            _share(m["shared_output_share"]),
                            *(leaderboard_cost.cost_cells(m) if board.get("cost") else ()),
                            "; ".join(m["reasons"]) or "–",
                            _other_findings_text(m),
                        )
                        for m in board["not_ranked"]
                    ),
                ),
            ]
        if board.get("cost"):
            blocks.append(leaderboard_cost.LEGEND)
        sections.append(Section(title, tuple(blocks), level=2))
    return sections


def _items_text(board) -> str:
    """``99 items``, and, on a board of partial runs, how many of them the ranked runs answered."""
    text = f"{board['n_items']:,} items"
    ranked = board.get("ranked_items", board["n_items"])
    if board["models"] and ranked < board["n_items"]:
        text += (
            f"; the ranked runs answered {ranked:,} of them, the same ones (partial runs, ranked "
            "only among themselves; EX counts the other items as 0)"
        )
    return text


def _share(value) -> str:
    return "–" if value is None else f"{value:.0%}"


def _other_findings_text(model) -> str:
    """The findings of a run apart that are not among its reasons."""
    others = [
        s["text"] for s in model["findings_summary"] if s["severity"] not in NOT_RANKED_SEVERITIES
    ]
    return "; ".join(others) or "none"


def _write_csv(data, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8", errors="backslashreplace") as stream:
        writer = csv.writer(stream)
        writer.writerow(
            [
                "task",
                "dataset_version",
                "standing",
                "rank",
                "rank_low",
                "rank_high",
                "group",
                "model",
                EX,
                "ex_low",
                "ex_high",
                EX_ON_HEALTHY_GOLD,
                VES,
                EX_READS_DATA,
                "truncation_rate",
                STRUCTURAL_SIMILARITY,
                "category",
                "verdict",
                "findings",
                "digest",
                "report",
                "reasons",
                "gold_copy_share",
                "shared_output_share",
                *leaderboard_cost.FIELDS,
            ]
        )
        for board in data["tasks"]:
            for model in [*board["models"], *board["not_ranked"]]:
                # The verdict groups: verified runs (with or without findings) are ranked,
                # rejected and unattested ones are listed apart with their reasons.
                standing = "ranked" if model["standing"] == RANKED else "not ranked"
                base = [
                    board["task"],
                    board["dataset_version"],
                    standing,
                    model["rank"],
                    model["rank_low"],
                    model["rank_high"],
                    model["groups"],
                    model["name"],
                ]
                tail = [
                    model["verdict"],
                    _findings_text(model),
                    model["digest"],
                    model["report"],
                    " | ".join(model["reasons"]),
                    model["gold_copy_share"],
                    model["shared_output_share"],
                    *(model.get(name) for name in leaderboard_cost.FIELDS),
                ]
                writer.writerow(
                    [
                        *base,
                        model[EX],
                        model["ex_low"],
                        model["ex_high"],
                        model[EX_ON_HEALTHY_GOLD],
                        model[VES],
                        model[EX_READS_DATA],
                        model["truncation_rate"],
                        model.get(STRUCTURAL_SIMILARITY, ""),
                        "",
                        *tail,
                    ]
                )
                for category, values in model["by_category"].items():
                    # A category row carries the rank within the category (no interval, no
                    # group: those are the whole task's).
                    writer.writerow(
                        [
                            *base[:3],
                            values.get("rank"),
                            "",
                            "",
                            "",
                            model["name"],
                            values[EX],
                            values["ex_low"],
                            values["ex_high"],
                            "",
                            "",
                            "",
                            "",
                            "",
                            category,
                            *tail,
                        ]
                    )


def forest_plots(data: dict) -> dict[str, dict[str, str]]:
    """Per task board (by its index) with ranked models: the forest plot of EX on the whole
    task (key ``""``) and on each category, as ``data:`` URIs."""
    plots = {}
    for index, board in enumerate(data["tasks"]):
        if not board["models"]:
            continue
        title = board["task"] + (
            f" ({board['dataset_version']})" if board["dataset_version"] else ""
        )
        plots[str(index)] = {
            category or "": forest_plot(
                board["models"], f"{title}{': ' + category if category else ''}", category
            )
            for category in (None, *board["categories"])
        }
    return plots


def _asset(name: str) -> str:
    return (resources.files("sqlbench_lmeval.submission") / "leaderboard_assets" / name).read_text(
        encoding="utf-8"
    )


def render_leaderboard(data: dict) -> str:
    """The page: inline style, the data and its forest plots (:func:`forest_plots`) as inert
    JSON blocks, inline script."""
    plots = script_json(forest_plots(data))
    return "\n".join(
        (
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{html.escape(data['title'])}</title>",
            f"<style>{_asset('leaderboard.css')}</style>",
            "</head><body>",
            '<div id="app"><p>Loading…</p></div>',
            f'<script type="application/json" id="leaderboard-data">{script_json(data)}</script>',
            f'<script type="application/json" id="leaderboard-plots">{plots}</script>',
            f"<script>{explorer_asset('dom.js')}</script>",
            f"<script>{_asset('leaderboard.js')}</script>",
            "</body></html>",
        )
    )


__all__ = [
    "LeaderboardFiles",
    "build_leaderboard",
    "findings_summary",
    "forest_plots",
    "leaderboard_data",
    "render_leaderboard",
]
