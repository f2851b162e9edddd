"""Model outputs built to break a scorer, the same every run (no randomness without a seed).

``hostile_outputs()`` returns ``(name, output)`` pairs: the named cases of issue 10 (NUL, lone
surrogates, invalid UTF-8 decoded with ``surrogateescape``, 10 MB outputs, 10,000 fences, 5,000
nested parentheses, huge numeric literals, every placement of a fence and of ``</think>`` /
``<think>`` in a small answer) and ``RANDOM_CASES`` texts drawn with a fixed seed from
characters and SQL/markdown fragments. ``hostile_text()`` is the matching hypothesis strategy
(use it with ``derandomize=True``).

``truncated_names()`` names the cases that end inside ``<think>`` or inside an open fence, by
construction (the scorer must mark exactly those as truncated); ``looping_names()`` those of
them that repeat one piece of text to the end.
"""

from __future__ import annotations

import random

from hypothesis import strategies as st

SEED = 20261130
RANDOM_CASES = 120
MB = 1 << 20

# Pieces that mean something to an extractor: fences, think tags, markers, statement words,
# quotes, comments, separators, and the characters sqlite3 and UTF-8 refuse.
FRAGMENTS = (
    "```",
    "```sql\n",
    "\n```",
    "<think>",
    "</think>",
    "SELECT ",
    "select",
    "WITH x AS (",
    "FROM t",
    " WHERE a = 1",
    "(",
    ")",
    ";",
    "'",
    '"',
    "`",
    "[",
    "--",
    "/*",
    "*/",
    "\n",
    "\n\n",
    "SQL: ",
    "The answer is:",
    "UPDATE t SET a = 1",
    "DROP TABLE t",
    "INSERT INTO t ",
    "1e999999",
    "\x00",
    "\ud800",
    "\udfff",
    "\udc80",
    "é",
    "漢",
    "\u202e",
)

# Any code point, lone surrogates included (hypothesis leaves them out of text by default).
_ANY_CHARACTER = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())


def hostile_text(max_pieces: int = 40) -> st.SearchStrategy[str]:
    """Texts made of arbitrary characters and the FRAGMENTS above."""
    piece = st.one_of(st.sampled_from(FRAGMENTS), st.text(_ANY_CHARACTER, max_size=8))
    return st.lists(piece, max_size=max_pieces).map("".join)


def invalid_utf8_as_text() -> str:
    """Every byte value, and broken UTF-8 sequences, decoded the way a lenient reader would."""
    raw = bytes(range(256)) + b"SELECT '\xff\xfe' \xc3\x28 \xed\xa0\x80 FROM t;"
    return raw.decode("utf-8", errors="surrogateescape")


def _placements(answer: str, inserted: str) -> list[str]:
    return [answer[:i] + inserted + answer[i:] for i in range(len(answer) + 1)]


_SMALL_ANSWER = "<think>a</think>```sql\nSELECT 1;\n```"


