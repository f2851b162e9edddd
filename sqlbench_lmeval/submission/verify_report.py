"""A verification as a document: Markdown, a standalone HTML page and JSON. Rendering only
(``verify`` makes the numbers); the document model and its two renderings are the report's
(``report.tables``), so every text from a run is escaped in HTML there."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.report.tables import Section, Table, fmt, to_html, to_markdown
from sqlbench_lmeval.scoring.metrics import (
    EX,
    EX_ON_HEALTHY_GOLD,
    EX_READS_DATA,
    EX_SET,
    EX_STRICT,
    PASS_AT,
    STRUCTURAL_SIMILARITY,
    VES,
    VOTED_EX,
    names,
    not_defined,
)
from sqlbench_lmeval.submission.verify import (
    VERIFIED_MEANS,
    Finding,
    Verification,
    no_full_collections,
)

#: Item ids listed per finding in Markdown/HTML (the JSON lists them all).
SHOWN_IDS = 30


def sections(verification: Verification, data: dict | None = None) -> list[Section]:
    """The report's sections; ``data``: ``verification.to_json()`` when already made."""
    data = verification.to_json() if data is None else data
    overview = Table(
        ("Field", "Value"),
        (
            ("Run", verification.run),
            ("Source", verification.source),
            ("Kind", verification.kind),
            ("Verdict", verification.verdict),
            ("Digest (sha256)", data["digest"]),
            (
                "Verified with",
                f"sqlbench-lmeval {data['sqlbench_lmeval_version']}, "
                f"comparison version {data['comparison_version']}",
            ),
            *((f"Input {name}", sha) for name, sha in verification.inputs),
        ),
    )
    blocks = [
        overview,
        "Verdict: rejected when the protocol is not the benchmark's (prompt text beyond what a "
        "recorded chat template adds, few-shot, sampling on a greedy task, another task "
        "version or definition), when claimed numbers differ from ours without a benign named "
        "cause, or when ids are duplicated or unknown; unattested when nothing records how the "
        "outputs were made (a predictions file or a score output); verified with findings when "
        "a reader must know something about the answers; else verified. Numbers are re-scored "
        "from the raw outputs with the installed scorer, over every item of the task (a "
        "missing item scores 0).",
        VERIFIED_MEANS,
    ]
    result = [Section("Verification", tuple(blocks))]
    if verification.findings:
        result.append(Section("Run", (_findings_table(verification.findings),), level=3))
    for task in verification.tasks:
        metrics = task.metrics
        numbers = Table(
            ("Number", "Re-scored (all items)", "Re-scored (logged items)", "Claimed"),
            tuple(
                (
                    name,
                    fmt(metrics.get(name, float("nan")), 4),
                    fmt(task.metrics_logged.get(name, float("nan")), 4),
                    fmt(task.claimed.get(name, float("nan")), 4),
                )
                for name in _shown_numbers(task)
            )
            + tuple((name, reason, reason, "") for name, reason in _undefined(task)),
            (False, True, True, True),
        )
        facts = Table(
            ("Setting", "Value"),
            tuple((key, _text(value)) for key, value in task.facts.items())
            + (
                ("items", str(metrics.get("n"))),
                ("dataset_version", task.dataset_version or "unknown"),
                ("verdict counts", _text(metrics.get("verdict_counts"))),
                ("raw outputs sha256", task.outputs_sha256),
            ),
        )
        blocks = [f"Verdict: {task.verdict}.", numbers, facts]
        blocks.append(_findings_table(task.findings) if task.findings else "No findings.")
        result.append(Section(f"{task.task} ({task.benchmark})", tuple(blocks), level=2))
    return result


def _shown_numbers(task) -> list[str]:
    names = [VES, EX, EX_READS_DATA, EX_STRICT, EX_SET, EX_ON_HEALTHY_GOLD]
    names += [STRUCTURAL_SIMILARITY, VOTED_EX, PASS_AT[1]]
    names += sorted(
        name
        for name in task.metrics
        if name.startswith("ex_")
        and name not in names
        and name.removeprefix("ex_") in {i.get("category") for i in task.items}
    )
    return [name for name in names if name in task.metrics or name in task.claimed]


def _undefined(task) -> list[tuple[str, str]]:
    """Summary metrics the task's engine cannot give, with why (r_ves where the engine counts
    no work): said so, where a 0 would read like a measurement."""
    engine = task.facts.get("engine")
    reasons = [(n, not_defined(n, engine)) for n in names(in_summary=True) if n not in task.metrics]
    return [(name, reason) for name, reason in reasons if reason is not None]


def _findings_table(findings: tuple[Finding, ...]) -> Table:
    return Table(
        ("Severity", "Check", "Code", "Finding", "Items"),
        tuple(
            (
                finding.severity,
                finding.check,
                finding.code,
                finding.message,
                _ids(finding.items),
            )
            for finding in findings
        ),
    )


def _ids(ids) -> str:
    shown = ", ".join(map(str, ids[:SHOWN_IDS]))
    more = len(ids) - SHOWN_IDS
    return shown + (f" … (+{more})" if more > 0 else "") if ids else "–"


def _text(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def report_stem(text: str, inputs=()) -> str:
    """A file name for the report of run ``text`` made of the files ``inputs`` ((name, sha256)
    pairs): its name made safe, and a hash of the name and the files' contents, so that names
    that become the same, and two runs of one name (a model run into two output folders), never
    write one file."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_.") or "run"
    content = json.dumps([text, [list(entry) for entry in inputs]], ensure_ascii=True)
    return f"{slug[:60]}-{hashlib.sha256(content.encode('ascii')).hexdigest()[:12]}"


def report_stems(runs: Sequence[tuple[str, Sequence, str]]) -> list[str]:
    """:func:`report_stem` of each run (its name, the files it read, its source), known before
    any scoring. Two runs of one name and the same files (a copy in another folder) get their
    sources in their hashes, so neither report overwrites the other; one source given twice
    under one name is refused (a :class:`UserError`): it would be one report written twice."""
    stems = [report_stem(name, inputs) for name, inputs, _ in runs]
    repeated = Counter(stems)
    given = Counter((stem, source) for stem, (_, _, source) in zip(stems, runs, strict=True))
    twice = sorted(source for (_, source), count in given.items() if count > 1)
    if twice:
        raise UserError(
            f"{', '.join(twice)} given twice under one name: give each run once (or name the "
            "copies NAME=PATH)"
        )
    return [
        report_stem(name, [*inputs, ("source", source)]) if repeated[stem] > 1 else stem
        for stem, (name, inputs, source) in zip(stems, runs, strict=True)
    ]


def write_verification(verification: Verification, folder: Path, stem: str) -> dict[str, Path]:
    """``<stem>.json``, ``<stem>.md`` and ``<stem>.html`` in ``folder``; their paths."""
    with no_full_collections():
        return _write_verification(verification, folder, stem)


def _write_verification(verification: Verification, folder: Path, stem: str) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    title = f"Verification of {verification.run}"
    data = verification.to_json()
    parts = sections(verification, data)
    paths = {
        "json": folder / f"{stem}.json",
        "markdown": folder / f"{stem}.md",
        "html": folder / f"{stem}.html",
    }
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, indent=1)
    paths["json"].write_text(text + "\n", encoding="utf-8", errors="backslashreplace")
    paths["markdown"].write_text(
        to_markdown(title, parts), encoding="utf-8", errors="backslashreplace"
    )
    paths["html"].write_text(to_html(title, parts), encoding="utf-8", errors="backslashreplace")
    return paths


__all__ = ["report_stem", "report_stems", "sections", "write_verification"]
