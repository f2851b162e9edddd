"""Is the predicted result the gold result? :func:`compare` judges a prediction's outcome
against gold's in the three versioned modes (``ex``, tolerant and order-aware only where gold
orders; ``ex_strict``, the literal recipe; ``ex_set``, BIRD's), :func:`ves` says whether it
ran, and :func:`same_result` is ``ex`` alone (the rules, the tolerance and why:
docs/scoring.md#comparing-results; bump :data:`COMPARISON_VERSION` on any change of them).

>>> from sqlbench_lmeval.execution.outcome import Outcome, Status
>>> gold = Outcome(Status.OK, columns=("n",), rows=((0.3,), (2,)))
>>> noisy = Outcome(Status.OK, columns=("total",), rows=((2,), (0.1 + 0.2,)))
>>> compare(noisy, gold, ordered=False)  # float noise, another order: only ex forgives both
Verdict(ex=True, ex_strict=False, ex_set=False, reason='match')
>>> compare(noisy, gold, ordered=True).reason
'order'
>>> compare(noisy, Outcome(Status.TIMEOUT), ordered=False).reason
'gold_timeout'
>>> ves(noisy), ves(Outcome(Status.TOO_MANY_ROWS))
(1, 0)
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

import sqlglot
from sqlglot import exp

from sqlbench_lmeval.execution.outcome import Outcome, Status
from sqlbench_lmeval.vocabulary import Reason

#: 3: ``ex`` is tie-aware (``gold_ties.tie_verdict`` above :func:`compare`): another of
#: gold's right answers under its ORDER BY ties and LIMIT cut scores 1 (``tie_equivalent``).
#: 4: numbers compare per value (a column's scale forgives only residues, and the scale is
#: its bulk, not its largest value); tie groups join sort keys equal under that rule;
#: ``ex_strict``/``ex_set`` need gold's width where gold is empty.
#: 5: ``data_dependence`` asks whether an answer's result on each perturbed copy is gold's
#: there (``ex`` of the two), on two copies with unpredictable changes; ``differs`` is new.
COMPARISON_VERSION = "5"
# Float noise between two queries on the same engine and data is a few units in the last place
# (~1e-16 relative); 1e-12 forgives that with margin, and nothing else: ROUND(x, 2) passes only
# where the value itself is above 5e9, 4 decimals above 5e7 (version 1's 1e-6 relative plus
# 1e-9 absolute accepted ROUND(x, 2) above 5,000, and anything within 1e-9 of a tiny value).
REL_TOL = 1e-12


@dataclass(frozen=True)
class Verdict:
    """The three comparison modes for one (prediction, gold) pair, and why ``ex`` is what it is.

    ``reason`` is one of: ``match``, ``pred_<status>``, ``gold_<status>``, ``column_count``,
    ``row_count``, ``values``, ``order`` (same multiset, wrong order under an ordered gold).
    """

    ex: bool
    ex_strict: bool
    ex_set: bool
    reason: str


def ves(pred: Outcome) -> int:
    """Valid execution: 1 iff the prediction ran to completion (Status.OK)."""
    return int(pred.status is Status.OK)


def gold_order_matters(gold_sql: str, dialect: str) -> bool:
    """True iff the outermost query of ``gold_sql`` has ORDER BY (parsed with sqlglot).

    ORDER BY inside a subquery, CTE or window does not count. Unparseable gold falls back to
    False (unordered comparison): the lenient choice, as an unparsed order cannot be trusted.
    """
    return _order_matters(gold_sql, dialect)


@lru_cache(maxsize=4096)
def _order_matters(gold_sql: str, dialect: str) -> bool:
    if "order" not in gold_sql.lower():
        return False  # no ORDER BY anywhere (a cheap exact pre-check; parsing costs ~0.3 ms)

    try:
        tree = sqlglot.parse_one(gold_sql, read=dialect or None)
    except Exception:
        return False
    return outermost_order_by(tree)


def outermost_order_by(tree: exp.Expression | None) -> bool:
    """Whether the outermost query of a parsed gold has ORDER BY, parentheses looked through
    (the rule of :func:`gold_order_matters`, for a caller that parsed gold already: the tie
    plan, so that gold is parsed once)."""
    while isinstance(tree, (exp.Subquery, exp.Paren)) and not tree.args.get("order"):
        tree = tree.this
    return tree is not None and bool(tree.args.get("order"))


def compare(pred: Outcome, gold: Outcome, *, ordered: bool) -> Verdict:
    """Compare a prediction's outcome with the gold outcome in all three modes."""
    if gold.status is not Status.OK:
        return Verdict(False, False, False, f"gold_{gold.status.value}")
    if pred.status is not Status.OK:
        return Verdict(False, False, False, f"pred_{pred.status.value}")
    pred_rows, gold_rows = list(pred.rows), list(gold.rows)
    if len(pred.columns) != len(gold.columns):
        # Rows of other widths never compare equal, except no rows at all: an empty result
        # of any width would otherwise match every empty gold in the literal modes.
        return Verdict(False, False, False, Reason.COLUMN_COUNT)
    ex_strict = _safe_eq(pred_rows, gold_rows)
    ex_set = _safe_set_eq(pred_rows, gold_rows)
    if len(pred_rows) != len(gold_rows):
        return Verdict(False, ex_strict, ex_set, Reason.ROW_COUNT)
    if ex_strict:  # identical raw rows (Python's exact ==) match in every mode
        return Verdict(True, ex_strict, ex_set, Reason.MATCH)
    if not _same_width(pred_rows, gold_rows) or _surely_differ(pred_rows, gold_rows, False):
        # Rows whose outlines cannot pair are no multiset match, let alone one in order.
        return Verdict(False, ex_strict, ex_set, Reason.VALUES)
    magnitudes = column_magnitudes(pred_rows + gold_rows)
    if ordered:
        if all(_rows_close(p, g, magnitudes) for p, g in zip(pred_rows, gold_rows, strict=True)):
            return Verdict(True, ex_strict, ex_set, Reason.MATCH)
        reason = (
            Reason.ORDER if _multiset_equal(pred_rows, gold_rows, magnitudes) else Reason.VALUES
        )
        return Verdict(False, ex_strict, ex_set, reason)
    if _multiset_equal(pred_rows, gold_rows, magnitudes):
        return Verdict(True, ex_strict, ex_set, Reason.MATCH)
    return Verdict(False, ex_strict, ex_set, Reason.VALUES)


