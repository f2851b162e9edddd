"""Tie-aware EX: gold's tie probe turned into the right answers (:func:`tie_gold`: the *tie
groups* the cut window touches, each with how many of its rows an answer holds), whether a
prediction is one of them (:func:`accepts`), how many there are (:func:`acceptable_count`), and
EX with ties (:func:`compare_with_ties`: the literal comparison first, then the right answers,
reason ``tie_equivalent``); the definitions and worked examples: docs/ties.md. Gold ``ORDER BY
score DESC LIMIT 3`` over ann 9, bob 8, cid 7, dan 7, eve 7:

>>> sevens = TieGroup((("cid",), ("dan",), ("eve",)), need=1)  # one of the three 7s
>>> top3 = TieGold((TieGroup((("ann",),), 1), TieGroup((("bob",),), 1), sevens), ordered=True)
>>> accepts([("ann",), ("bob",), ("eve",)], top3), accepts([("bob",), ("ann",), ("cid",)], top3)
(True, False)
>>> acceptable_count(top3)
3
>>> pred = Outcome(Status.OK, ("name",), (("ann",), ("bob",), ("eve",)))
>>> gold = Outcome(Status.OK, ("name",), (("ann",), ("bob",), ("cid",)))
>>> tied = compare_with_ties(pred, gold, top3, ordered=True)
>>> tied.verdict.ex, tied.verdict.ex_strict, tied.verdict.reason == TIE_EQUIVALENT
(True, False, True)
>>> any_two = TieGroup(tuple((name,) for name in "abcdef"), need=2)  # LIMIT 2, no ORDER BY
>>> twins = TieGroup(((7,), (7,), (5,)), need=2)  # rows equal exactly are one: {7, 7} or {7, 5}
>>> acceptable_count(TieGold((any_two,), False)), acceptable_count(TieGold((twins,), False))
(15, 2)"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import comb, factorial

from sqlbench_lmeval.execution.outcome import Outcome, Status
from sqlbench_lmeval.scoring.compare import (
    Verdict,
    _hashable,
    column_magnitudes,
    compare,
    multiset_within,
    rows_close,
)
from sqlbench_lmeval.scoring.tie_probe import OutputKey, TiePlan
from sqlbench_lmeval.vocabulary import Reason, TieStatus

#: ``within(part, whole)``: can every row of ``part`` be paired with its own row of ``whole``?
RowsWithin = Callable[[list[tuple], list[tuple]], bool]

#: Reason of a prediction that is not gold's literal result but one of its tie resolutions.
TIE_EQUIVALENT = Reason.TIE_EQUIVALENT

# Why a probe's result cannot be used (the item then compares literally; ``TieStatus``).
PROBE_FAILED = TieStatus.PROBE_FAILED
PROBE_COLUMNS = TieStatus.PROBE_COLUMNS
KEYS_NOT_SORTED = TieStatus.KEYS_NOT_SORTED
GOLD_NOT_ACCEPTED = TieStatus.GOLD_NOT_ACCEPTED
PROBE_TRUNCATED = TieStatus.PROBE_TRUNCATED


@dataclass(frozen=True)
class TieGroup:
    """Rows of gold's full result with equal sort keys, and how many of them the answer holds
    (``need == len(rows)``: all of them; fewer: the cut goes through the group)."""

    rows: tuple[tuple, ...]
    need: int

    @property
    def cut(self) -> bool:
        return self.need < len(self.rows)


@dataclass(frozen=True)
class TieGold:
    """The right answers to one gold query: its tie groups that the cut window touches, in
    gold's order, and whether that order counts (False: one group, compared as a multiset)."""

    groups: tuple[TieGroup, ...]
    ordered: bool

    @property
    def size(self) -> int:
        """The number of rows every right answer has."""
        return sum(group.need for group in self.groups)

    @property
    def has_ties(self) -> bool:
        """Whether more than one answer can be right (some group of two or more rows)."""
        return any(len(group.rows) > 1 for group in self.groups) and acceptable_count(self) > 1

    def to_json(self) -> dict:
        """A JSON form for the gold cache (values as ``Outcome.to_json`` writes them)."""
        groups = []
        for group in self.groups:
            encoded = Outcome(Status.OK, rows=group.rows).to_json()["rows"]
            groups.append({"rows": encoded, "need": group.need})
        return {"ordered": self.ordered, "groups": groups}

    @classmethod
    def from_json(cls, data: dict) -> TieGold:
        groups = tuple(
            TieGroup(Outcome.from_json({"status": "ok", "rows": g["rows"]}).rows, int(g["need"]))
            for g in data["groups"]
        )
        return cls(groups, bool(data["ordered"]))


