"""The gold card and the suspect-gold audit as files: ``gold-card.md``/``.html``/``.json`` and
``audit-gold.md``/``.html``/``.csv``/``.json``, in the report's document model
(``report.tables``), so both read like the report.

>>> card = {"task": "t", "engine": "sqlite", "dialect": "mysql", "published_dialect": "mysql",
...         "ceiling": {"ex": 0.96}, "ceiling_executed_gold": {"ex": 1.0}}
>>> print(ceiling_table(card), end="")
| Metric | published gold, read as mysql | gold as executed (sqlite) |
| --- | ---: | ---: |
| ex | 0.9600 | 1.0000 |
"""

from __future__ import annotations

import csv
import json
from collections.abc import Collection, Mapping
from pathlib import Path

from sqlbench_lmeval.audit.card import DIGITS
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.report.tables import Section, Table, table_markdown, to_html, to_markdown
from sqlbench_lmeval.scoring.metrics import METRICS

#: The longest text a table cell shows of SQL or an error (the JSON keeps all of it).
CELL_CHARS = 160


#: Metric families with no ceiling: counts that describe a query, not how right it is.
DESCRIPTIVE_FAMILIES = ("complexity", "gold_complexity")


def scored_metrics() -> tuple[str, ...]:
    """The registry's metrics that have a ceiling (the rows the task READMEs' tables carry)."""
    return tuple(m.name for m in METRICS if m.family not in DESCRIPTIVE_FAMILIES)


def ceiling_table(card: Mapping, only: Collection[str] | None = None) -> str:
    """The card's ceilings as one Markdown table; ``only``: just those metrics (the task
    READMEs carry the registry's, without the per-category rows)."""
    return table_markdown(_ceiling_table(card, only))


def _ceiling_table(card: Mapping, only: Collection[str] | None = None) -> Table:
    executed = card["ceiling_executed_gold"]
    return Table(
        (
            "Metric",
            f"published gold, read as {card['dialect']}",
            f"gold as executed ({card['engine']})",
        ),
        tuple(
            (name, f"{value:.{DIGITS}f}", _number(executed.get(name)))
            for name, value in card["ceiling"].items()
            if only is None or name in only
        ),
        numeric=(False, True, True),
    )


def card_sections(card: Mapping) -> list[Section]:
    published = (
        f"the gold as its authors publish it ({card['published_dialect']}), given as every "
        f"item's answer and read as {card['dialect']}"
    )
    sections = [
        Section(
            "Ceilings",
            (
                f"{card['n']} items of {card['task']} on {card['engine']}, dataset "
                f"`{card['dataset_version']}`, comparison version {card['comparison_version']}. "
                f"Each column is a run of `score` whose answers are {published}, and the gold "
                "we execute. Below 1 on the second: items whose gold errors or is not a query (no "
                "answer can match them), gold that reads the clock.",
                _ceiling_table(card),
            ),
        ),
        Section(
            "Gold status and flags",
            (
                _count_table("Gold status", card["gold_status"]),
                _count_table("Flag", card["flags"]) if card["flags"] else "No item is flagged.",
            ),
        ),
    ]
    if card["reference_points"]:
        sections.append(
            Section(
                "Published reference points",
                (
                    Table(
                        ("Who", "Metric", "Value", "Items", "Source"),
                        tuple(
                            (p["label"], p["metric"], f"{p['value']:.4f}", p["items"], p["source"])
                            for p in card["reference_points"]
                        ),
                        numeric=(False, False, True, False, False),
                    ),
                ),
            )
        )
    unhealthy = card["unhealthy"]
    sections.append(
        Section(
            f"Items whose gold is unhealthy ({len(unhealthy)})",
            (
                Table(
                    ("Item", "Gold status", "Flags", "Gold's error"),
                    tuple(
                        (
                            str(u["id"]),
                            u["gold_status"],
                            ", ".join(u["flags"]),
                            _cut(u["gold_error"]),
                        )
                        for u in unhealthy
                    ),
                )
                if unhealthy
                else "None.",
            ),
        )
    )
    for key, which in (
        ("published_gold_misses", "published"),
        ("executed_gold_misses", "executed"),
    ):
        misses = card[key]
        sections.append(
            Section(
                f"Items the {which} gold misses as the answer ({len(misses)})",
                (
                    Table(
                        ("Item", "Status", "Reason", "Error"),
                        tuple(
                            (str(m["id"]), m["status"], m["reason"] or "", _cut(m["error"]))
                            for m in misses
                        ),
                    )
                    if misses
                    else "None.",
                ),
            )
        )
    return sections


def write_card(card: Mapping, folder: Path) -> dict[str, Path]:
    """``gold-card.json``, ``.md`` and ``.html`` in ``folder``; their paths."""
    title = f"Gold card of {card['task']} ({card['engine']}, answers read as {card['dialect']})"
    return _write(folder, "gold-card", card, title, card_sections(card))


