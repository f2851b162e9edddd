"""Model output -> one SQL statement (or None), and how it was found.

Steps, in order (``Extraction.method`` lists the ones that applied, joined by ``+``):

1. ``after_think``: reasoning is dropped - only the text after the last ``</think>`` counts. An
   opened but never closed ``<think>`` (output cut off while reasoning) gives no SQL
   (``unclosed_think``): its drafts are not an answer.
2. ``prompt_continuation``: when the prompt ends in a SQL fragment (``prompt_tail``, e.g.
   ``"SQL: SELECT"``) and the output continues it (does not restart with that keyword, a fence
   or reasoning), the fragment is put back in front, so ``" name FROM t"`` becomes the whole
   ``SELECT name FROM t`` - never a subquery found inside the continuation.
3. ``fenced_sql``: the last fenced block labelled as SQL (```` ```sql ````, ``sqlite``,
   ``mysql``, ``duckdb``, ...); else ``fenced``: the last unlabelled fenced block that holds a
   query. A fence cut off by the token limit still counts.
4. ``answer_marker``: the text after the last "The answer is:", "Final answer:", "SQL query:",
   "SQL:" or "Answer:".
5. ``plain`` (the text starts with the query) or ``after_prose`` (leading prose skipped). A
   single line that starts with SELECT/WITH is taken whole, without parsing (fast path for
   bare answers). Else ``inline_code``: the last `` `SELECT ...` `` span in prose.

Inside the chosen text the statement starts at the first ``SELECT``/``WITH`` (outside ``--``
comments) from which a parseable query follows - the outermost query comes first in the text,
so a subquery is never carved out of a longer query. Several statements: the FIRST complete
one is taken (its end found with ``sqlite3.complete_statement``, so a ``;`` inside a string or
comment does not split it). Trailing prose is cut at the blank line (or line) after which the
statement still parses. Newlines are kept, so a leading ``--`` comment never swallows the query.
Comment-only or empty answers give ``sql=None``. A line starting with ``SELECT``/``WITH`` that
never parses is returned as found (method ``unparsed``), so it fails as an execution error
rather than vanishing as "no SQL".
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from functools import lru_cache

# Markdown structure and answer markers are prose, not SQL: regexes are the right tool here.
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_SQL_LABELS = frozenset(
    {"sql", "sqlite", "sqlite3", "mysql", "duckdb", "postgres", "postgresql", "psql", "tsql"}
)
_MARKER = re.compile(
    r"(?:the\s+(?:final\s+)?answer\s+is|final\s+answer|sql\s+query|sql|answer)\s*[:：]",
    re.IGNORECASE,
)
_QUERY_START = re.compile(r"\b(?:select|with)\b", re.IGNORECASE)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_LINE_QUERY_START = re.compile(r"^[ \t]*(SELECT|WITH)\b", re.MULTILINE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_DIALECTS = (None, "sqlite", "mysql", "duckdb")


@dataclass(frozen=True)
class Extraction:
    """One statement (or None, which executes as Status.NO_SQL) and how it was found."""

    sql: str | None
    method: str


def extract_sql(output: str, *, prompt_tail: str = "") -> Extraction:
    """Find the one SQL statement a model meant as its answer (see the module docstring)."""
    if output is None or not output.strip():
        return Extraction(None, "empty")
    steps: list[str] = []
    text = output
    lowered = text.lower()
    if "</think>" in lowered:
        text = text[lowered.rfind("</think>") + len("</think>") :]
        steps.append("after_think")
    elif "<think>" in lowered:
        return Extraction(None, "unclosed_think")
    fragment = _continuation_fragment(prompt_tail)
    if fragment and _continues(text, fragment):
        joined = fragment + ("" if text[:1].isspace() else " ") + text
        sql = _statement_in(joined, trust_start=True)
        if sql is not None:
            return Extraction(sql, "+".join([*steps, "prompt_continuation"]))
    found = _from_fences(text) or _from_marker(text) or _from_text(text)
    if found is None:
        return Extraction(None, "+".join([*steps, "no_sql_found"]))
    sql, method = found
    return Extraction(sql, "+".join([*steps, method]))


# -- strategies ----------------------------------------------------------------------------


def _continuation_fragment(prompt_tail: str) -> str:
    """The SQL the prompt already started (from its last SELECT/WITH on its last line)."""
    last_line = prompt_tail.rstrip().rsplit("\n", 1)[-1]
    starts = list(_QUERY_START.finditer(last_line))
    return last_line[starts[-1].start() :] if starts else ""


def _continues(text: str, fragment: str) -> bool:
    stripped = text.lstrip()
    first_word = fragment.split()[0].lower()
    return bool(stripped) and not (
        stripped.lower().startswith(first_word)
        or stripped.startswith("```")
        or "<think>" in stripped.lower()
    )


def _from_fences(text: str) -> tuple[str | None, str] | None:
    blocks = [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]
    if not blocks:
        return None
    labelled = [body for label, body in blocks if label in _SQL_LABELS]
    if labelled:
        for body in reversed(labelled):
            sql = _statement_in(body, trust_start=True) or _any_statement(body)
            if sql is not None:
                return sql, "fenced_sql"
        return None  # only comment-only / empty SQL blocks: the model gave no query
    for label, body in reversed(blocks):
        if label == "":
            sql = _statement_in(body, trust_start=True)
            if sql is not None:
                return sql, "fenced"
    return None


def _from_marker(text: str) -> tuple[str, str] | None:
    markers = list(_MARKER.finditer(text))
    for marker in reversed(markers):
        sql = _statement_in(text[marker.end() :], trust_start=True)
        if sql is not None:
            return sql, "answer_marker"
    return None


def _from_text(text: str) -> tuple[str, str] | None:
    stripped = text.strip()
    if "\n" not in stripped and _QUERY_START.match(stripped):
        # One line that starts with the query (a bare answer, or gold used as prediction):
        # nothing to trim, and trying later SELECTs could only carve out a subquery.
        return _clean(_end_of_statement(stripped)[0]), "plain"
    sql = _statement_in(text, trust_start=False)
    if sql is not None:
        plain = _QUERY_START.match(_skip_comments(text)) is not None
        return sql, "plain" if plain else "after_prose"
    for span in reversed(_INLINE_CODE.findall(text)):
        sql = _statement_in(span, trust_start=True) if _QUERY_START.match(span.strip()) else None
        if sql is not None:
            return sql, "inline_code"
    # A line that starts with SELECT/WITH but never parses is still the model's query: keep
    # it, so it fails visibly as an execution error (prose merely using the words does not).
    for match in _LINE_QUERY_START.finditer(text):
        return _clean(_end_of_statement(text[match.start(1) :])[0]), "unparsed"
    return None


# -- finding one statement -----------------------------------------------------------------


def _statement_in(text: str, *, trust_start: bool) -> str | None:
    """The first parseable query in ``text``, trimmed of trailing prose; None if none."""
    for start in _query_starts(text):
        candidate, _ = _end_of_statement(text[start:])
        sql = _trim_prose(candidate)
        if sql is not None:
            return sql
    return None


def _any_statement(body: str) -> str | None:
    """First statement of a SQL-labelled block even if it is no query (it will be refused)."""
    body = _skip_comments(body)
    if not body.strip():
        return None
    return _clean(_end_of_statement(body)[0]) or None


def _query_starts(text: str):
    for match in _QUERY_START.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        if "--" in text[line_start : match.start()]:
            continue  # inside a line comment
        yield match.start()


def _end_of_statement(text: str) -> tuple[str, bool]:
    """Text up to the first ``;`` that completes a statement (and whether one was found)."""
    for match in re.finditer(";", text):
        if sqlite3.complete_statement(text[: match.end()]):
            return text[: match.end()], True
    return text, False


def _trim_prose(candidate: str) -> str | None:
    """The longest leading part of ``candidate`` that parses, cutting at blank lines, then at
    line ends; paragraphs and lines that continue the SQL (FROM, UNION, ...) are never cut."""
    paragraphs = _BLANK_LINE.split(candidate)
    kept = paragraphs[0]
    best = _clean(kept) if _parses(kept) else None
    for paragraph in paragraphs[1:]:
        if best is not None and not _continues_sql(paragraph):
            break
        kept = kept + "\n\n" + paragraph
        if _parses(kept):
            best = _clean(kept)
    if best is not None:
        return best
    lines = candidate.split("\n")
    for end in range(len(lines) - 1, 0, -1):
        if _continues_sql(lines[end]):
            break  # never cut a broken query down to a prefix that happens to parse
        head = "\n".join(lines[:end])
        if _parses(head):
            return _clean(head)
    return None


_CONTINUATION_TOKENS: frozenset | None = None


def _continues_sql(paragraph: str) -> bool:
    """Does this paragraph start like the rest of a query (a clause keyword, a paren, ...)?"""
    global _CONTINUATION_TOKENS
    from sqlglot.tokens import Tokenizer, TokenType

    if _CONTINUATION_TOKENS is None:
        names = (
            "FROM WHERE GROUP_BY ORDER_BY HAVING LIMIT OFFSET UNION EXCEPT INTERSECT JOIN INNER "
            "LEFT RIGHT FULL CROSS OUTER NATURAL ON AND OR SELECT L_PAREN R_PAREN COMMA CASE "
            "WHEN THEN ELSE END WINDOW QUALIFY USING"
        ).split()
        _CONTINUATION_TOKENS = frozenset(getattr(TokenType, n) for n in names)
    first_line = paragraph.strip().split("\n", 1)[0]
    try:
        tokens = Tokenizer().tokenize(first_line)
    except Exception:
        return False
    return bool(tokens) and tokens[0].token_type in _CONTINUATION_TOKENS


@lru_cache(maxsize=8192)
def _parses(sql: str) -> bool:
    """Is ``sql`` exactly one query (SELECT / set operation) in some dialect we execute?"""
    import sqlglot
    from sqlglot import exp

    text = _clean(sql)
    if not text:
        return False
    for dialect in _DIALECTS:
        try:
            trees = [t for t in sqlglot.parse(text, read=dialect) if t is not None]
        except Exception:
            continue
        if len(trees) == 1 and isinstance(trees[0], exp.Query):
            return True
    return False


def _skip_comments(text: str) -> str:
    """``text`` without leading blanks and ``--`` / ``/* */`` comments."""
    while True:
        stripped = text.lstrip()
        if stripped.startswith("--"):
            newline = stripped.find("\n")
            text = "" if newline < 0 else stripped[newline + 1 :]
        elif stripped.startswith("/*"):
            end = stripped.find("*/")
            text = "" if end < 0 else stripped[end + 2 :]
        else:
            return stripped


def _clean(sql: str) -> str:
    """Strip blanks and trailing semicolons (empty statements) from a statement."""
    text = sql.strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return text