@dataclass(frozen=True)
class TieVerdict:
    """:class:`compare.Verdict` with ties: ``acceptable`` right answers (None: gold's result
    was not tie-probed, so only the literal one)."""

    verdict: Verdict
    acceptable: int | None


def tie_gold(plan: TiePlan, gold: Outcome, probe: Outcome | None) -> TieGold | str:
    """The right answers from gold's ``plan``, its result and its probe's result (None when
    ``plan.probe_sql`` is None), or why they cannot be had (a reason string)."""
    source = gold if plan.probe_sql is None else probe
    if source is None or source.status is not Status.OK or gold.status is not Status.OK:
        return PROBE_FAILED
    width = len(source.columns) - plan.extra_columns
    if width != len(gold.columns) or any(len(row) != len(source.columns) for row in source.rows):
        return PROBE_COLUMNS
    rows = [tuple(row[:width]) for row in source.rows]
    keys = [_keys(row, plan, width) for row in source.rows]
    key_scales = column_magnitudes(keys + keys)
    if not plan.ordered:
        spans = [(0, len(rows))] if rows else []
    else:
        spans = _runs(keys, key_scales)
        if spans is None:
            return KEYS_NOT_SORTED
    start = min(plan.offset, len(rows))
    stop = len(rows) if plan.limit is None else min(len(rows), start + plan.limit)
    groups = []
    truncated = source is probe and plan.probe_limit is not None and len(rows) >= plan.probe_limit
    for first, end in spans:
        need = max(0, min(end, stop) - max(first, start))
        if need:
            if truncated and end == len(rows):
                return PROBE_TRUNCATED
            groups.append(TieGroup(tuple(rows[first:end]), need))
    answers = TieGold(tuple(groups), plan.ordered)
    if not accepts(gold.rows, answers, gold_rows=gold.rows):
        return GOLD_NOT_ACCEPTED
    return answers


def _keys(row: tuple, plan: TiePlan, width: int) -> tuple:
    """The sort-key values of a probe row: gold's own columns, then the extra ones."""
    return tuple(
        row[key.index] if isinstance(key, OutputKey) else row[width + key.index]
        for key in plan.keys
    )


def _same(a: tuple, b: tuple, scales: list[float]) -> bool:
    try:
        return bool(a == b) or rows_close(a, b, scales)
    except Exception:
        return False


def _runs(keys: Sequence[tuple], scales: list[float]) -> list[tuple[int, int]] | None:
    """Maximal runs of adjacent keys equal under the ``ex`` value rules (``scales`` per key
    column, ``compare.column_magnitudes``) as (first, end) spans: two keys that ``ex`` would
    call one number are one engine's float noise, and ordering them is no real order. None if a
    key seen before comes back after another run (the rows are then not sorted by these
    values)."""
    spans: list[tuple[int, int]] = []
    seen: set = set()
    first = 0
    for index in range(1, len(keys) + 1):
        if index < len(keys) and _same(keys[index], keys[index - 1], scales):
            continue
        markers = set()
        for key in keys[first:index]:
            try:
                markers.add(_hashable(key))
            except TypeError:
                pass  # an unhashable key cannot be checked for coming back; the run counts
        if markers & seen:
            return None
        seen |= markers
        spans.append((first, index))
        first = index
    return spans if keys else []


