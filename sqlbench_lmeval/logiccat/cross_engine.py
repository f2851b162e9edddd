"""LogicCat gold on two engines, item by item: ``sqlbench-lmeval fidelity logiccat``
(:func:`compare_engines`) runs every gold query on the SQLite bundle and verbatim on the server
``prepare logiccat --engine mysql`` loaded, and compares the results by the rules and
disagreement classes of :mod:`~sqlbench_lmeval.logiccat.fidelity` (the pairs, what is
comparable and the clock: docs/mysql.md, the ``fidelity logiccat`` item)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlbench_lmeval.execution import Limits, Outcome
from sqlbench_lmeval.logiccat import fidelity, server
from sqlbench_lmeval.logiccat.benchmark import DIALECT
from sqlbench_lmeval.logiccat.bundle import ensure_bundle
from sqlbench_lmeval.logiccat.gold import CONNECTION_SETUP
from sqlbench_lmeval.logiccat.server import require_driver, server_run
from sqlbench_lmeval.scoring.tie_compare import TieGold
from sqlbench_lmeval.vocabulary import FidelityClass, Status

SQLITE_VS_SERVER = "sqlite_vs_server"
SERVER_VS_REFERENCE = "server_vs_reference"
SQLITE_VS_REFERENCE = "sqlite_vs_reference"
AGREE = FidelityClass.AGREE


@dataclass(frozen=True)
class EngineComparison:
    """Per pair of result sets, its :class:`fidelity.Fidelity`; and each engine's outcomes."""

    pairs: Mapping[str, fidelity.Fidelity]
    sqlite: Mapping[int, tuple[bool, tuple]]
    server: Mapping[int, tuple[bool, tuple]]

    def verdict(self, pair: str, item_id: int) -> str | None:
        """``agree``, the disagreement class, or None when the item is not comparable."""
        measured = self.pairs[pair]
        for name, ids in measured.disagreements.items():
            if item_id in ids:
                return name
        return AGREE if item_id in measured.compared else None

    def listing(self, records: Sequence) -> list[dict]:
        """One row per item: ids, whether each engine ran the gold, each pair's verdict."""
        return [
            {
                "id": record.id,
                "db_id": record.db_id,
                "sqlite_ok": self.sqlite.get(record.id, (False,))[0],
                "server_ok": self.server.get(record.id, (False,))[0],
                **{pair: self.verdict(pair, record.id) for pair in self.pairs},
            }
            for record in records
        ]

    def summary(self) -> str:
        return "\n".join(f"{pair}: {measured.summary()}" for pair, measured in self.pairs.items())


