"""How faithfully our SQLite gold reproduces MySQL: agreement with the MariaDB reference run
(comparable items, agreement literal or as tie resolutions, the disagreement classes, the
reference's clock: docs/logiccat.md#engine-choice-and-measured-fidelity)."""

from __future__ import annotations

import datetime as dt
import json
import math
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlbench_lmeval.execution import Database, Job, Limits, Outcome, Status, execute_many
from sqlbench_lmeval.logiccat import gold
from sqlbench_lmeval.logiccat.mysql_functions import install
from sqlbench_lmeval.scoring.gold_ties import plan_gold, record_from
from sqlbench_lmeval.scoring.tie_compare import TieGold, TieGroup, accepts
from sqlbench_lmeval.vocabulary import FidelityClass

REFERENCE_ENV = "SQLBENCH_LMEVAL_MARIADB_REFERENCE"
REFERENCE_NOW = dt.datetime(2026, 11, 29, 12, 0, 0)
REFERENCE_CLOCK_SETUP = "sqlbench_lmeval.logiccat.fidelity:install_reference_clock"
RELATIVE_TOLERANCE = 1e-4


def install_reference_clock(conn: sqlite3.Connection) -> None:
    """``mysql_functions.install`` with the clock at ``REFERENCE_NOW`` (measurement only)."""
    install(conn, now=REFERENCE_NOW)


# ---------------------------------------------------------------------------------------------
# Values and rows
# ---------------------------------------------------------------------------------------------


def reference_value(value: object) -> object:
    """A reference JSON value as a Python value comparable with ours."""
    if isinstance(value, dict):
        if "decimal" in value:
            return float(value["decimal"])
        if "temporal" in value:
            return str(value["temporal"]).replace("T", " ")
        if "bytes_hex" in value:
            return bytes.fromhex(value["bytes_hex"])
    if isinstance(value, bool):
        return int(value)
    return value


def _number(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def values_agree(ours: object, theirs: object, rel_tol: float = RELATIVE_TOLERANCE) -> bool:
    """One value of ours against one of the reference."""
    if ours is None or theirs is None:
        return ours is None and theirs is None
    a, b = _number(ours), _number(theirs)
    if a is not None and b is not None:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-12)
    if a is not None or b is not None:  # a number against text: MySQL would compare numbers
        text, number = (theirs, a) if a is not None else (ours, b)
        try:
            return math.isclose(float(str(text)), number, rel_tol=rel_tol, abs_tol=1e-12)
        except ValueError:
            return False
    if isinstance(ours, bytes) != isinstance(theirs, bytes):
        return False
    return str(ours) == str(theirs)


def _sort_key(row: Sequence[object]) -> tuple:
    key = []
    for value in row:
        number = _number(value)
        if number is None and isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                pass
        if value is None:
            key.append((0, ""))
        elif number is not None and math.isfinite(number):
            key.append((1, f"{number:.2e}"))
        else:
            key.append((2, str(value)))
    return tuple(key)


def rows_agree(
    ours: Sequence[Sequence[object]],
    theirs: Sequence[Sequence[object]],
    rel_tol: float = RELATIVE_TOLERANCE,
) -> bool:
    """Same rows as multisets (values compared with :func:`values_agree`)."""
    if len(ours) != len(theirs):
        return False
    if not ours:
        return True
    if any(len(row) != len(ours[0]) for row in ours) or any(
        len(row) != len(ours[0]) for row in theirs
    ):
        return False

    def same(a: Sequence[object], b: Sequence[object]) -> bool:
        return all(values_agree(x, y, rel_tol) for x, y in zip(a, b, strict=False))

    if all(
        same(a, b)
        for a, b in zip(sorted(ours, key=_sort_key), sorted(theirs, key=_sort_key), strict=False)
    ):
        return True
    if len(ours) > 500:
        return False
    # Sorting can pair rows differently when numbers differ within the tolerance: match greedily.
    remaining = list(theirs)
    for row in ours:
        for index, candidate in enumerate(remaining):
            if same(row, candidate):
                del remaining[index]
                break
        else:
            return False
    return True


def tolerant_within(part: Sequence[Sequence], whole: Sequence[Sequence]) -> bool:
    """Whether each row of ``part`` pairs with its own row of ``whole`` under
    :func:`values_agree`."""
    return _paired_within(part, whole, lambda p, w: all(map(values_agree, p, w)))