def audit_sections(audit: Mapping) -> list[Section]:
    suspect = audit["suspect"]
    runs = ", ".join(f"{run['name']} ({run['model']})" for run in audit["runs"])
    rows = tuple(
        (
            s["task"],
            str(s["id"]),
            f"{s['agreeing_models']} of {s['runs_answered']}: {', '.join(s['agreeing_runs'])}",
            _result_text(s["gold_result"], s["gold_error"]),
            _result_text(s["agreed_result"], None),
            _cut(s["gold_sql"]),
            _cut(s["example_sql"]),
        )
        for s in suspect
    )
    return [
        Section(
            f"Suspect gold ({len(suspect)})",
            (
                f"Runs: {runs}. An item is listed when no run matches its gold while at least "
                f"{audit['agree']} runs of different models return one and the same other "
                "result (docs/gold-audit.md#the-suspect-gold-audit). It changes no score.",
                Table(
                    (
                        "Task",
                        "Item",
                        "Runs that agree",
                        "Gold's result",
                        "Their result",
                        "Gold SQL",
                        "One agreeing answer",
                    ),
                    rows,
                )
                if rows
                else "None.",
            ),
        ),
        Section(
            f"Items whose gold is unhealthy ({len(audit['unhealthy'])})",
            (
                Table(
                    ("Task", "Item", "Gold status", "Flags"),
                    tuple(
                        (u["task"], str(u["id"]), u["gold_status"], ", ".join(u["flags"]))
                        for u in audit["unhealthy"]
                    ),
                )
                if audit["unhealthy"]
                else "None.",
            ),
        ),
    ]


def write_audit(audit: Mapping, folder: Path) -> dict[str, Path]:
    """``audit-gold.json``, ``.md``, ``.html`` and ``.csv`` in ``folder``; their paths."""
    paths = _write(folder, "audit-gold", audit, "Suspect-gold audit", audit_sections(audit))
    paths["csv"] = folder / "audit-gold.csv"
    with paths["csv"].open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "task",
                "id",
                "agreeing_models",
                "runs_answered",
                "agreeing_runs",
                "gold_result",
                "agreed_result",
                "gold_sql",
                "example_sql",
            ]
        )
        for s in audit["suspect"]:
            writer.writerow(
                [
                    s["task"],
                    s["id"],
                    s["agreeing_models"],
                    s["runs_answered"],
                    " ".join(s["agreeing_runs"]),
                    _result_text(s["gold_result"], s["gold_error"]),
                    _result_text(s["agreed_result"], None),
                    s["gold_sql"],
                    s["example_sql"],
                ]
            )
    return paths


def read_suspects(path: str | Path) -> dict[str, str]:
    """``{"task/id": why}`` of the suspect items in an ``audit-gold.json`` (for the explorer's
    marks); a UserError names a file that is not one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return {
            f"{s['task']}/{s['id']}": (
                f"{s['agreeing_models']} of {s['runs_answered']} runs agree on another result "
                f"({', '.join(s['agreeing_runs'])})"
            )
            for s in data["suspect"]
        }
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UserError(f"{path}: not an audit-gold.json of sqlbench-lmeval ({error})") from None


def _write(folder: Path, stem: str, data: Mapping, title: str, sections) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {kind: folder / f"{stem}.{kind}" for kind in ("json", "md", "html")}
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, indent=1, default=str)
    paths["json"].write_text(text + "\n", encoding="utf-8")
    paths["md"].write_text(to_markdown(title, sections), encoding="utf-8")
    paths["html"].write_text(to_html(title, sections), encoding="utf-8")
    return paths


def _count_table(what: str, counts: Mapping[str, int]) -> Table:
    return Table((what, "Items"), tuple((k, str(v)) for k, v in counts.items()), (False, True))


def _number(value) -> str:
    return "–" if value is None else f"{value:.{DIGITS}f}"


def _cut(text) -> str:
    text = "" if text is None else " ".join(str(text).split())
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def _result_text(preview, error) -> str:
    """A result preview in one line: ``columns: row; row (N rows)``, or the error."""
    if preview is None:
        return f"error: {_cut(error)}" if error else "no result"
    rows = "; ".join(", ".join("NULL" if v is None else v for v in row) for row in preview["rows"])
    count = preview["row_count"]
    return _cut(f"{', '.join(preview['columns'])}: {rows or '(none)'} ({count} rows)")


__all__ = [
    "CELL_CHARS",
    "DESCRIPTIVE_FAMILIES",
    "ceiling_table",
    "read_suspects",
    "scored_metrics",
    "write_audit",
    "write_card",
]
