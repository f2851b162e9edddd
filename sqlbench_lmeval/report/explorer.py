"""``sqlbench-lmeval explore``: one self-contained ``explorer.html`` to compare runs item by item.
:func:`explorer_data` gathers, from the runs :mod:`report.runs` reads, one row per task and item
id with each run's verdict, what the score dicts recorded and what explains the verdict in words
(:data:`REASONS`, :func:`ties_text`, :func:`efficiency_text`, :data:`DATA_DEPENDENCE_WORDS`);
:func:`render_explorer` inlines it, as JSON no text can close (:func:`script_json`), with the
page's script and style (what the page shows, and why a model's text stays text:
docs/reports.md#explorer-where-runs-differ-item-by-item).

>>> print(script_json({"sql": "</script><b>"}))
{"sql":"\\u003c/script\\u003e\\u003cb\\u003e"}
>>> ties_text("answers", "6")
"gold's ORDER BY and LIMIT leave ties: 6 different answers are right ..."
>>> data_dependence_text("no_table")
'Data dependence: does not read the data: it names no table (a constant); flagged, so EX ...'
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

from sqlbench_lmeval.paths import shared_path
from sqlbench_lmeval.report.analysis import (
    FEATURE_METRICS,
    STRUCTURAL_SIMILARITY,
    error_kind,
    label,
    outcome_of,
)
from sqlbench_lmeval.report.metadata import marked
from sqlbench_lmeval.report.runs import UNKNOWN_STATUS, Run
from sqlbench_lmeval.scoring.answer import READS_NO_TABLE
from sqlbench_lmeval.scoring.cost import TOKENIZER, USAGE, Cost
from sqlbench_lmeval.scoring.data_dependence import (
    CHANGED,
    DATA_DEPENDENCE,
    DIFFERS,
    FLAGGED,
    NO_TABLE,
    NOT_TESTED,
    UNCHANGED,
    UNDECIDABLE,
)
from sqlbench_lmeval.scoring.efficiency import r_ves_reward, resolved_by_counts, work_ratio
from sqlbench_lmeval.scoring.gold_ties import ANSWERS, NO_GOLD_RESULT, NONE, NOT_HANDLED
from sqlbench_lmeval.scoring.item import BROKEN_GOLD
from sqlbench_lmeval.scoring.metrics import (
    ACCEPTABLE,
    EX_READS_DATA,
    R_VES,
    TIE_STATUS,
    not_defined,
)
from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.scoring.tie_compare import TIE_EQUIVALENT
from sqlbench_lmeval.scoring.verdicts import VERDICTS as SCORING_VERDICTS
from sqlbench_lmeval.vocabulary import Reason, VerdictClass

#: Verdicts in display order (``scoring.verdicts.VERDICTS``, the classes every count uses). An
#: error's verdict is "error"; its label adds the error kind.
VERDICTS = (
    *SCORING_VERDICTS,
    UNKNOWN_STATUS,  # rebuilt from lm-eval's numbers when the score dict was unreadable
)

#: The file ``write_explorer`` writes into its output folder.
EXPLORER_FILE = "explorer.html"

#: Comparison reasons in words (``compare.compare`` and ``gold_ties.tie_verdict``); other
#: reasons (errors, refusals) are shown as they are, beside the error message.
REASONS = {
    Reason.MATCH: "the same result as gold",
    TIE_EQUIVALENT: (
        "correct under tie-aware EX: not gold's own rows, but another answer gold's ORDER BY "
        "and LIMIT allow (rows with equal sort keys may come in any order, and a LIMIT that "
        "cuts through such rows may keep any of them); EX strict still compares with gold's "
        "own rows"
    ),
    "order": "the same rows as gold, in an order gold's ORDER BY does not allow",
    "values": "other values than gold's",
    "row_count": "another number of rows than gold's",
    "column_count": "another number of columns than gold's",
    BROKEN_GOLD: (
        "not compared: the benchmark's gold gave no result when its data was prepared (its gold "
        "status says why), so no answer can be right or wrong here; counted as EX 0 for every "
        "model"
    ),
}


#: Where the page's words for ``data_dependence`` are defined (the docs' section).
DATA_DEPENDENCE_DOCS = "docs/scoring.md, section Data dependence"

#: ``data_dependence`` values (``scoring.data_dependence``) in words: (short label for the
#: list and the filter, sentence for the item view). ``FLAGGED`` ones are flagged
#: ``reads_no_table``.
DATA_DEPENDENCE_WORDS = {
    NO_TABLE: (
        "no table named",
        "does not read the data: it names no table (a constant)",
    ),
    DIFFERS: (
        "not gold's result on a perturbed copy",
        "does not read the data as gold does: on a perturbed copy of the database where gold's "
        "result changed, its result is not gold's there",
    ),
    UNCHANGED: (
        "result unchanged on the perturbed copy",
        "does not read the data: on a perturbed copy of the database its result stayed the "
        "same while gold's changed (scored before COMPARISON_VERSION 5)",
    ),
    CHANGED: (
        "reads the data",
        "reads the data: on each perturbed copy of the database where gold's result changed, "
        "its result is gold's there",
    ),
    UNDECIDABLE: (
        "undecidable",
        "not decided: gold's result changed on no perturbed copy of the database (or did not "
        "finish there), so the test cannot tell whether this answer reads the data; not "
        "flagged",
    ),
    NOT_TESTED: (
        "not tested",
        "not tested on the data: this engine (a server) keeps no perturbed copy of the "
        "database; the answer names a table, so it is not flagged",
    ),
}


def data_dependence_text(value: str) -> str:
    """What an answer's ``data_dependence`` ``value`` says of it, in a sentence (a flagged
    answer's says what the flag costs)."""
    text = f"Data dependence: {DATA_DEPENDENCE_WORDS[value][1]}"
    if value in FLAGGED:
        text += f"; flagged, so {label(EX_READS_DATA)} and {label(R_VES)} score 0"
    return text