def same_result(pred: Outcome, gold: Outcome, *, ordered: bool) -> bool:
    """``compare(pred, gold, ordered=ordered).ex`` alone: the same answer, without the literal
    modes and the reason, and without the tolerant matching where a cheap check already
    proves the results differ (:func:`_surely_differ`). For callers that need ``ex`` only and
    mostly compare results that plainly differ (``data_dependence``: a result on a
    perturbed copy, rows doubled or dropped, values shifted, against the original)."""
    if gold.status is not Status.OK or pred.status is not Status.OK:
        return False
    if len(pred.columns) != len(gold.columns):
        return False
    pred_rows, gold_rows = list(pred.rows), list(gold.rows)
    if len(pred_rows) != len(gold_rows):
        return False
    if _safe_eq(pred_rows, gold_rows):
        return True
    if not _same_width(pred_rows, gold_rows):
        return False
    if _surely_differ(pred_rows, gold_rows, ordered):
        return False
    magnitudes = column_magnitudes(pred_rows + gold_rows)
    if ordered:
        return all(_rows_close(p, g, magnitudes) for p, g in zip(pred_rows, gold_rows, strict=True))
    return _multiset_equal(pred_rows, gold_rows, magnitudes)


def _surely_differ(pred: list[tuple], gold: list[tuple], ordered: bool) -> bool:
    """True only where ``ex`` is false whatever the columns' scales: rows of equal number and
    width whose *outlines* cannot be paired. A row's outline keeps its NULLs and strings, and
    every value of an *exact* column (one holding nothing but NULLs, strings and ints on both
    sides), and writes every other value as one placeholder. Two values are close only if both
    are NULL, or both strings and equal, or neither is either (``values_close``); in an exact
    column only if equal, as two ints are close only when equal and no float or Decimal is
    there to be close to one. So rows are close only where their outlines are equal: in order
    (``ordered``) each row's outline must equal its counterpart's, else the multisets of
    outlines must be equal. False claims nothing (also when a value cannot be hashed).

    >>> _surely_differ([(1, 2.5)], [(2, 2.5)], False), _surely_differ([(1, 2.5)], [(1, 2.6)], False)
    (True, False)
    >>> _surely_differ([(1,), (2,)], [(2,), (1.0,)], False)  # 1.0 is close to 1: not exact
    False
    """
    try:
        exact = [
            set(map(type, column)) <= _EXACT_TYPES for column in zip(*pred, *gold, strict=True)
        ]

        def outline(row: tuple) -> tuple:
            return tuple(
                v if keep or v is None or isinstance(v, str) else _OTHER
                for v, keep in zip(row, exact, strict=True)
            )

        if ordered:
            return any(p != g and outline(p) != outline(g) for p, g in zip(pred, gold, strict=True))
        return Counter(map(outline, pred)) != Counter(map(outline, gold))
    except Exception:  # e.g. an unhashable value, or == raising: let the full rules decide
        return False


