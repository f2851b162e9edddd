"""Model output -> one SQL statement (or None), how it was found, and why it cannot be scored.

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
   statement. A fence cut off by the token limit still counts.
4. ``answer_marker``: the text after the last "The answer is:", "Final answer:", "SQL query:",
   "SQL:" or "Answer:".
5. ``plain`` (the text starts with the query) or ``after_prose`` (leading prose skipped). A
   single line that starts with SELECT/WITH is taken whole, without parsing (fast path for
   bare answers). Else ``inline_code``: the last `` `SELECT ...` `` span in prose.

Inside the chosen text the statement starts at the first statement keyword (outside ``--``
comments) from which a parseable statement follows - the outermost query comes first in the
text, so a subquery is never carved out of a longer query or out of an ``INSERT ... SELECT``.
A query starts with ``SELECT`` or ``WITH <name> AS``; any other statement (``UPDATE``,
``DROP``, ``INSERT``, ``PRAGMA``, ...) starts a line or follows a ``;``, and counts only if it
ends with ``;`` or ends the text around it (so a prose line such as "Update the table" before
the query is not mistaken for one). Its end is the first ``;`` outside strings and comments
(confirmed with ``sqlite3.complete_statement``). Trailing prose is cut at the blank line (or
line) after which the statement still parses. Newlines are kept, so a leading ``--`` comment
never swallows the query. Comment-only or empty answers give ``sql=None``. A line starting
with ``SELECT``/``WITH`` that never parses is returned as found (method ``unparsed``), so it
fails as an execution error rather than vanishing as "no SQL".

Why an answer cannot be scored (``Extraction.problem``), decided here so that every answer
shape (fenced, bare, after prose) gets the same verdict:

- ``multiple_statements``: another statement follows the first one (comments and empty
  statements aside). ``sql`` then holds the statements up to the second one.
- ``not_read_only``: the statement is not a query (``UPDATE``, ``DROP``, ``INSERT ... SELECT``).

``truncated`` is True when the output looks cut off by the generation limit: an unclosed
``<think>``, or a fenced block still open at the end of the output.

Work is bounded, so no output (10 MB of text, thousands of fences, deep nesting) can stall
scoring: statements are looked for within ``MAX_STATEMENT_CHARS`` of their start, the last
``MAX_BLOCKS`` fences / answer markers / inline spans are tried, at most ``MAX_STARTS``
statement starts per text, and sqlglot parses at most ``PARSE_BUDGET_CHARS`` characters per
output (past that, nothing more is confirmed as parseable; all of this is deterministic).
"""

from __future__ import annotations

import collections
import heapq
import re
import sqlite3
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache

#: ``Extraction.problem`` values (also the ``reason`` the scorer reports).
MULTIPLE_STATEMENTS = "multiple_statements"
NOT_READ_ONLY = "not_read_only"

#: Bounds on the work spent on one output (see the module docstring).
MAX_STATEMENT_CHARS = 100_000  # the longest gold query of either benchmark is under 10,000
MAX_BLOCKS = 64
MAX_STARTS = 256
PARSE_BUDGET_CHARS = 1_000_000
_MAX_TRIM_LINES = 64  # line cuts tried when trailing prose shares the statement's paragraph