def data_dependence_words() -> dict[str, dict[str, str]]:
    """Each ``data_dependence`` value's label and sentence, stored once in the page's data (not
    per answer: ten runs of 4,036 items would repeat them 40,000 times)."""
    return {
        value: {"label": words[0], "text": data_dependence_text(value)}
        for value, words in DATA_DEPENDENCE_WORDS.items()
    }


def verdict(item: ScoredItem) -> str:
    """One word for how a run did on an item: the report's outcome class
    (``scoring.verdicts.verdict``: an output cut off by the generation limit is ``truncated``
    unless it was correct)."""
    return outcome_of(item)


def verdict_label(item: ScoredItem) -> str:
    """The verdict as shown in the table: errors say their kind (``error: no such column``)."""
    kind = verdict(item)
    if kind == VerdictClass.ERROR:
        return f"error: {error_kind(item.error)}"
    if kind == VerdictClass.CORRECT and item.reason == TIE_EQUIVALENT:
        return "correct (tie resolution)"
    return kind.replace("_", " ")


def ties_text(status: str | None, acceptable: str | None) -> str | None:
    """What gold's ties (``tie_status``, ``acceptable``) mean for an item, in words."""
    if status is None:
        return None
    if status == NONE:
        return "gold has no ORDER BY and no LIMIT: one right answer, its rows in any order"
    if status == ANSWERS:
        if acceptable in (None, "1"):
            return "gold's ORDER BY and LIMIT leave no ties: one right answer"
        return (
            f"gold's ORDER BY and LIMIT leave ties: {acceptable} different answers are right "
            "(gold's own rows are one of them)"
        )
    if status == NO_GOLD_RESULT:
        return "gold returned no result: its ties were not judged"
    why = status.removeprefix(f"{NOT_HANDLED}:")
    return f"gold's ties were not judged ({why}): compared with gold's own rows only"


def efficiency_text(item: ScoredItem, engine: str | None) -> str | None:
    """r_ves of one answer with the work counts it divided, or why the engine gives none."""
    name = label(R_VES)
    value = item.numbers.get(R_VES)
    if value is None:
        reason = not_defined(R_VES, engine)
        return None if reason is None else f"{name}: {reason}"
    work, gold_work = item.work, item.gold_work
    counts = (
        f"gold's work {gold_work:,}, this answer's {work:,}"
        if work is not None and gold_work is not None
        else None
    )
    if not item.ex >= 0.5:
        return f"{name} {value:.3f}: the answer is not correct" + (f" ({counts})" if counts else "")
    if item.reads_no_table:
        return f"{name} {value:.3f}: the answer does not read the data" + (
            f" ({counts})" if counts else ""
        )
    ratio = work_ratio(gold_work, work)
    if ratio is None:
        return f"{name} {value:.3f}: a work count is missing"
    text = (
        f"{name} {value:.3f}: {counts}, ratio {ratio:.2f}; BIRD's reward for it is "
        f"{r_ves_reward(ratio):g}, square-rooted"
    )
    if resolved_by_counts(gold_work, work) is False:
        # docs/r-ves.md, "Resolution": the convention, not the queries, picked this bucket.
        text += (
            "; not resolved by the counts: a count of 0 was taken as one unit, and less work "
            "than one unit could fall in another bucket"
        )
    return text