def _paired_within(
    part: Sequence[Sequence],
    whole: Sequence[Sequence],
    same: Callable[[Sequence, Sequence], bool],
) -> bool:
    """Whether each row of ``part`` pairs with its own row of ``whole``, ``same(p, w)`` deciding
    which pairs may be made (a bipartite matching: Kuhn's augmenting paths)."""
    edges = [[j for j, w in enumerate(whole) if same(p, w)] for p in part]
    owner = [-1] * len(whole)

    def place(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j not in seen:
                seen.add(j)
                if owner[j] == -1 or place(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    return all(place(i, set()) for i in range(len(part)))


# ---------------------------------------------------------------------------------------------
# Ties
# ---------------------------------------------------------------------------------------------

#: Right answers of gold on two sides of a pair, per item (None: one result only, or unknown).
TiePair = tuple["TieGold | None", "TieGold | None"]


def tie_answers(
    golds: Mapping[int, tuple[str, Outcome]],
    dialect: str,
    run_probes: Callable[[dict[int, str]], Mapping[int, Outcome]],
    convert: Callable[[object], object] | None = None,
) -> dict[int, TieGold]:
    """Per item with more than one right answer, gold's right answers (``scoring.gold_ties``):
    ``golds`` are id -> (gold SQL in ``dialect``, its outcome); ``run_probes`` runs the tie
    probes (id -> SQL) on the same engine; ``convert`` maps each value as this module compares
    it (a server's values: as the reference file reads them)."""
    limits = Limits()
    plans = {
        item_id: plan_gold(sql, dialect, limits.max_rows)
        for item_id, (sql, outcome) in golds.items()
        if outcome.ok
    }
    probes = run_probes(
        {
            item_id: plan.probe_sql
            for item_id, plan in plans.items()
            if plan is not None and plan.handled and plan.has_order_or_cut and plan.probe_sql
        }
    )
    # A probe with a fallback that failed: the fallback, as scoring takes it
    # (``gold_ties.TieBatch.finish``).
    retry = {
        item_id: plans[item_id].fallback_sql
        for item_id, probe in probes.items()
        if plans[item_id].fallback_sql and probe.status is Status.ERROR
    }
    probes = {**probes, **(run_probes(retry) if retry else {})}
    answers = {}
    for item_id, plan in plans.items():
        record = record_from(plan, golds[item_id][1], probes.get(item_id))
        if record.has_ties and record.answers is not None:
            answers[item_id] = _converted(record.answers, convert)
    return answers


def _converted(answers: TieGold, convert: Callable[[object], object] | None) -> TieGold:
    if convert is None:
        return answers
    groups = tuple(
        TieGroup(tuple(tuple(map(convert, row)) for row in group.rows), group.need)
        for group in answers.groups
    )
    return TieGold(groups, answers.ordered)


def agree_as_ties(ours: Sequence[Sequence], theirs: Sequence[Sequence], pair: TiePair) -> bool:
    """Whether each side's result is one of the other's right answers (a side without known
    answers is not checked; at least one side must have them)."""
    our_answers, their_answers = pair
    if our_answers is None and their_answers is None:
        return False
    if our_answers is not None and not accepts(theirs, our_answers, within=tolerant_within):
        return False
    return their_answers is None or accepts(ours, their_answers, within=tolerant_within)


# ---------------------------------------------------------------------------------------------
# Measurement
# ---------------------------------------------------------------------------------------------

#: Gold whose ORDER BY ... LIMIT inside a subquery cuts through ties (flagged
#: ``nondeterministic_order`` by ``health``): which rows reach the outer query is the engine's
#: choice, and tie-aware EX resolves only the outermost query's ties.
SUBQUERY_TIES = FidelityClass.SUBQUERY_TIES
DECIMAL_SCALE = FidelityClass.DECIMAL_SCALE
CLASSES = tuple(FidelityClass)[1:]  # the disagreements, in the order they are tried


@dataclass(frozen=True)
class Fidelity:
    """Agreement with the reference and why the rest differs."""

    comparable: int
    agree: int
    disagreements: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    compared: frozenset[int] = frozenset()  # the comparable items' ids
    tie_agree: tuple[int, ...] = ()  # agree only as tie resolutions of each other (counted in)
    # disagree literally and have ties: a side with several right answers, or subquery ties
    tie_items: tuple[int, ...] = ()

    @property
    def rate(self) -> float:
        return self.agree / self.comparable if self.comparable else 0.0

    def summary(self) -> str:
        parts = ", ".join(f"{name} {len(self.disagreements.get(name, ()))}" for name in CLASSES)
        return (
            f"{self.agree}/{self.comparable} = {self.rate:.2%} agree with MariaDB "
            f"({len(self.tie_agree)} of {len(self.tie_items)} tie items as tie resolutions); "
            f"the rest: {parts}"
        )


def load_reference(path: str | Path) -> dict[int, dict]:
    """The reference results by idx."""
    data = json.loads(Path(path).read_text("utf-8"))
    return {int(item["idx"]): item for item in data["results"]}


def comparable_ids(records: Iterable, reference: Mapping[int, dict]) -> list[int]:
    """Items whose MySQL gold ran on MariaDB, outside the Spider-derived databases."""
    return [
        record.id
        for record in records
        if record.db_id not in gold.SPIDER_DERIVED
        and reference.get(record.id, {}).get("status") == Status.OK
    ]


def _loosely_agree(ours: object, raw: object) -> bool:
    """Agreement up to MySQL's decimal rounding: a DECIMAL shown with s places may be off by a
    unit in its last place (intermediates are rounded too), and cancellation noise near 0."""
    theirs = reference_value(raw)
    a, b = _number(ours), _number(theirs)
    if a is None or b is None:
        return values_agree(ours, theirs)
    unit = 1e-9
    if isinstance(raw, dict) and "decimal" in raw:
        digits = str(raw["decimal"]).partition(".")[2]
        unit = max(unit, 10.0 ** -len(digits.split("E")[0].split("e")[0]))
    return abs(a - b) <= unit + 2e-2 * abs(b)


def _rows_loosely_agree(ours: Sequence[Sequence[object]], theirs: Sequence[Sequence]) -> bool:
    if len(ours) != len(theirs):
        return False
    pairs = zip(
        sorted(ours, key=_sort_key),
        sorted(theirs, key=lambda row: _sort_key([reference_value(v) for v in row])),
        strict=False,
    )
    return all(
        len(a) == len(b) and all(_loosely_agree(x, y) for x, y in zip(a, b, strict=False))
        for a, b in pairs
    )


def _loosely_within(part: Sequence[Sequence], whole: Sequence[Sequence]) -> bool:
    """:func:`tolerant_within` under :func:`_loosely_agree`: ``part`` holds the other side's
    raw values (their DECIMAL text tells the scale), ``whole`` ours."""
    return _paired_within(part, whole, lambda p, w: all(map(_loosely_agree, w, p)))


def classify(
    record,
    ok: bool,
    rows: Sequence[Sequence[object]],
    theirs: Sequence,
    answers: TieGold | None = None,
) -> str:
    """Why one comparable item disagrees (first matching reason in CLASSES order);
    ``answers``: our gold's right answers when it has ties."""
    flags = set(record.flags)
    if not ok:
        return FidelityClass.OUR_ERROR
    if gold.NONDETERMINISTIC_ORDER in flags:
        return SUBQUERY_TIES
    if flags & {gold.CLOCK_DEPENDENT, gold.RANDOM}:
        return FidelityClass.CLOCK_RANDOM
    if gold.MYSQL_SPECIFIC in flags:
        return FidelityClass.MYSQL_SPECIFIC
    # MySQL rounds DECIMAL results and intermediates (div_precision_increment = 4:
    # 1/60 -> 0.0167); we compute in binary floating point and do not emulate that. With ties,
    # the other side's result must be one of our right answers with values read so.
    if _rows_loosely_agree(rows, theirs) or (
        answers is not None and accepts(theirs, answers, within=_loosely_within)
    ):
        return DECIMAL_SCALE
    return FidelityClass.OTHER


def measure(
    records: Sequence,
    results: Mapping[int, tuple[bool, Sequence[Sequence[object]]]],
    reference: Mapping[int, dict],
    ties: Mapping[int, TiePair] | None = None,
) -> Fidelity:
    """Agreement of ``results`` (id -> (ran ok, rows)) with the reference; with ``ties`` (id ->
    right answers of ours and of the reference's gold), tie resolutions agree too."""
    by_id = {record.id: record for record in records}
    ids = comparable_ids(records, reference)
    agree = 0
    tie_agree = []
    tie_items = []
    reasons: dict[str, list[int]] = {name: [] for name in CLASSES}
    for item_id in ids:
        ok, rows = results.get(item_id, (False, ()))
        theirs = reference[item_id]["rows"]
        converted = [tuple(reference_value(v) for v in row) for row in theirs]
        if ok and rows_agree(rows, converted):
            agree += 1
            continue
        pair = (ties or {}).get(item_id, (None, None))
        has_ties = pair[0] is not None or pair[1] is not None
        if has_ties or gold.NONDETERMINISTIC_ORDER in by_id[item_id].flags:
            tie_items.append(item_id)
        if ok and has_ties and agree_as_ties(rows, converted, pair):
            agree += 1
            tie_agree.append(item_id)
            continue
        reasons[classify(by_id[item_id], ok, rows, theirs, pair[0])].append(item_id)
    return Fidelity(
        len(ids),
        agree,
        {name: tuple(ids) for name, ids in reasons.items()},
        frozenset(ids),
        tuple(tie_agree),
        tuple(tie_items),
    )


def run_gold_outcomes(
    bundle,
    ids: Iterable[int],
    *,
    setup: str = REFERENCE_CLOCK_SETUP,
    workers: int | None = None,
    sql: Mapping[int, str] | None = None,
    limits: Limits = Limits(),
) -> dict[int, Outcome]:
    """Outcomes of our gold for ``ids`` (id -> Outcome); ``sql`` replaces an item's gold text
    (e.g. by its tie probe)."""
    wanted = set(ids)
    records = [r for r in bundle.records if r.id in wanted and r.gold_status != gold.NON_SELECT]
    texts = [r.gold_sql if sql is None else sql[r.id] for r in records]
    jobs = [
        Job(Database("sqlite", str(bundle.database_path(r.db_id)), setup), text)
        for r, text in zip(records, texts, strict=True)
    ]
    outcomes = execute_many(jobs, limits, workers=workers, progress=None)
    return {r.id: o for r, o in zip(records, outcomes, strict=True)}
