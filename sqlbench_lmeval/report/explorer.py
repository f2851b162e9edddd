"""``sqlbench-lmeval explore``: one self-contained ``explorer.html`` to compare runs item by item.

The page needs no server and no network: its data is embedded as JSON in a
``<script type="application/json">`` block, and its script and style (``explorer_assets/``,
plain JavaScript and CSS) are inlined. The script builds every element with ``textContent``,
never ``innerHTML``, so nothing a model wrote can become markup; the JSON block escapes
``<``, ``>`` and ``&`` so no text can close it.

The data is built from the runs :mod:`report.runs` reads (lm-eval output folders or ``score``
files), one row per (task, item id) over all runs, with each run's verdict (:func:`verdict`)
and, for the item view, what the score dicts and samples recorded: question, database, the
prompt or, for LogicCat, the schema (once per database; lm-eval samples only), gold SQL, raw
output, extracted SQL, error, result previews (``preview``) and TPC-DS per-feature
similarities.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from sqlbench_lmeval.report.analysis import FEATURE_METRICS, error_kind, label, outcome_of
from sqlbench_lmeval.report.runs import UNKNOWN_STATUS, Run, ScoredItem
from sqlbench_lmeval.scoring.pipeline import VERDICTS as SCORING_VERDICTS

#: Verdicts in display order (``scoring.pipeline.VERDICTS``, the classes every count uses). An
#: error's verdict is "error"; its label adds the error kind.
VERDICTS = (
    *SCORING_VERDICTS,
    UNKNOWN_STATUS,  # rebuilt from lm-eval's numbers when the score dict was unreadable
)

#: The file ``write_explorer`` writes into its output folder.
EXPLORER_FILE = "explorer.html"


def verdict(item: ScoredItem) -> str:
    """One word for how a run did on an item: the report's outcome class
    (``scoring.pipeline.verdict``: an output cut off by the generation limit is ``truncated``
    unless it was correct)."""
    return outcome_of(item)


def verdict_label(item: ScoredItem) -> str:
    """The verdict as shown in the table: errors say their kind (``error: no such column``)."""
    kind = verdict(item)
    return f"error: {error_kind(item.error)}" if kind == "error" else kind.replace("_", " ")


def explorer_data(runs: Sequence[Run]) -> dict:
    """Everything the page shows, as JSON-ready data: run names, then one entry per item."""
    rows: dict[tuple[str, int], dict] = {}
    for index, run in enumerate(runs):
        for task in run.tasks:
            for item in task.items:
                row = rows.get((task.name, item.id))
                if row is None:
                    row = rows[(task.name, item.id)] = _item_row(task.name, item, len(runs))
                _fill_shared(row, item)
                row["results"][index] = _run_result(item)
    ordered = sorted(rows.values(), key=lambda row: (row["task"], row["id"]))
    schemas = {}
    for row in ordered:
        # A database's schema is stored once, not per item; the prompt, which repeats it
        # around the question, is dropped where the schema is known.
        schema = row.pop("schema", None)
        if schema is not None and row.get("db_id"):
            schemas.setdefault(row["db_id"], schema)
            row.pop("prompt", None)
    return {
        "runs": [run.name for run in runs],
        "verdicts": list(VERDICTS),
        "schemas": schemas,
        "items": ordered,
    }


def _item_row(task: str, item: ScoredItem, n_runs: int) -> dict:
    return {
        "key": f"{task}/{item.id}",
        "task": task,
        "id": item.id,
        "category": item.category or "",
        "gold_status": item.gold_status,
        "flags": list(item.flags),
        "results": [None] * n_runs,
    }


def _fill_shared(row: dict, item: ScoredItem) -> None:
    """Item facts every run shares; the first run that recorded one supplies it."""
    shared = ("question", "gold_sql", "db_path", "db_id", "schema", "prompt", "gold_preview")
    for name in (*shared, "gold_error"):
        if name not in row and item.details.get(name) is not None:
            row[name] = item.details[name]


def _run_result(item: ScoredItem) -> dict:
    similarities = {
        label(name): _finite(value)
        for name, value in sorted(item.numbers.items())
        if name in FEATURE_METRICS
    }
    return {
        "verdict": verdict(item),
        "label": verdict_label(item),
        "status": item.status,
        "reason": item.reason,
        "error": item.error,
        "extracted_sql": item.extracted_sql,
        "raw_output": item.details.get("raw_output"),
        "executed_sql": item.details.get("executed_sql"),
        "preview": item.details.get("prediction_preview"),
        "similarity": similarities or None,
    }


def _finite(value: float) -> float | None:
    return None if math.isnan(value) or math.isinf(value) else value


def script_json(data) -> str:
    """``data`` as JSON that is safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` (and
    the JavaScript line separators) are written as ``\\u`` escapes, so no string can end the
    element or open a comment; lone surrogates stay JSON escapes (``ensure_ascii``)."""
    text = json.dumps(data, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    for character in "<>&":
        text = text.replace(character, f"\\u{ord(character):04x}")
    return text


def asset(name: str) -> str:
    """A file of ``explorer_assets/`` (``dom.js`` is shared with the leaderboard page)."""
    return (resources.files("sqlbench_lmeval.report") / "explorer_assets" / name).read_text(
        encoding="utf-8"
    )


def render_explorer(data: dict, title: str = "sqlbench-lmeval explorer") -> str:
    """The whole page: inline style, the data block, inline script."""
    return "\n".join(
        (
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{html.escape(title)}</title>",
            f"<style>{asset('explorer.css')}</style>",
            "</head><body>",
            '<div id="app"><p>Loading…</p></div>',
            f'<script type="application/json" id="explorer-data">{script_json(data)}</script>',
            f"<script>{asset('dom.js')}</script>",
            f"<script>{asset('explorer.js')}</script>",
            "</body></html>",
        )
    )


def write_explorer(runs: Sequence[Run], output: str | Path) -> Path:
    """Write ``explorer.html`` into the folder ``output`` (created if needed); its path."""
    folder = Path(output)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / EXPLORER_FILE
    names = ", ".join(run.name for run in runs)
    path.write_text(render_explorer(explorer_data(runs), f"Explorer: {names}"), encoding="utf-8")
    return path


__all__ = [
    "EXPLORER_FILE",
    "VERDICTS",
    "asset",
    "explorer_data",
    "render_explorer",
    "script_json",
    "verdict",
    "verdict_label",
    "write_explorer",
]
