"""Model output -> one SQL statement (or None), how it was found, and why it cannot be scored:
:func:`extract_sql` drops reasoning, takes the last fenced block, answer marker or query in
prose, cuts the statement out in the answer's dialect and refuses what is not one read-only
query (``problem``), the same way for every answer shape; ``truncated`` and
``repetition_loop`` say whether the output was cut off, and by a loop (what is refused:
docs/statement-rule.md; the steps and bounds: docs/statement-rule.md#how-the-statement-is-found).

>>> found = extract_sql("Here it is:\\n```sql\\nSELECT name FROM t;\\n```")
>>> found.sql, found.method, found.problem, found.truncated
('SELECT name FROM t', 'fenced_sql', None, False)
>>> extract_sql("SELECT 1; DROP TABLE t").problem
'multiple_statements'
>>> cut_off = extract_sql("<think>Maybe SELECT 1")
>>> cut_off.sql, cut_off.method, cut_off.truncated
(None, 'unclosed_think', True)
"""

from __future__ import annotations

import collections
import dataclasses
import heapq
import itertools
import re
import sqlite3
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.tokens import Tokenizer, TokenType

from sqlbench_lmeval.sql.lexis import Lexis, executable_comment, lexis
from sqlbench_lmeval.sql.table_reads import TableReads, table_reads_of
from sqlbench_lmeval.vocabulary import Refusal

#: ``Extraction.problem`` values (also the ``reason`` the scorer reports).
EXECUTABLE_COMMENT = Refusal.EXECUTABLE_COMMENT
MULTIPLE_STATEMENTS = Refusal.MULTIPLE_STATEMENTS
NOT_READ_ONLY = Refusal.NOT_READ_ONLY

#: Bounds on the work spent on one output (docs/statement-rule.md#how-the-statement-is-found).
MAX_STATEMENT_CHARS = 100_000  # the longest gold query of either benchmark is under 10,000
MAX_BLOCKS = 64
MAX_STARTS = 256
PARSE_BUDGET_CHARS = 1_000_000
_MAX_TRIM_LINES = 64  # line cuts tried when trailing prose shares the statement's paragraph