_OTHER = ("$other",)  # any value that is neither NULL nor a string, in an outline
#: The types of an exact column's values (bool is an int; ``type`` is matched exactly, so
#: no subclass with an ``==`` of its own is among them).
_EXACT_TYPES = frozenset({int, bool, str, type(None)})


# -- raw modes ---------------------------------------------------------------------------


def _safe_eq(a: list, b: list) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return False


def _safe_set_eq(a: list, b: list) -> bool:
    try:
        return set(a) == set(b)
    except TypeError:  # DuckDB lists/maps are unhashable
        pass
    try:
        return {_hashable(r) for r in a} == {_hashable(r) for r in b}
    except Exception:
        return False


def _hashable(value: Any) -> Any:
    """Rows as the engine gave them, with DuckDB lists/maps turned into tuples for hashing."""
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return ("$map", tuple((_hashable(k), _hashable(v)) for k, v in value.items()))
    return value


# -- values ------------------------------------------------------------------------------

_NUMBER_TYPES = (int, float, Decimal)  # bool is an int subclass


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBER_TYPES)


def _numbers_close(a: Any, b: Any, magnitude: float) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b  # exact, even beyond float precision
    try:
        x, y = float(a), float(b)
    except (OverflowError, ValueError):
        return a == b
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return _float_close(x, y, magnitude)


def _float_close(x: float, y: float, magnitude: float) -> bool:
    """Within REL_TOL of the larger of the two, or both residues next to ``magnitude`` (the
    column's scale, :func:`column_magnitudes`): noise next to the column, never a value far
    from its counterpart relative to its own size. Infinities equal only themselves."""
    if x == y:
        return True
    if math.isclose(x, y, rel_tol=REL_TOL):
        return True
    bound = REL_TOL * magnitude  # finite: magnitudes are
    return abs(x) <= bound and abs(y) <= bound


def _same_width(pred: list[tuple], gold: list[tuple]) -> bool:
    width = len(gold[0]) if gold else 0
    return all(len(row) == width for rows in (pred, gold) for row in rows)