def reference_form(value: object) -> object:
    """A server value as the reference file writes it: DECIMAL as ``{"decimal": text}`` (its
    scale tells :func:`fidelity.classify` how MySQL rounded), temporal values as
    ``{"temporal": text}``, bytes as ``{"bytes_hex": hex}``; the rest as is."""
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    if isinstance(value, (dt.date, dt.time, dt.timedelta)):  # datetime is a date
        return {"temporal": str(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"bytes_hex": bytes(value).hex()}
    return value


def as_reference(results: Mapping[int, tuple[bool, Sequence]]) -> dict[int, dict]:
    """Engine results in the reference's shape, so one engine can stand where it stands."""
    return {
        item_id: {
            "status": Status.OK if ok else Status.ERROR,
            "rows": [[reference_form(value) for value in row] for row in rows],
        }
        for item_id, (ok, rows) in results.items()
    }


def sqlite_tie_answers(
    bundle,
    outcomes: Mapping[int, Outcome],
    *,
    setup: str,
    workers: int | None = None,
    limits: Limits = Limits(),
) -> dict[int, TieGold]:
    """:func:`fidelity.tie_answers` of the bundle's SQLite gold (``outcomes``:
    :func:`fidelity.run_gold_outcomes`), its probes run with the same connection ``setup``."""
    by_id = {record.id: record for record in bundle.records}
    return fidelity.tie_answers(
        {item_id: (by_id[item_id].gold_sql, outcome) for item_id, outcome in outcomes.items()},
        DIALECT,
        lambda sql: fidelity.run_gold_outcomes(
            bundle, sql, setup=setup, workers=workers, sql=sql, limits=limits
        ),
    )


def compare_engines(
    bundle,
    server_url: str,
    reference: Mapping[int, dict] | None = None,
    workers=None,
    limits: Limits = Limits(),
) -> EngineComparison:
    """Gold of every item on SQLite and on the server, compared (and each with ``reference``),
    each query under ``limits`` (a gold query stopped by the time limit did not run)."""
    sqlite_setup = CONNECTION_SETUP
    server_setup = server.FROZEN_CLOCK_SETUP
    if reference is not None:
        sqlite_setup, server_setup = fidelity.REFERENCE_CLOCK_SETUP, server.REFERENCE_CLOCK_SETUP
    records = bundle.records
    by_id = {r.id: r for r in records}
    lite = fidelity.run_gold_outcomes(
        bundle, [r.id for r in records], setup=sqlite_setup, workers=workers, limits=limits
    )
    sqlite = {item_id: (o.ok, o.rows) for item_id, o in lite.items()}

    def on_server_run(sql: Mapping[int, str]) -> dict[int, object]:
        golds = [(item_id, by_id[item_id].db_id, text) for item_id, text in sql.items()]
        return server.run_gold_on_server(
            golds, server_url, setup=server_setup, workers=workers, limits=limits
        )

    outcomes = on_server_run({r.id: r.gold_sql_mysql for r in records})
    on_server = {item_id: (o.ok, o.rows) for item_id, o in outcomes.items()}
    # Each engine's right answers under its gold's ties (its own probe, its own order).
    lite_answers = sqlite_tie_answers(
        bundle, lite, setup=sqlite_setup, workers=workers, limits=limits
    )
    server_answers = fidelity.tie_answers(
        {i: (by_id[i].gold_sql_mysql, o) for i, o in outcomes.items()},
        server.ENGINE_DIALECT,
        on_server_run,
        convert=lambda value: fidelity.reference_value(reference_form(value)),
    )
    both = {
        item_id: (lite_answers.get(item_id), server_answers.get(item_id))
        for item_id in lite_answers.keys() | server_answers.keys()
    }
    ours = {item_id: (answers, None) for item_id, answers in lite_answers.items()}
    theirs = {item_id: (answers, None) for item_id, answers in server_answers.items()}
    pairs = {SQLITE_VS_SERVER: fidelity.measure(records, sqlite, as_reference(on_server), both)}
    if reference is not None:
        pairs[SERVER_VS_REFERENCE] = fidelity.measure(records, on_server, reference, theirs)
        pairs[SQLITE_VS_REFERENCE] = fidelity.measure(records, sqlite, reference, ours)
    return EngineComparison(pairs=pairs, sqlite=sqlite, server=on_server)


def fidelity_command(
    url: str | None = None,
    reference: str | None = None,
    cache_dir=None,
    source=None,
    workers=None,
    output=None,
    limits: Limits = Limits(),
) -> EngineComparison:
    """``sqlbench-lmeval fidelity logiccat``: the bundle of this cache against its prepared
    server (a read-only account: ``url``, else this cache's reader), with ``reference`` (default
    ``$SQLBENCH_LMEVAL_MARIADB_REFERENCE``) when given; ``output`` gets the item-by-item
    listing as JSONL."""

    require_driver()
    bundle = ensure_bundle(source=source, cache_dir=cache_dir, progress=False)
    server_url = server_run(url, cache_dir).url
    reference = reference or os.environ.get(fidelity.REFERENCE_ENV)
    loaded = fidelity.load_reference(reference) if reference else None
    comparison = compare_engines(bundle, server_url, loaded, workers=workers, limits=limits)
    if output:
        lines = comparison.listing(bundle.records)
        with open(output, "w", encoding="utf-8") as out:
            if str(output).endswith(".md"):
                out.write(markdown_listing(lines))
            else:
                for line in lines:
                    out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return comparison


def markdown_listing(lines: Sequence[Mapping]) -> str:
    """The listing as a markdown table of the items some pair disagrees on (agreeing and
    not comparable items are left out: they are the JSONL listing's)."""
    pairs = [key for key in lines[0] if key not in ("id", "db_id", "sqlite_ok", "server_ok")]
    header = ["id", "db_id", "sqlite_ok", "server_ok", *pairs]
    rows = [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for line in lines:
        if all(line[pair] in (AGREE, None) for pair in pairs):
            continue
        cells = [str(line["id"]), line["db_id"], str(line["sqlite_ok"]), str(line["server_ok"])]
        cells += [line[pair] or "-" for pair in pairs]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"