def accepts(
    rows: Sequence[tuple],
    answers: TieGold,
    *,
    within: RowsWithin | None = None,
    gold_rows: Sequence[tuple] | None = None,
) -> bool:
    """Whether ``rows`` (a prediction's result) is one of the right answers.

    ``within(part, whole)`` decides whether ``part`` pairs row by row with rows of ``whole``;
    by default the ``ex`` rules (``compare.multiset_within``, each column's scale taken over
    the two results compared: ``rows`` and ``gold_rows``, gold's own result; without it,
    ``rows`` alone). Another rule is for measurements only, e.g. the cross-engine tolerance of
    ``logiccat.fidelity``.
    """
    rows = list(rows)
    if len(rows) != answers.size:
        return False
    candidates = [row for group in answers.groups for row in group.rows]
    if not candidates:
        return not rows
    width = len(candidates[0])
    if any(len(row) != width for row in rows + candidates):
        return False
    if within is None:
        magnitudes = column_magnitudes(rows + list(rows if gold_rows is None else gold_rows))

        def within(part: list[tuple], whole: list[tuple]) -> bool:
            return multiset_within(part, whole, magnitudes)

    if not answers.ordered:
        return all(within(rows, list(group.rows)) for group in answers.groups[:1])
    position = 0
    for group in answers.groups:
        segment = rows[position : position + group.need]
        position += group.need
        if not within(segment, list(group.rows)):
            return False
    return True


def acceptable_count(answers: TieGold) -> int:
    """How many distinct results are right: per group, the distinct ways to take ``need`` of
    its rows (rows equal under exact equality are one), times their orders when gold is
    ordered (any order within a group); the product over groups."""
    total = 1
    for group in answers.groups:
        total *= _choices(group, ordered=answers.ordered)
    return total


def _choices(group: TieGroup, *, ordered: bool) -> int:
    multiplicities = list(_multiplicities(group.rows).values())
    k = group.need
    n = len(group.rows)
    if ordered and k == n:  # the whole group in any order: a multinomial coefficient
        count = factorial(n)
        for m in multiplicities:
            count //= factorial(m)
        return count
    if all(m == 1 for m in multiplicities):  # distinct rows: choose k, in any order if ordered
        return comb(n, k) * (factorial(k) if ordered else 1)
    # ways[j]: distinct results of j rows from the row values seen so far, as sequences
    # (ordered: interleave t copies of a value among j places, C(j, t) ways) or as multisets.
    ways = [1] + [0] * k
    for m in multiplicities:
        ways = [
            sum(ways[j - t] * (comb(j, t) if ordered else 1) for t in range(min(m, j) + 1))
            for j in range(k + 1)
        ]
    return ways[k]


def _multiplicities(rows: Sequence[tuple]) -> Counter:
    try:
        return Counter(_hashable(row) for row in rows)
    except TypeError:
        return Counter(range(len(rows)))  # unhashable exotic values: count rows as distinct


def compare_with_ties(
    pred: Outcome, gold: Outcome, answers: TieGold | None, *, ordered: bool
) -> TieVerdict:
    """EX with ties: :func:`compare.compare`, and, where it fails, :func:`accepts` against
    ``answers`` (None: gold was not tie-probed, the literal verdict stands)."""
    verdict = compare(pred, gold, ordered=ordered)
    if answers is None:
        return TieVerdict(verdict, None)
    acceptable = acceptable_count(answers)
    if verdict.ex or pred.status is not Status.OK or gold.status is not Status.OK:
        return TieVerdict(verdict, acceptable)
    if len(pred.columns) != len(gold.columns) or not accepts(
        pred.rows, answers, gold_rows=gold.rows
    ):
        return TieVerdict(verdict, acceptable)
    return TieVerdict(Verdict(True, verdict.ex_strict, verdict.ex_set, TIE_EQUIVALENT), acceptable)