def cost_text(cost: Cost) -> str:
    """What a metered answer cost, in words (docs/cost.md): its tokens, latency and requests,
    and where the counts came from; a count nothing made is said to be missing, never 0.

    >>> cost_text(Cost(1200, 34, 0.512, USAGE))
    "Cost: 1,234 tokens (prompt 1,200, completion 34; the server's usage, unverifiable), 0.51 s"
    >>> cost_text(Cost(None, None, 1.5, None, requests=2))
    'Cost: tokens not counted (no usage, no tokenizer), 1.50 s over 2 requests'
    """
    if cost.prompt_tokens is None or cost.completion_tokens is None:
        tokens = "tokens not counted (no usage, no tokenizer)"
    else:
        source = {
            USAGE: "the server's usage, unverifiable",
            TOKENIZER: f"tokenizer {cost.tokenizer}" if cost.tokenizer else "a tokenizer",
        }.get(cost.tokens_from or "", f"counted by {cost.tokens_from}")
        tokens = (
            f"{cost.prompt_tokens + cost.completion_tokens:,} tokens (prompt "
            f"{cost.prompt_tokens:,}, completion {cost.completion_tokens:,}; {source})"
        )
    latency = "latency not measured" if cost.latency_s is None else f"{cost.latency_s:.2f} s"
    requests = f" over {cost.requests} requests" if cost.requests > 1 else ""
    return f"Cost: {tokens}, {latency}{requests}"


def explorer_data(runs: Sequence[Run], suspect_gold: Mapping[str, str] | None = None) -> dict:
    """Everything the page shows, as JSON-ready data: run names, then one entry per item.
    ``suspect_gold``: ``{"task/id": why}`` of the items a suspect-gold audit lists, marked on
    their rows (docs/gold-audit.md)."""
    rows: dict[tuple[str, int], dict] = {}
    for index, run in enumerate(runs):
        for task in run.tasks:
            for item in task.items:
                row = rows.get((task.name, item.id))
                if row is None:
                    row = rows[(task.name, item.id)] = _item_row(task.name, item, len(runs))
                _fill_shared(row, item)
                row["results"][index] = _run_result(item, task.engine)
    ordered = sorted(rows.values(), key=lambda row: (row["task"], row["id"]))
    for row in ordered:
        if suspect_gold and row["key"] in suspect_gold:
            row["suspect_gold"] = suspect_gold[row["key"]]
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
        "data_dependence_docs": DATA_DEPENDENCE_DOCS,
        "data_dependence_words": data_dependence_words(),
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
    if "db_path" in row:
        # A shared page names the database, never the folder of the machine that made it.
        row["db_path"] = shared_path(row["db_path"])
    if not row["category"] and item.category:
        row["category"] = item.category


def _run_result(item: ScoredItem, engine: str | None) -> dict:
    status, acceptable = item.tie_status, item.acceptable
    acceptable = None if acceptable is None else str(acceptable)  # never a JSON number
    similarities = {
        label(name): _finite(value)
        for name, value in sorted(item.numbers.items())
        if name in FEATURE_METRICS
    }
    result = {
        "verdict": verdict(item),
        "label": verdict_label(item),
        "status": item.status,
        "reason": item.reason,
        "error": item.error,
        "extracted_sql": item.extracted_sql,
        "raw_output": item.details.get("raw_output"),  # the lm-eval sample's, not the score's
        "executed_sql": item.executed_sql,
        "preview": item.prediction_preview,
        "similarity": similarities or None,
        STRUCTURAL_SIMILARITY: _finite(item.numbers.get(STRUCTURAL_SIMILARITY, math.nan)),
        "reason_text": REASONS.get(item.reason),
        TIE_STATUS: status,
        ACCEPTABLE: acceptable,
        "ties_text": ties_text(status, acceptable),
        "efficiency_text": efficiency_text(item, engine),
    }
    if item.cost is not None:  # a metered answer only: other runs carry no such line
        result["cost_text"] = cost_text(item.cost)
    # Only where something was decided (not for an answer that did not match gold and names a
    # table, nor for answers to gold that is itself a calculation on constants): most answers
    # of a run have neither, and ten runs of 4,036 items would carry 1.8 MB of nulls.
    if item.data_dependence is not None:
        result[DATA_DEPENDENCE] = item.data_dependence
    if item.reads_no_table:
        result[READS_NO_TABLE] = True
    return result


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


def write_explorer(
    runs: Sequence[Run], output: str | Path, suspect_gold: Mapping[str, str] | None = None
) -> Path:
    """Write ``explorer.html`` into the folder ``output`` (created if needed); its path.
    ``suspect_gold`` as for :func:`explorer_data`."""
    folder = Path(output)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / EXPLORER_FILE
    runs = marked(runs)  # a --limit run says so in its name, in the counts and the columns
    names = ", ".join(run.name for run in runs)
    data = explorer_data(runs, suspect_gold)
    path.write_text(render_explorer(data, f"Explorer: {names}"), encoding="utf-8")
    return path


__all__ = [
    "DATA_DEPENDENCE_DOCS",
    "DATA_DEPENDENCE_WORDS",
    "EXPLORER_FILE",
    "VERDICTS",
    "asset",
    "data_dependence_text",
    "data_dependence_words",
    "efficiency_text",
    "explorer_data",
    "render_explorer",
    "script_json",
    "ties_text",
    "verdict",
    "verdict_label",
    "write_explorer",
]