#: First words of statements that are not queries, in the engines we run (SQLite, DuckDB,
#: MySQL/MariaDB) and the dialects prompts ask for. Words that also begin a clause inside a
#: query (``END``, ``DESC``, ``CHECK``, ``VALUES``, ``FROM``, ``TABLE``) are left out.
OTHER_KEYWORDS = (
    # data and schema changes
    "insert update delete replace merge upsert create drop alter truncate rename comment "
    # files, extensions, databases and maintenance
    "attach detach pragma copy install uninstall load unload import export vacuum reindex "
    "analyze analyse checkpoint optimize repair checksum flush purge reset backup shutdown "
    "binlog use "
    # transactions, locks, sessions and accounts
    "begin start commit rollback abort savepoint release xa lock unlock handler kill set "
    "grant revoke "
    # statements that show or run other statements
    "show describe explain summarize do call exec execute prepare deallocate declare signal "
    "resignal"
).split()

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
_QUERY_WORDS = rf"\bselect\b|\bwith\s+(?:recursive\s+)?{_NAME}\s*(?:\([^()]*\)\s*)?as\b"
_QUERY_START = re.compile(_QUERY_WORDS, re.IGNORECASE)
# Statements start a line or follow a ';' (never mid-sentence): a parenthesised query, or any
# statement that is not a query.
_STATEMENT_POSITION = r"(?:^|(?<=;))[ \t]*"
_PAREN_QUERY_START = re.compile(
    # At most 16 parentheses deep: a bounded pattern stays linear on "(\n" * 5000.
    _STATEMENT_POSITION + rf"(?P<kw>\((?:\s*\(){{0,15}}\s*(?:{_QUERY_WORDS}))",
    re.IGNORECASE | re.MULTILINE,
)
_OTHER_START = re.compile(
    _STATEMENT_POSITION + rf"\b(?P<kw>{'|'.join(OTHER_KEYWORDS)})\b",
    re.IGNORECASE | re.MULTILINE,
)
_STATEMENT_WORD = re.compile(
    rf"\(*\s*(?P<kw>select|with|{'|'.join(OTHER_KEYWORDS)})\b", re.IGNORECASE
)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_LINE_QUERY_START = re.compile(r"^[ \t]*((?:\([ \t]*)*(?:SELECT|WITH))\b", re.MULTILINE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_NOT_FOR_SQLITE = re.compile("[\x00\ud800-\udfff]")  # sqlite3 refuses NUL and lone surrogates
_SENTENCE_ENDS = (":", ".", "?", "!", "：")
_DIALECTS = (None, "sqlite", "mysql", "duckdb")

QUERY = "query"
OTHER = "other"  # a statement that is not a read-only query
_PAREN = "paren"  # a parenthesised query


@dataclass(frozen=True)
class Extraction:
    """One statement (or None, which executes as Status.NO_SQL), how it was found, whether the
    answer is refused (``problem``) and whether the output was cut off (``truncated``).

    ``table_reads``: where finding ``sql`` parsed it in the answer's dialect, what that parse
    says of its table reads, for ``table_reads.surely_reads_no_table`` (so the statement is not
    parsed again); None where it was taken without a parse. Not part of the value: two
    extractions that found the same statement the same way are equal."""

    sql: str | None
    method: str
    problem: str | None = None  # EXECUTABLE_COMMENT, MULTIPLE_STATEMENTS, NOT_READ_ONLY or None
    truncated: bool = False
    repetition_loop: bool = False  # truncated, and the output ends in a repetition loop
    table_reads: TableReads | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class _Found:
    """A statement found in a piece of text, and what follows it there."""

    sql: str
    kind: str | None  # QUERY, OTHER, or None when not parsed (kept for execution to judge)
    rest: str  # the text after its terminating ';' ("" when none)
    start: int = 0  # where it starts in the text it was found in
    region: str = ""  # the text it was found in (a code block, the answer, ...)


def extract_sql(output: str, *, prompt_tail: str = "", dialect: str | None = None) -> Extraction:
    """Find the one SQL statement a model meant as its answer (docs/statement-rule.md).

    ``dialect`` is the sqlglot dialect the answer was asked in (default ``sqlite``): its
    strings and comments decide where statements end (``lexis``).
    """
    if output is None or not output.strip():
        return Extraction(None, "empty")
    budget = _budget.set([PARSE_BUDGET_CHARS])
    rules = _lexis.set(lexis(dialect))
    parsed = _parsed.set({})
    try:
        extraction = _extract(output, prompt_tail)
    finally:
        _parsed.reset(parsed)
        _lexis.reset(rules)
        _budget.reset(budget)
    if extraction.truncated and ends_in_loop(output):
        return dataclasses.replace(extraction, repetition_loop=True)
    return extraction


#: An output ends in a repetition loop when its last characters - at least LOOP_MIN_CHARS,
#: and at least three times the piece that repeats - are one piece of text over and over.
LOOP_MIN_CHARS = 200
_LOOP_WINDOW = 4_000  # characters of the output's end looked at (bounded work)


def ends_in_loop(output: str) -> bool:
    """Does ``output`` end in one piece of text repeated (a model stuck in a loop)? Any piece
    of up to a third of the span: ``"Let me check again. "`` many times, a run of blank lines
    or of ``0, ``. The cut may fall anywhere inside the last copy."""
    tail = output[-_LOOP_WINDOW:]
    for period in range(1, len(tail) // 3 + 1):
        span = max(3 * period, LOOP_MIN_CHARS)
        if span + period > len(tail):
            return False
        # The last ``span`` characters equal those ``period`` before them: the last
        # ``span + period`` characters repeat with that period (four copies or more).
        if tail[-span:] == tail[-span - period : -period]:
            return True
    return False


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
    """The Extraction of ``found``, refused when its text holds an executable comment, more
    statements follow or it is no query."""
    method = "+".join(steps)
    if executable_comment(found.region, _rules()) is not None:
        return Extraction(found.sql, method, EXECUTABLE_COMMENT, truncated=truncated)
    following = _next_statement(found.rest)
    if following is not None:
        return Extraction(
            f"{found.sql};\n{following}", method, MULTIPLE_STATEMENTS, truncated=truncated
        )
    if found.kind == OTHER:
        return Extraction(found.sql, method, NOT_READ_ONLY, truncated=truncated)
    reads = _parsed.get().get(found.sql)  # type: ignore[union-attr]
    return Extraction(found.sql, method, truncated=truncated, table_reads=reads)


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
    if ":" not in text and "：" not in text:
        return None  # every marker ends in a colon (a search of 10 MB takes a second)
    markers = list(_MARKER.finditer(text))[-MAX_BLOCKS:]
    for marker in reversed(markers):
        found = _statement_in(text[marker.end() :])
        if found is not None:
            return found, "answer_marker"
    return None


def _from_text(text: str) -> tuple[_Found, str] | None:
    stripped = text.strip()
    if "\n" not in stripped and (
        _QUERY_START.match(stripped) or _PAREN_QUERY_START.match(stripped)
    ):
        # One line that starts with the query (a bare answer, or gold used as prediction):
        # nothing to trim, and trying later SELECTs could only carve out a subquery.
        head, _ = _end_of_statement(stripped)
        sql = _clean(head)
        # WITH may lead a data change (WITH ... DELETE): only a parse tells.
        kind = OTHER if stripped[:4].upper() == "WITH" and _kind(sql) == OTHER else None
        return _Found(sql, kind, stripped[len(head) :], region=stripped), "plain"
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
    """The first statement in ``text`` (docs/statement-rule.md#how-the-statement-is-found); None
    if none."""
    after_query_line = False  # a line before this start began a query (that did not parse)
    for start, kind in _statement_starts(text):
        if kind == QUERY:
            end = _end_of_statement(text, start)
            found = _query_at(text, start, end) or _unparsed_before_another(text, start, end)
        elif kind == _PAREN:
            found = None if after_query_line else _query_at(text, start)
        else:
            found = _other_at(text, start, written_is_enough=not after_query_line)
        if found is not None:
            return dataclasses.replace(found, region=text)
        if kind != OTHER and _at_line_start(text, start):
            after_query_line = True
    return None


def _statement_starts(text: str) -> Iterator[tuple[int, str]]:
    """``(position, kind)`` of candidate statement starts (QUERY, _PAREN or OTHER), in text
    order, outside line comments; at most MAX_STARTS."""
    line_comment = _rules().line_comment

    def outside_comments(starts: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
        for start, kind in starts:
            line_start = text.rfind("\n", 0, start) + 1
            if not line_comment.search(text, line_start, start):
                yield start, kind

    queries = list(
        itertools.islice(
            outside_comments((m.start(), QUERY) for m in _QUERY_START.finditer(text)), MAX_STARTS
        )
    )
    # No start after the MAX_STARTS-th query start can be among the first MAX_STARTS, so the
    # other patterns scan only up to it (plus a keyword's length), not all of a 10 MB text.
    limit = queries[-1][0] if len(queries) == MAX_STARTS else len(text)
    scan_end = min(len(text), limit + 64)
    parens = ((m.start("kw"), _PAREN) for m in _PAREN_QUERY_START.finditer(text, 0, scan_end))
    others = ((m.start("kw"), OTHER) for m in _OTHER_START.finditer(text, 0, scan_end))
    merged = heapq.merge(queries, outside_comments(parens), outside_comments(others))
    return itertools.islice(((p, k) for p, k in merged if p <= limit), MAX_STARTS)


def _at_line_start(text: str, start: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    return not text[line_start:start].strip()


def _query_at(text: str, start: int, end: tuple[str, bool] | None = None) -> _Found | None:
    """The query starting at ``start``, trimmed of trailing prose; None if none parses.
    ``end``: :func:`_end_of_statement` at ``start``, when already known."""
    candidate, terminated = end or _end_of_statement(text, start)
    sql = _trim_prose(candidate)
    if sql is None:
        return None
    if not terminated and len(candidate) < len(text) - start and sql == _clean(candidate):
        return None  # it runs on past MAX_STATEMENT_CHARS: no statement is that long
    # Statements can follow only a ';' that ends this one (not prose cut off after it).
    whole = terminated and _clean(candidate) == sql
    return _Found(sql, QUERY, text[start + len(candidate) :] if whole else "", start)


def _unparsed_before_another(text: str, start: int, end: tuple[str, bool]) -> _Found | None:
    """A query at a line start that does not parse but ends with ``;`` before another
    statement (``SELECT ... Range ...; SELECT ...``): the first of several statements, as
    written, rather than prose before the second. ``end``: :func:`_end_of_statement` there."""
    candidate, terminated = end
    if not terminated or not _at_line_start(text, start):
        return None
    rest = text[start + len(candidate) :]
    if not _written_as_statement(candidate) or _next_statement(rest) is None:
        return None
    return _Found(_clean(candidate), None, rest, start)


def _other_at(text: str, start: int, *, written_is_enough: bool) -> _Found | None:
    """A non-query statement at ``start`` that ends with ';' or ends ``text``; else None.

    It counts when sqlglot parses it as one, or (``written_is_enough``) when it is written as
    SQL rather than as a sentence (:func:`_written_as_statement`)."""
    candidate, terminated = _end_of_statement(text, start)
    rest = text[start + len(candidate) :]
    if not terminated:
        if rest:
            return None  # it runs on past MAX_STATEMENT_CHARS: no statement is that long
        candidate = _without_trailing_prose(candidate)
    sql = _clean(candidate)
    if _kind(sql) == OTHER or (written_is_enough and _written_as_statement(sql)):
        return _Found(sql, OTHER, rest, start)
    return None


def _without_trailing_prose(candidate: str) -> str:
    """An unterminated statement up to the first blank line after which the text does not
    continue SQL (``SHOW TABLES`` then a blank line and "This lists them."). Paragraphs that
    continue it stay (``SET STATEMENT ... FOR``, a blank line, ``SELECT ...``)."""
    first, *others = _BLANK_LINE.split(candidate)
    kept = [first]
    for paragraph in others:
        if not _continues_sql(paragraph):
            break
        kept.append(paragraph)
    return "\n\n".join(kept)


def _written_as_statement(sql: str) -> bool:
    """Is ``sql``, which starts with a statement keyword, written as SQL rather than as an
    English sentence that starts with the same word ("Show the names of ...:", "Set up ...")?
    SQL writes the keyword in upper or lower case, a sentence capitalises it; and a sentence's
    line ends with ``:``, ``.``, ``?`` or ``!``, a statement's does not."""
    match = _STATEMENT_WORD.match(sql)
    if match is None:
        return False
    word = match.group("kw")
    first_line = sql.split("\n", 1)[0].rstrip()
    return (word.isupper() or word.islower()) and not first_line.endswith(_SENTENCE_ENDS)


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
    return _Found(sql, None, body[len(head) :], region=body) if sql else None


def _next_statement(rest: str) -> str | None:
    """The statement that follows a ``;`` in ``rest`` (comments and empty statements aside),
    or None when only blanks, comments or prose follow. A statement keyword written as SQL
    starts one even where sqlglot cannot parse what follows it."""
    text = _skip_comments(rest, empty_statements=True)
    if not text:
        return None
    found = None
    if _QUERY_START.match(text) or _PAREN_QUERY_START.match(text):
        found = _query_at(text, 0)
    elif _OTHER_START.match(text):
        found = _other_at(text, 0, written_is_enough=True)
    if found is None and _written_as_statement(text):
        found = _first_statement_unparsed(text)
    return None if found is None else found.sql


def _end_of_statement(text: str, start: int = 0) -> tuple[str, bool]:
    """``(head, terminated)``: the text from ``start`` up to and including the first ``;``
    that completes a statement (True), or all of it capped at MAX_STATEMENT_CHARS (False).

    The dialect's scanner (``lexis``) finds each ';' outside strings and comments in one
    linear pass. On SQLite, its own ``complete_statement`` confirms it (and so stays the judge,
    e.g. of the ';' inside a trigger body); calling it on every prefix ending in ';' instead
    was quadratic. Other engines end a statement at the first such ';', as their clients do.
    """
    rules = _rules()
    confirm = rules.dialect == "sqlite"
    window = text[start : start + MAX_STATEMENT_CHARS]
    if ";" not in window:
        # Nothing can end the statement: the scan would find no ';' either, and on a long
        # text (every start of a 10 MB output) it is most of the time of an extraction.
        return window, False
    confirmations = 0
    for match in rules.marks(window):
        if match.lastgroup != "semicolon":
            continue
        end = match.end()
        if not confirm:
            return window[:end], True
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
# The strings and comments of the dialect the output being extracted is written in.
# None outside extract_sql: the default dialect's.
_lexis: ContextVar[Lexis | None] = ContextVar("sqlbench_lmeval_lexis", default=None)
# Per text parsed for the output being extracted, what its parse in the output's dialect says
# of its table reads (the Extraction carries the statement's); None outside extract_sql.
_parsed: ContextVar[dict[str, TableReads] | None] = ContextVar(
    "sqlbench_lmeval_parsed", default=None
)


def _rules() -> Lexis:
    return _lexis.get() or lexis()


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
    kind, reads = _kind_of(text, _rules().dialect)
    parsed = _parsed.get()
    if parsed is not None and reads is not None:
        parsed[text] = reads
    return kind


@lru_cache(maxsize=8192)
def _kind_of(text: str, written_in: str) -> tuple[str | None, TableReads | None]:
    """QUERY if ``text`` parses as one query in its own dialect or another we execute (the
    engine judges the details); else OTHER if as one statement that is not a query; and what
    the parse in its own dialect says of its table reads (``table_reads``)."""

    kind = None
    reads = None
    for dialect in dict.fromkeys((written_in, *_DIALECTS)):
        try:
            parsed = sqlglot.parse(text, read=dialect)
        except Exception:  # ParseError, TokenError, RecursionError on deep nesting, ...
            parsed = None
        if dialect == written_in:  # the first: written_in is never None
            reads = _table_reads(text, written_in, parsed)
        if parsed is None:
            continue
        trees = [t for t in parsed if t is not None]
        if len(trees) != 1:
            continue
        if isinstance(trees[0], exp.Query):
            return QUERY, reads
        if isinstance(trees[0], _other_statements()):
            kind = OTHER
    return kind, reads


def _table_reads(text: str, written_in: str, parsed: list | None) -> TableReads | None:
    try:
        return table_reads_of(text, written_in, parsed)
    except Exception:  # whatever a tree provokes, the table-read test meets again on its own
        return None


@lru_cache(maxsize=1)
def _other_statements() -> tuple[type, ...]:
    """sqlglot node types of statements that are not read-only queries. sqlglot's catch-all
    ``Command`` is left out: it also swallows prose such as "Create a query that ..." (such
    statements count when written as SQL, see :func:`_written_as_statement`)."""

    names = (
        "Insert Update Delete Merge Create Drop Alter TruncateTable Pragma Attach Detach Copy "
        "Install Transaction Commit Rollback Set Show Kill Use Describe Grant Revoke Analyze "
        "Summarize Execute Declare Lock LoadData Refresh Cache Uncache Comment"
    ).split()
    return tuple(getattr(exp, name) for name in names if hasattr(exp, name))


def _skip_comments(text: str, *, empty_statements: bool = False) -> str:
    """``text`` without leading blanks and comments of its dialect (and ``;``, the empty
    statement, when ``empty_statements``); linear in what it skips."""
    return text[_rules().skip(text, empty_statements=empty_statements) :]


def _clean(sql: str) -> str:
    """Strip blanks and trailing semicolons (empty statements) from a statement."""
    text = sql.strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return text