def named_outputs() -> list[tuple[str, str]]:
    """The named hostile cases (see the module docstring)."""
    cases = [
        ("nul_in_string", "SELECT name FROM t WHERE name = '\x00';"),
        ("nul_bare", "\x00"),
        ("nul_in_fence", "```sql\nSELECT 1\x00\n```"),
        ("lone_surrogates", "SELECT '\ud800' AS a, '\udfff' AS b"),
        ("lone_surrogate_fence", "```sql\nSELECT '\udc80';\n```"),
        ("invalid_utf8", invalid_utf8_as_text()),
        ("ten_mb_then_fence", "x " * (5 * MB) + "```sql\nSELECT 1\n```"),
        ("ten_mb_select_lines", "select a from\n" * (10 * MB // 14)),
        ("ten_mb_one_string", "SELECT '" + ";" * (10 * MB)),
        ("ten_thousand_fences", "```sql\nSELECT (\n```\n" * 10_000),
        ("ten_thousand_open_fences", "```" * 10_001),
        ("nested_parentheses", "SELECT " + "(" * 5_000 + "1" + ")" * 5_000),
        ("nested_parentheses_lines", "SELECT " + "(\n" * 5_000 + "1" + "\n)" * 5_000),
        ("unbalanced_parentheses", "SELECT " + "(" * 5_000),
        ("huge_integer", "SELECT " + "9" * 100_000),
        ("huge_float", "SELECT 1e999999, -1e999999, 0.0e-999999"),
        ("huge_literal_in_prose", "Here:\nSELECT " + "7" * 1_000_000 + " FROM t\nok"),
        ("semicolon_run", "SELECT 1" + ";" * 100_000 + "SELECT 2"),
        ("comment_soup", "SELECT 1 /*" + ";--\n" * 100_000),
        ("think_unclosed", "<think>\nLet me try SELECT name FROM t"),
        ("fence_unclosed", "```sql\nSELECT name FROM t WHERE"),
    ]
    for i, output in enumerate(_placements(_SMALL_ANSWER, "```")):
        cases.append((f"fence_at_{i}", output))
    for tag in ("</think>", "<think>"):
        for i, output in enumerate(_placements(_SMALL_ANSWER, tag)):
            cases.append((f"{tag.strip('<>/')}_{'close' if '/' in tag else 'open'}_at_{i}", output))
    return cases


def random_outputs(count: int = RANDOM_CASES, seed: int = SEED) -> list[tuple[str, str]]:
    """``count`` texts of random fragments and characters, the same for the same seed."""
    rng = random.Random(seed)
    outputs = []
    for i in range(count):
        pieces = []
        for _ in range(rng.randrange(1, 60)):
            if rng.random() < 0.6:
                pieces.append(rng.choice(FRAGMENTS))
            else:
                pieces.append("".join(chr(rng.randrange(0, 0x110000)) for _ in range(4)))
        outputs.append((f"random_{i}", "".join(pieces)))
    return outputs


def hostile_outputs() -> list[tuple[str, str]]:
    return named_outputs() + random_outputs()


def truncated_names() -> set[str]:
    """Named cases that end inside an unclosed ``<think>`` or an open fence.

    Derived from how each case is built, not from the extractor: an open ``<think>`` with no
    ``</think>`` anywhere, or an odd number of ``` fences after the last ``</think>``.
    """
    names = set()
    for name, output in named_outputs():
        lowered = output.lower()
        close = lowered.rfind("</think>")
        if close < 0 and "<think>" in lowered:
            names.add(name)
            continue
        answer = output[close + len("</think>") :] if close >= 0 else output
        if answer.count("```") % 2 == 1:
            names.add(name)
    return names


def looping_names() -> set[str]:
    """Truncated named cases that are one piece of text repeated to the end, by construction
    (``"```" * 10_001``): a larger generation budget would not have ended them."""
    return {"ten_thousand_open_fences"}


#: Every status a score dict may carry.
STATUSES = {"ok", "error", "timeout", "too_many_rows", "no_sql", "crashed", "missing"}


def check_every_output_scored(cases: list[tuple[str, str]], scores: list[dict]) -> None:
    """Each case has one score dict, in order, with a known status, a reason, 0/1 numbers that
    are 0 unless the query ran, and ``truncated`` exactly for the cases built truncated."""
    assert len(scores) == len(cases)
    truncated = truncated_names()
    for (name, _), score in zip(cases, scores, strict=True):
        assert score["status"] in STATUSES, name
        assert isinstance(score["reason"], str) and score["reason"], name
        numbers = (score["ves"], score["ex"], score["ex_strict"], score["ex_set"])
        assert set(numbers) <= {0, 1}, name
        if score["status"] != "ok":
            assert numbers == (0, 0, 0, 0), name
        if name in truncated:
            assert score["truncated"] is True, name
            assert score["repetition_loop"] is (name in looping_names()), name
        elif not name.startswith("random_"):
            assert score["truncated"] is False, name
        if not score["truncated"]:
            assert score["repetition_loop"] is False, name


# Answers that hold more than one statement, or one that is not a read-only query, on an item
# whose gold is ``{gold}``: (case id, answer, status, reason, VES, EX). Expected values follow
# from the rule (README, Metrics): one read-only query per answer, comments and empty
# statements aside; a refused answer is not run and scores 0. The first rows are the controls:
# gold itself, wrapped in what is not a statement, runs and matches itself.
ONE_STATEMENT_CASES = [
    ("gold", "{gold}", "ok", "match", 1, 1),
    ("gold_then_empty_statements_and_comment", "{gold};\n;\n-- done\n", "ok", "match", 1, 1),
    (
        "fenced_gold_then_prose_with_semicolon",
        "```sql\n{gold};\n```\n\nThis answers the question; run it as is.",
        "ok",
        "match",
        1,
        1,
    ),
    ("gold_then_drop", "{gold}; DROP TABLE t;", "error", "multiple_statements", 0, 0),
    ("update_then_gold", "UPDATE t SET a = 1; {gold}", "error", "multiple_statements", 0, 0),
    (
        "fence_gold_then_select",
        "```sql\n{gold};\nSELECT 1;\n```",
        "error",
        "multiple_statements",
        0,
        0,
    ),
    (
        "fence_select_comment_then_gold",
        "```sql\nSELECT 1; -- first try\n{gold}\n```",
        "error",
        "multiple_statements",
        0,
        0,
    ),
    ("bare_update", "UPDATE t SET a = 1", "error", "not_read_only", 0, 0),
    ("fenced_delete", "```sql\nDELETE FROM t;\n```", "error", "not_read_only", 0, 0),
    (
        "insert_select_after_prose",
        "Here is the query:\nINSERT INTO t SELECT * FROM t;",
        "error",
        "not_read_only",
        0,
        0,
    ),
    ("drop_after_marker", "The answer is: DROP TABLE t", "error", "not_read_only", 0, 0),
    (
        "cte_then_delete",
        "WITH x AS (SELECT 1 AS a) DELETE FROM t WHERE a IN (SELECT a FROM x)",
        "error",
        "not_read_only",
        0,
        0,
    ),
    ("fenced_pragma", "```sql\nPRAGMA table_info(t)\n```", "error", "not_read_only", 0, 0),
    (
        "create_table_as_select",
        "```sql\nCREATE TABLE t2 AS SELECT 1\n```",
        "error",
        "not_read_only",
        0,
        0,
    ),
]


def check_one_statement_cases(item, gold_cache_dir, hooks=None) -> None:
    """Score every answer of ONE_STATEMENT_CASES to ``item`` (``hooks``: the benchmark's, for
    ``Scorer``); each gets its row's status, reason, VES and EX."""
    from sqlbench_lmeval.execution import GoldCache
    from sqlbench_lmeval.scoring.hooks import Hooks
    from sqlbench_lmeval.scoring.scorer import Scorer

    gold = item.gold_sql.strip().rstrip(";")
    answers = [case[1].format(gold=gold) for case in ONE_STATEMENT_CASES]
    scores = Scorer(
        gold_cache=GoldCache(gold_cache_dir), progress=False, hooks=hooks or Hooks()
    ).score([item] * len(answers), answers)
    for (case, _, status, reason, ves, ex), score in zip(ONE_STATEMENT_CASES, scores, strict=True):
        got = (score["status"], score["reason"], score["ves"], score["ex"])
        assert got == (status, reason, ves, ex), case
        if status == "error":  # refused answers never run
            assert score["executed_sql"] is None, case
