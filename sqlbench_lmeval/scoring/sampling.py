"""Several sampled answers per question, as pure functions that
:mod:`sqlbench_lmeval.scoring.sampled` calls: :func:`pass_at_k`, the unbiased estimator
(docs/sampling.md#passk), :func:`vote`, execution-result voting (docs/sampling.md#voting), and
:func:`normalized_sql`, the text two samples must share to be run once.

>>> pass_at_k(n=4, c=1, k=2), pass_at_k(n=4, c=0, k=2), pass_at_k(n=8, c=2, k=7)
(0.5, 0.0, 1.0)
>>> results = ["wrong", "gold", "wrong", "gold"]  # two groups of two: the earlier one wins
>>> vote([True] * 4, [r == "gold" for r in results], lambda i, j: results[i] == results[j])
Vote(groups=[0, 1, 0, 1], winner=0, sizes=[2, 2])
>>> normalized_sql("SELECT  a,\\n  b FROM t WHERE s = 'x  y'  ")
"SELECT a, b FROM t WHERE s = 'x  y'"
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: The k of every ``pass_at_<k>`` a sampled task may report (those with k <= n are reported;
#: the task YAMLs list each, as lm-eval refuses a metric its ``metric_list`` lacks).
PASS_AT_K = (1, 2, 4, 8, 16, 32, 64)

# A quoted string or identifier (with doubled-quote escapes): whitespace inside it is data.
# Quoted literals and names, and line comments with the line end that closes them (collapsing
# that newline would comment out the rest of the query): kept verbatim. ``#`` opens a line
# comment in MySQL; its line is kept verbatim in every dialect (at worst two samples that
# mean the same are scored separately).
_QUOTED = re.compile(r"""('(?:[^']|'')*'|"(?:[^"]|"")*"|`(?:[^`]|``)*`|(?:--|#)[^\n]*(?:\n|$))""")
_SPACE = re.compile(r"\s+")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` samples of which ``c`` are correct (Chen et al. 2021)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    if n - c < k:  # every draw of k samples holds a correct one
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def reported_ks(n: int) -> tuple[int, ...]:
    """The k of :data:`PASS_AT_K` a run of ``n`` samples per item allows."""
    return tuple(k for k in PASS_AT_K if k <= n)


def normalized_sql(sql: str) -> str:
    """``sql`` with each run of whitespace outside quotes made one space, ends stripped.

    Whitespace inside a string literal or quoted name is kept: ``'a  b'`` and ``'a b'`` are
    different queries. So is a ``--`` or ``#`` comment with its closing newline:
    ``a -- x\nFROM t`` and ``a -- x FROM t`` are different queries.
    """
    parts = _QUOTED.split(sql)
    # re.split with one group: even indices are outside quotes, odd ones are the quoted parts.
    return "".join(part if i % 2 else _SPACE.sub(" ", part) for i, part in enumerate(parts)).strip()


@dataclass(frozen=True)
class Vote:
    """The outcome of :func:`vote`.

    ``groups[i]``: the result group of sample ``i`` (numbered by first appearance), None when
    it did not run successfully. ``winner``: the sample whose answer the vote picks (the first
    sample of the winning group), or None when no sample ran. ``sizes[g]``: samples in group
    ``g``.
    """

    groups: list[int | None]
    winner: int | None
    sizes: list[int]


def vote(
    ran: Sequence[bool],
    correct: Sequence[bool],
    same_result: Callable[[int, int], bool],
) -> Vote:
    """Group samples by result and pick the largest group (ties: the earliest first sample).

    ``ran[i]``: sample ``i`` ran successfully; ``correct[i]``: its result matches gold (EX).
    ``same_result(i, j)``: samples ``i`` and ``j`` (both ran) have the same result under EX's
    comparison rule, ``j`` playing gold's part. Every correct sample is in one group (the
    results equal to gold's, transitively through gold, even where a tolerance would not
    chain); any other sample joins the first group whose first sample it matches, else
    starts a group. Correct samples are never compared with others, nor others with the gold
    group, so a group is either "same as gold" or wholly wrong.
    """
    groups: list[int | None] = []
    firsts: list[int] = []  # first sample of each group
    sizes: list[int] = []
    gold_group: int | None = None
    for i, (did_run, is_correct) in enumerate(zip(ran, correct, strict=True)):
        if not did_run:
            groups.append(None)
            continue
        if is_correct:
            if gold_group is None:
                gold_group = _new_group(i, firsts, sizes)
            group = gold_group
        else:
            group = next(
                (g for g, first in enumerate(firsts) if g != gold_group and same_result(i, first)),
                None,
            )
            if group is None:
                group = _new_group(i, firsts, sizes)
        sizes[group] += 1
        groups.append(group)
    if not sizes:
        return Vote(groups, None, sizes)
    # Groups are numbered by first appearance, so the lowest-numbered largest one is the tie's
    # earliest.
    best = max(range(len(sizes)), key=lambda g: (sizes[g], -g))
    return Vote(groups, firsts[best], sizes)


def _new_group(first: int, firsts: list[int], sizes: list[int]) -> int:
    firsts.append(first)
    sizes.append(0)
    return len(firsts) - 1