def column_magnitudes(rows: list[tuple]) -> list[float]:
    """Per column, its scale: the magnitude that at least half of its numbers reach.

    Of the finite numbers in the column (lists count by their largest element; NULL, text,
    NaN and infinities are not numbers here), sorted by magnitude, the one at position n // 2,
    or 0 without numbers. A value at most REL_TOL times this is a residue (noise next to most
    of the column). ``rows`` are both results together, which keeps the comparison symmetric.
    """
    if not rows:
        return []
    scales = []
    for c in range(len(rows[0])):
        sizes = sorted(m for row in rows if (m := _magnitude(row[c])) is not None)
        scales.append(sizes[len(sizes) // 2] if sizes else 0.0)
    return scales


def _magnitude(value: Any) -> float | None:
    """|value| of a finite number (a list's largest, 0 for an empty one), else None."""
    if isinstance(value, (list, tuple)):
        return max((m for v in value if (m := _magnitude(v)) is not None), default=0.0)
    if isinstance(value, dict):
        return max((m for v in value.values() if (m := _magnitude(v)) is not None), default=0.0)
    if not _is_number(value):
        return None
    try:
        f = abs(float(value))
    except (OverflowError, ValueError):
        return None  # beyond float range: such ints compare exactly, Decimals by ==
    return f if math.isfinite(f) else None


def values_close(a: Any, b: Any, magnitude: float = 0.0) -> bool:
    """Equality of two result values under the ``ex`` rules, in a column of ``magnitude``
    (see :func:`column_magnitudes`; 0 leaves only the tolerance relative to ``a`` and ``b``)."""
    if a is None or b is None:
        return a is None and b is None
    if _is_number(a) or _is_number(b):
        return _is_number(a) and _is_number(b) and _numbers_close(a, b, magnitude)
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, (bytes, bytearray)) or isinstance(b, (bytes, bytearray)):
        return isinstance(a, (bytes, bytearray)) and isinstance(b, (bytes, bytearray)) and a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(
            values_close(x, y, magnitude) for x, y in zip(a, b, strict=True)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_close(a[k], b[k], magnitude) for k in a)
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def rows_close(p: tuple, g: tuple, magnitudes: list[float]) -> bool:
    """Two rows equal value by value under the ``ex`` rules (``magnitudes``: the columns'
    scales, :func:`column_magnitudes`)."""
    return len(p) == len(g) and all(
        values_close(x, y, m) for x, y, m in zip(p, g, magnitudes, strict=True)
    )


_rows_close = rows_close


# -- multiset matching -------------------------------------------------------------------
#
# Rows match as a multiset iff a perfect matching exists in the bipartite graph "pred row p
# -- gold row g whenever _rows_close(p, g)". Deciding that cheaply and exactly:
#
# 0. Equal rows under Python's == (exact numbers, 1 == 1.0) are close: if the raw multisets
#    agree, done. This settles nearly every match.
# 1. Otherwise each number gets the id of its tolerance cluster in its column: the column's
#    numbers (both sides) sorted by float value and chained while neighbours are float-close.
#    Closeness is convex along the number line: for a <= b <= c, close(a, c) implies
#    close(a, b) and close(b, c) (relatively close a and c have one sign and b between them is
#    at least as close to each, relative to the larger; residues a and c bound b, a residue
#    too), so two close values always share a cluster; rows can only match within a group
#    of equal cluster/exact keys and the group sizes must agree on both sides. This settles
#    nearly every mismatch.
# 2. A cluster is "tight" when all its values are pairwise close: its extremes are float-close
#    and it holds at most one distinct int (two ints must be exactly equal). If every number
#    column of a group is tight, any pairing within the group works.
# 3. Otherwise (a chain of near values wider than the tolerance, distinct big ints, DuckDB
#    lists/structs: rare) the group is settled by maximum bipartite matching (Hopcroft-Karp).

_CONTAINER = ("$container",)  # lists/maps: no key (they go to the matching step)


def _multiset_equal(pred: list[tuple], gold: list[tuple], magnitudes: list[float]) -> bool:
    """Rows of equal width as multisets under the ``ex`` rules (``magnitudes`` per column)."""
    return len(pred) == len(gold) and multiset_within(pred, gold, magnitudes)


def multiset_within(pred: list[tuple], gold: list[tuple], magnitudes: list[float]) -> bool:
    """Whether every row of ``pred`` pairs with a row of its own in ``gold`` under the ``ex``
    rules: ``pred`` is a sub-multiset of ``gold`` (rows of equal width, ``magnitudes`` per
    column as :func:`column_magnitudes` of both). Of equal sizes: multiset equality. Tie-aware
    EX (``tie_compare``) asks it of the rows taken from a tie group that a LIMIT cuts.
    """
    if len(pred) > len(gold):
        return False
    if not pred:
        return True
    try:
        if not Counter(pred) - Counter(gold):
            return True
    except TypeError:
        pass  # unhashable values (DuckDB lists): take the general route
    clusters = [_column_clusters(pred, gold, c, m) for c, m in enumerate(magnitudes)]

    def key(row: tuple) -> tuple:
        return tuple(_key(v, clusters[c][0]) for c, v in enumerate(row))

    groups: dict[tuple, tuple[list, list]] = defaultdict(lambda: ([], []))
    try:
        for row in pred:
            groups[key(row)][0].append(row)
        for row in gold:
            groups[key(row)][1].append(row)
    except TypeError:  # unhashable exotic values: one group, settled by matching
        groups = {(): (pred, gold)}
    for group_key, (p_rows, g_rows) in groups.items():
        if len(p_rows) > len(g_rows):
            return False
        if not _group_is_tight(group_key, clusters) and not _perfect_matching(
            p_rows, g_rows, magnitudes
        ):
            return False
    return True


def _group_is_tight(group_key: tuple, clusters: list) -> bool:
    if not group_key:
        return False
    for column, part in enumerate(group_key):
        if part == _CONTAINER:
            return False
        if part[0] == "$cluster" and not clusters[column][1][part[1]]:
            return False
    return True


def _exact_value(v: Any) -> Any:
    if v is None:
        return ("$null",)
    if isinstance(v, float) and math.isnan(v):
        return ("$nan",)
    if _is_number(v):
        return ("$num", v)  # Python's == on int/float/Decimal is exact numeric equality
    if isinstance(v, str):
        return ("$str", v)
    if isinstance(v, (bytes, bytearray)):
        return ("$bytes", bytes(v))
    if isinstance(v, (list, tuple)):
        return ("$list", tuple(_exact_value(x) for x in v))
    if isinstance(v, dict):
        return ("$map", tuple((_exact_value(k), _exact_value(x)) for k, x in v.items()))
    return (type(v).__name__, v)


def _plain_number(v: Any) -> bool:
    return _is_number(v) and not (isinstance(v, float) and math.isnan(v))


def _as_float(v: Any) -> float:
    try:
        return float(v)
    except OverflowError:
        return math.copysign(math.inf, v)


def _column_clusters(pred: list[tuple], gold: list[tuple], column: int, magnitude: float):
    """One column's tolerance clusters: ({number identity: cluster id}, [tight per cluster])."""
    numbers: dict[tuple, Any] = {}
    for rows in (pred, gold):
        for row in rows:
            v = row[column]
            if _plain_number(v):
                numbers[_num_identity(v)] = v
    ordered = sorted(numbers.items(), key=lambda item: _as_float(item[1]))
    cluster_of: dict[tuple, int] = {}
    tight: list[bool] = []
    members: list[Any] = []

    def close_cluster() -> None:
        if members:
            ints = {v for v in members if isinstance(v, int)}
            tight.append(
                _float_close(_as_float(members[0]), _as_float(members[-1]), magnitude)
                and len(ints) <= 1
                and all(math.isfinite(_as_float(v)) for v in members)
            )

    previous = None
    for identity, v in ordered:
        f = _as_float(v)
        if previous is None or not _float_close(previous, f, magnitude):
            close_cluster()
            members = []
        members.append(v)
        cluster_of[identity] = len(tight)
        previous = f
    close_cluster()
    return cluster_of, tight


def _num_identity(v: Any) -> tuple:
    # Keyed with the type: 1, 1.0 and True are equal dict keys in Python but each must find
    # its own entry (they do land in one cluster, being equal numbers).
    return (type(v).__name__, v)


def _key(v: Any, cluster_of: dict) -> Any:
    if _plain_number(v):
        return ("$cluster", cluster_of[_num_identity(v)])
    if isinstance(v, (list, tuple, dict)):
        return _CONTAINER
    return _exact_value(v)


def _perfect_matching(pred: list[tuple], gold: list[tuple], magnitudes: list[float]) -> bool:
    """Can every row of ``pred`` be paired with its own row of ``gold`` (as many or more rows),
    every pair close?"""
    adjacency = [[j for j, g in enumerate(gold) if _rows_close(p, g, magnitudes)] for p in pred]
    if any(not edges for edges in adjacency):
        return False
    return _HopcroftKarp(adjacency, len(gold)).maximum() == len(pred)


class _HopcroftKarp:
    """Hopcroft-Karp's maximum matching of a bipartite graph: left node ``i`` may pair with
    the right nodes ``adjacency[i]`` (of ``right`` in all)."""

    def __init__(self, adjacency: list[list[int]], right: int) -> None:
        self.adjacency = adjacency
        self.n = len(adjacency)
        self.match_left = [-1] * self.n
        self.match_right = [-1] * right
        self.infinity = self.n + 1
        self.dist: list[int] = []

    def maximum(self) -> int:
        """The size of a maximum matching."""
        matched = 0
        while self._layers():
            for i in range(self.n):
                if self.match_left[i] == -1 and self._augment(i):
                    matched += 1
        return matched

    def _layers(self) -> bool:
        """Breadth-first layers from the free left nodes; whether a free right node is reached."""
        queue = [i for i in range(self.n) if self.match_left[i] == -1]
        dist = [self.infinity] * self.n
        for i in queue:
            dist[i] = 0
        found = False
        head = 0
        while head < len(queue):
            i = queue[head]
            head += 1
            for j in self.adjacency[i]:
                k = self.match_right[j]
                if k == -1:
                    found = True
                elif dist[k] == self.infinity:
                    dist[k] = dist[i] + 1
                    queue.append(k)
        self.dist = dist
        return found

    def _augment(self, i: int) -> bool:
        """An augmenting path from free left node ``i`` along the layers, applied if found."""
        dist, adjacency = self.dist, self.adjacency
        stack = [(i, iter(adjacency[i]))]
        path = []
        while stack:
            node, edges = stack[-1]
            advanced = False
            for j in edges:
                k = self.match_right[j]
                if k == -1:
                    path.append((node, j))
                    for a, b in path:
                        self.match_left[a] = b
                        self.match_right[b] = a
                    return True
                if dist[k] == dist[node] + 1:
                    path.append((node, j))
                    stack.append((k, iter(adjacency[k])))
                    advanced = True
                    break
            if not advanced:
                dist[node] = self.infinity
                stack.pop()
                if path:
                    path.pop()
        return False