# Markdown structure and answer markers are prose, not SQL: regexes are the right tool here.
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)(?:(?P<close>```)|\Z)", re.DOTALL)
_SQL_LABELS = frozenset(
    {"sql", "sqlite", "sqlite3", "mysql", "duckdb", "postgres", "postgresql", "psql", "tsql"}
)
_MARKER = re.compile(
    r"(?:the\s+(?:final\s+)?answer\s+is|final\s+answer|sql\s+query|sql|answer)\s*[:：]",
    re.IGNORECASE,
)
# A query starts with SELECT, or with WITH followed by a common table expression's head (the
# English "with" in reasoning text is far more frequent than SQL's and never looks like that).
_NAME = r"(?:\w+|\"[^\"\n]*\"|`[^`\n]*`|\[[^\]\n]*\])"
_QUERY_START = re.compile(
    rf"\bselect\b|\bwith\s+(?:recursive\s+)?{_NAME}\s*(?:\([^()]*\)\s*)?as\b", re.IGNORECASE
)
# Statements that are not queries: at a line start or after a ';' (never mid-sentence).
_OTHER_START = re.compile(
    r"(?:^|(?<=;))[ \t]*\b(?P<kw>insert|update|delete|replace|merge|create|drop|alter|truncate"
    r"|attach|detach|pragma|copy|install|begin|commit|rollback)\b",
    re.IGNORECASE | re.MULTILINE,
)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_LINE_QUERY_START = re.compile(r"^[ \t]*(SELECT|WITH)\b", re.MULTILINE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
# Where a statement can end: a ';' outside strings, quoted names and comments, skipped the way
# SQLite's tokenizer skips them (an unclosed one runs to the end of the text).
_SKIP_OR_SEMICOLON = re.compile(
    r"'[^']*(?:'|\Z)|\"[^\"]*(?:\"|\Z)|`[^`]*(?:`|\Z)|\[[^\]]*(?:\]|\Z)"
    r"|--[^\n]*|/\*.*?(?:\*/|\Z)|;",
    re.DOTALL,
)
_LEADING_COMMENTS = re.compile(r"(?:\s+|--[^\n]*|/\*.*?(?:\*/|\Z))*", re.DOTALL)
_LEADING_EMPTY = re.compile(r"(?:[\s;]+|--[^\n]*|/\*.*?(?:\*/|\Z))*", re.DOTALL)
_NOT_FOR_SQLITE = re.compile("[\x00\ud800-\udfff]")  # sqlite3 refuses NUL and lone surrogates
_DIALECTS = (None, "sqlite", "mysql", "duckdb")

QUERY = "query"
OTHER = "other"  # a statement that is not a read-only query


@dataclass(frozen=True)
class Extraction:
    """One statement (or None, which executes as Status.NO_SQL), how it was found, whether the
    answer is refused (``problem``) and whether the output was cut off (``truncated``)."""

    sql: str | None
    method: str
    problem: str | None = None  # MULTIPLE_STATEMENTS, NOT_READ_ONLY or None
    truncated: bool = False


@dataclass(frozen=True)
class _Found:
    """A statement found in a piece of text, and what follows it there."""

    sql: str
    kind: str | None  # QUERY, OTHER, or None when not parsed (kept for execution to judge)
    rest: str  # the text after its terminating ';' ("" when none)
    start: int = 0  # where it starts in the text it was found in


def extract_sql(output: str, *, prompt_tail: str = "") -> Extraction:
    """Find the one SQL statement a model meant as its answer (see the module docstring)."""
    if output is None or not output.strip():
        return Extraction(None, "empty")
    budget = _budget.set([PARSE_BUDGET_CHARS])
    try:
        return _extract(output, prompt_tail)
    finally:
        _budget.reset(budget)


def _extract(output: str, prompt_tail: str) -> Extraction:
    steps: list[str] = []
    text = output
    lowered = text.lower()
    close = lowered.rfind("</think>")
    if close >= 0:
        text = text[close + len("</think>") :]
        steps.append("after_think")
    elif "<think>" in lowered:
        return Extraction(None, "unclosed_think", truncated=True)
    truncated = _ends_inside_fence(text)
    fragment = _continuation_fragment(prompt_tail)
    if fragment and _continues(text, fragment):
        joined = fragment + ("" if text[:1].isspace() else " ") + text
        found = _statement_in(joined)
        if found is not None:
            return _judged(found, [*steps, "prompt_continuation"], truncated)
    result = _from_fences(text) or _from_marker(text) or _from_text(text)
    if result is None:
        return Extraction(None, "+".join([*steps, "no_sql_found"]), truncated=truncated)
    found, method = result
    return _judged(found, [*steps, method], truncated)


def _judged(found: _Found, steps: list[str], truncated: bool) -> Extraction:
    """The Extraction of ``found``, refused when more statements follow or it is no query."""
    method = "+".join(steps)
    following = _next_statement(found.rest)
    if following is not None:
        return Extraction(
            f"{found.sql};\n{following}", method, MULTIPLE_STATEMENTS, truncated=truncated
        )
    if found.kind == OTHER:
        return Extraction(found.sql, method, NOT_READ_ONLY, truncated=truncated)
    return Extraction(found.sql, method, truncated=truncated)


def _ends_inside_fence(text: str) -> bool:
    """Is the last fenced block still open at the end (the output was cut off inside it)?"""
    last = collections.deque(_FENCE.finditer(text), maxlen=1)
    return bool(last) and last[0].group("close") is None


# -- strategies ----------------------------------------------------------------------------


def _continuation_fragment(prompt_tail: str) -> str:
    """The SQL the prompt already started (from its last SELECT/WITH on its last line)."""
    last_line = prompt_tail.rstrip().rsplit("\n", 1)[-1]
    starts = list(re.finditer(r"\b(?:select|with)\b", last_line, re.IGNORECASE))
    return last_line[starts[-1].start() :] if starts else ""


def _continues(text: str, fragment: str) -> bool:
    stripped = text.lstrip()
    first_word = fragment.split()[0].lower()
    return bool(stripped) and not (
        stripped.lower().startswith(first_word)
        or stripped.startswith("```")
        or "<think>" in stripped.lower()
    )


def _from_fences(text: str) -> tuple[_Found, str] | None:
    blocks = [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)][-MAX_BLOCKS:]
    if not blocks:
        return None
    labelled = [body for label, body in blocks if label in _SQL_LABELS]
    if labelled:
        for body in reversed(labelled):
            found = _statement_in(body) or _first_statement_unparsed(body)
            if found is not None:
                return found, "fenced_sql"
        return None  # only comment-only / empty SQL blocks: the model gave no query
    for label, body in reversed(blocks):
        if label == "":
            found = _statement_in(body)
            if found is not None:
                return found, "fenced"
    return None


def _from_marker(text: str) -> tuple[_Found, str] | None:
    markers = list(_MARKER.finditer(text))[-MAX_BLOCKS:]
    for marker in reversed(markers):
        found = _statement_in(text[marker.end() :])
        if found is not None:
            return found, "answer_marker"
    return None


def _from_text(text: str) -> tuple[_Found, str] | None:
    stripped = text.strip()
    if "\n" not in stripped and _QUERY_START.match(stripped):
        # One line that starts with the query (a bare answer, or gold used as prediction):
        # nothing to trim, and trying later SELECTs could only carve out a subquery.
        head, _ = _end_of_statement(stripped)
        sql = _clean(head)
        # WITH may lead a data change (WITH ... DELETE): only a parse tells.
        kind = OTHER if stripped[:4].upper() == "WITH" and _kind(sql) == OTHER else None
        return _Found(sql, kind, stripped[len(head) :]), "plain"
    found = _statement_in(text)
    if found is not None:
        plain = found.start == len(text) - len(_skip_comments(text))
        return found, "plain" if plain else "after_prose"
    for span in reversed(_INLINE_CODE.findall(text)[-MAX_BLOCKS:]):
        found = _statement_in(span) if _QUERY_START.match(span.strip()) else None
        if found is not None:
            return found, "inline_code"
    # A line that starts with SELECT/WITH but never parses is still the model's query: keep
    # it, so it fails visibly as an execution error (prose merely using the words does not).
    match = _LINE_QUERY_START.search(text)
    if match is not None:
        return _first_statement_unparsed(text[match.start(1) :]), "unparsed"
    return None


# -- finding one statement -----------------------------------------------------------------


def _statement_in(text: str) -> _Found | None:
    """The first statement in ``text`` that parses (see the module docstring); None if none."""
    for start, is_query in _statement_starts(text):
        found = _query_at(text, start) if is_query else _other_at(text, start)
        if found is not None:
            return found
    return None


def _statement_starts(text: str) -> Iterator[tuple[int, bool]]:
    """``(position, is_query)`` of candidate statement starts, in text order, outside ``--``
    comments; at most MAX_STARTS."""
    queries = ((m.start(), True) for m in _QUERY_START.finditer(text))
    others = ((m.start("kw"), False) for m in _OTHER_START.finditer(text))
    tried = 0
    for start, is_query in heapq.merge(queries, others):
        line_start = text.rfind("\n", 0, start) + 1
        if text.find("--", line_start, start) >= 0:
            continue  # inside a line comment
        yield start, is_query
        tried += 1
        if tried >= MAX_STARTS:
            return


def _query_at(text: str, start: int) -> _Found | None:
    """The query starting at ``start``, trimmed of trailing prose; None if none parses."""
    candidate, terminated = _end_of_statement(text[start:])
    sql = _trim_prose(candidate)
    if sql is None:
        return None
    if not terminated and len(candidate) < len(text) - start and sql == _clean(candidate):
        return None  # it runs on past MAX_STATEMENT_CHARS: no statement is that long
    # Statements can follow only a ';' that ends this one (not prose cut off after it).
    whole = terminated and _clean(candidate) == sql
    return _Found(sql, QUERY, text[start + len(candidate) :] if whole else "", start)


def _other_at(text: str, start: int) -> _Found | None:
    """A non-query statement at ``start`` that ends with ';' or ends ``text``; else None."""
    candidate, terminated = _end_of_statement(text[start:])
    rest = text[start + len(candidate) :]
    if not terminated and ("\n\n" in candidate or rest):
        # Unterminated, it must be all the rest of the text: the cheap blank-line test drops
        # most prose (a sentence starting "Update ..."), the parse below the rest of it.
        return None
    sql = _clean(candidate)
    if _kind(sql) != OTHER:
        return None
    return _Found(sql, OTHER, rest, start)


def _first_statement_unparsed(body: str) -> _Found | None:
    """The first statement of ``body`` as written, even if it does not parse (execution will
    report why); None for blank or comment-only text."""
    body = _skip_comments(body)
    if not body.strip():
        return None
    head, terminated = _end_of_statement(body)
    if not terminated:
        head = body  # as written, however long: execution reports what is wrong with it
    sql = _clean(head)
    return _Found(sql, None, body[len(head) :]) if sql else None


def _next_statement(rest: str) -> str | None:
    """The statement that follows a ``;`` in ``rest`` (comments and empty statements aside),
    or None when only blanks, comments or prose follow."""
    text = _skip_comments(rest, empty_statements=True)
    if not text:
        return None
    if _QUERY_START.match(text):
        found = _query_at(text, 0)
    elif _OTHER_START.match(text):
        found = _other_at(text, 0)
    else:
        return None
    return None if found is None else found.sql


def _end_of_statement(text: str) -> tuple[str, bool]:
    """``(head, terminated)``: the prefix of ``text`` up to and including the first ``;`` that
    completes a statement (True), or the whole text capped at MAX_STATEMENT_CHARS (False).

    The regex finds each ';' outside strings and comments in one linear pass; SQLite's own
    ``complete_statement`` confirms it (and so stays the judge, e.g. of the ';' inside a
    trigger body). Calling it on every prefix ending in ';' instead was quadratic.
    """
    window = text[:MAX_STATEMENT_CHARS]
    confirmations = 0
    for match in _SKIP_OR_SEMICOLON.finditer(window):
        if match.group() != ";":
            continue
        end = match.end()
        confirmations += 1
        if confirmations > MAX_BLOCKS or _complete(window[:end]):
            return window[:end], True
    return window, False


def _complete(text: str) -> bool:
    try:
        return sqlite3.complete_statement(text)
    except (ValueError, UnicodeEncodeError):
        # A NUL or lone surrogate never ends a statement; a same-length stand-in keeps the rest.
        return sqlite3.complete_statement(_NOT_FOR_SQLITE.sub(" ", text))


def _trim_prose(candidate: str) -> str | None:
    """The longest leading part of ``candidate`` that parses as a query, cutting at blank lines,
    then at line ends; paragraphs and lines that continue the SQL (FROM, UNION, ...) are never
    cut. Paragraphs after one that neither parses nor continues the SQL are not looked at."""
    paragraphs = _BLANK_LINE.split(candidate)
    kept = paragraphs[0]
    best = _clean(kept) if _kind(kept) == QUERY else None
    for paragraph in paragraphs[1:]:
        if not _continues_sql(paragraph):
            break
        kept = kept + "\n\n" + paragraph
        if _kind(kept) == QUERY:
            best = _clean(kept)
    if best is not None:
        return best
    lines = kept.split("\n")
    head_chars = len(kept)
    for end in range(len(lines) - 1, max(0, len(lines) - 1 - _MAX_TRIM_LINES), -1):
        if _continues_sql(lines[end]):
            break  # never cut a broken query down to a prefix that happens to parse
        head_chars -= len(lines[end]) + 1
        if head_chars > MAX_STATEMENT_CHARS:
            continue  # too long to be a statement (and to join up just to find that out)
        head = "\n".join(lines[:end])
        if _kind(head) == QUERY:
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
    first_line = paragraph.strip().split("\n", 1)[0][:200]  # the first words decide
    try:
        tokens = Tokenizer().tokenize(first_line)
    except Exception:
        return False
    return bool(tokens) and tokens[0].token_type in _CONTINUATION_TOKENS


# Characters sqlglot may still parse for the output being extracted (see extract_sql); None
# outside extract_sql (no limit).
_budget: ContextVar[list[int] | None] = ContextVar("sqlbench_lmeval_parse_budget", default=None)


def _kind(sql: str) -> str | None:
    """QUERY, OTHER (one statement that is not a query) or None (does not parse as one
    statement in a dialect we execute, is too long, or the parse budget is spent)."""
    text = _clean(sql)
    if not text or len(text) > MAX_STATEMENT_CHARS:
        return None
    budget = _budget.get()
    if budget is not None:
        if budget[0] < len(text):
            return None
        budget[0] -= len(text)
    return _kind_of(text)


@lru_cache(maxsize=8192)
def _kind_of(text: str) -> str | None:
    import sqlglot
    from sqlglot import exp

    kind = None
    for dialect in _DIALECTS:
        try:
            trees = [t for t in sqlglot.parse(text, read=dialect) if t is not None]
        except Exception:  # ParseError, TokenError, RecursionError on deep nesting, ...
            continue
        if len(trees) != 1:
            continue
        if isinstance(trees[0], exp.Query):
            return QUERY
        if isinstance(trees[0], _other_statements()):
            kind = OTHER
    return kind


@lru_cache(maxsize=1)
def _other_statements() -> tuple[type, ...]:
    """sqlglot node types of statements that are not read-only queries. sqlglot's catch-all
    ``Command`` is left out: it also swallows prose such as "Create a query that ..."."""
    from sqlglot import exp

    names = (
        "Insert Update Delete Merge Create Drop Alter TruncateTable Pragma Attach Detach Copy "
        "Install Transaction Commit Rollback"
    ).split()
    return tuple(getattr(exp, name) for name in names if hasattr(exp, name))


def _skip_comments(text: str, *, empty_statements: bool = False) -> str:
    """``text`` without leading blanks and ``--`` / ``/* */`` comments (and ``;``, the empty
    statement, when ``empty_statements``); one regex match, so linear in what it skips."""
    pattern = _LEADING_EMPTY if empty_statements else _LEADING_COMMENTS
    return text[pattern.match(text).end() :]


def _clean(sql: str) -> str:
    """Strip blanks and trailing semicolons (empty statements) from a statement."""
    text = sql.strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return text
