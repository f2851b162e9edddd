"""Where strings, quoted names and comments are in SQL text, per dialect (from sqlglot's tokenizer
settings, with MySQL's executable comments reported as code): the linear, tolerant scanner
extraction uses to find the ``;`` that ends a statement and the comments around it (the rules
per dialect, the departures from sqlglot and why not its tokenizer: docs/statement-rule.md).

>>> first_keyword("# note\\n/* c */ (select 1)", lexis("mysql"))
'SELECT'
>>> first_keyword("# not a comment in SQLite\\nSELECT 1", lexis("sqlite"))
''
>>> executable_comment("SELECT /*!50000 SLEEP(5) */ 1", lexis("mysql"))
'/*!'
>>> executable_comment("SELECT '/*! in a string' AS s", lexis("mysql")) is None
True"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

#: The dialect extraction reads an answer in when none is given (the SQLite benchmarks').
DEFAULT_DIALECT = "sqlite"

_TEMPLATE_COMMENT = "{#"  # Jinja: a comment to sqlglot, text to every engine
_EXECUTABLE = r"/\*M?!"  # MySQL/MariaDB executable comment openers


@dataclass(frozen=True)
class Lexis:
    """How one dialect writes what is not code: strings, quoted names, comments.

    ``scan`` matches, left to right, every string, quoted name, comment, executable comment
    opener (group ``executable``, MySQL family only) and ``;`` (group ``semicolon``); an
    unclosed string or comment runs to the end of the text. Where comments nest
    (``nested_comments``) it matches only the ``/*`` that opens a block comment (group
    ``nested``): a regular expression cannot count, :meth:`marks` and :meth:`skip` do.
    ``leading`` matches blanks and comments at the start of a text, ``leading_empty`` also empty
    statements (``;``), block comments left out where they nest. ``line_comment`` finds where a
    line comment opens.
    """

    dialect: str
    scan: re.Pattern
    leading: re.Pattern
    leading_empty: re.Pattern
    line_comment: re.Pattern
    mysql_family: bool
    nested_comments: bool = False

    def marks(self, text: str) -> Iterator[re.Match]:
        """The ``;`` (group ``semicolon``) and executable comment openers (``executable``) of
        ``text`` outside its strings, quoted names and comments, in order; one linear pass."""
        search = self.scan.search
        position = 0
        while (match := search(text, position)) is not None:
            if match.lastgroup == "nested":
                position = _nested_comment_end(text, match.end())
                continue
            if match.lastgroup in ("semicolon", "executable"):
                yield match
            position = match.end()

    def skip(self, text: str, position: int = 0, *, empty_statements: bool = False) -> int:
        """Where the blanks and comments at ``position`` of ``text`` end (also empty statements,
        ``;``, with ``empty_statements``)."""
        pattern = self.leading_empty if empty_statements else self.leading
        while True:
            position = pattern.match(text, position).end()
            if not (self.nested_comments and text.startswith("/*", position)):
                return position
            position = _nested_comment_end(text, position + 2)


_NESTING = re.compile(r"/\*|\*/")


def _nested_comment_end(text: str, position: int) -> int:
    """Where the block comment whose ``/*`` ends at ``position`` closes, counting the ``/*`` and
    ``*/`` inside it (as PostgreSQL's and DuckDB's lexers do); the end of ``text`` if never."""
    depth = 1
    for match in _NESTING.finditer(text, position):
        depth += 1 if match.group() == "/*" else -1
        if not depth:
            return match.end()
    return len(text)


@lru_cache(maxsize=32)
def lexis(dialect: str | None = None) -> Lexis:
    """The :class:`Lexis` of the sqlglot dialect ``dialect`` (default :data:`DEFAULT_DIALECT`)."""
    # heavy: sqlglot's dialects load when a lexis is first built, not when execution's
    # statement rule imports this module
    from sqlglot.dialects.dialect import Dialect
    from sqlglot.dialects.mysql import MySQL
    from sqlglot.tokens import TokenType

    name = dialect or DEFAULT_DIALECT
    engine_dialect = Dialect.get_or_raise(name)
    tokenizer = engine_dialect.tokenizer_class
    mysql_family = isinstance(engine_dialect, MySQL)
    backslash = "\\" in tokenizer._STRING_ESCAPES
    quoted = [_quoted(start, end, backslash) for start, end in tokenizer._QUOTES.items()]
    quoted += [_quoted(start, end, False) for start, end in tokenizer._IDENTIFIERS.items()]
    if "\\" in tokenizer._BYTE_STRING_ESCAPES and not backslash:
        # E'...' (PostgreSQL, DuckDB): backslash escapes where plain strings have none. Not
        # right after a name's character: ``some'x'`` is a name, then a string.
        prefixes = [
            start
            for start, (end, kind) in tokenizer._FORMAT_STRINGS.items()
            if kind == TokenType.BYTE_STRING and end == "'" and start.endswith("'")
        ]
        if prefixes:
            opener = "|".join(re.escape(start[:-1]) for start in prefixes)
            quoted.insert(0, rf"(?<![\w$])(?:{opener})" + _quoted("'", "'", True))
    if "$" in tokenizer.HEREDOC_STRINGS:
        # Not right after a name's character: ``a$$`` is a name ending in ``$``, not a string.
        # (A number or a string glued to ``$$`` is read the same way; SQL never writes that.)
        quoted.append(r"(?<![\w$])\$(?P<tag>[A-Za-z_]\w*|)\$.*?(?:\$(?P=tag)\$|\Z)")
    nested = bool(tokenizer.NESTED_COMMENTS) and tokenizer._COMMENTS.get("/*") == "*/"
    line_comments, block_comments = [], []
    for start, end in sorted(tokenizer._COMMENTS.items(), key=lambda kv: -len(kv[0])):
        if start == _TEMPLATE_COMMENT:
            continue
        if end is None:
            boundary = start == "--" and tokenizer.DASH_COMMENT_REQUIRES_BOUNDARY
            opener = r"--(?=[\s\x00-\x1f]|\Z)" if boundary else re.escape(start)
            line_comments.append(opener)
        elif not (nested and start == "/*"):
            opener = re.escape(start)
            if mysql_family and start == "/*":
                opener += r"(?!M?!)"  # an executable comment is code, not a comment
            block_comments.append(opener + ".*?(?:" + re.escape(end) + r"|\Z)")
    line_end = "\\n" if tokenizer.COMMENTS_TERMINATE_AT_NEWLINE_ONLY else "\\n\\r"
    comments = [f"(?:{opener})[^{line_end}]*" for opener in line_comments] + block_comments
    opens_nested = [r"(?P<nested>/\*)"] if nested else []
    executable = [f"(?P<executable>{_EXECUTABLE})"] if mysql_family else []
    scan = "|".join([*quoted, *comments, *opens_nested, *executable, "(?P<semicolon>;)"])
    return Lexis(
        dialect=name,
        scan=re.compile(scan, re.DOTALL),
        leading=re.compile(r"(?:\s+|" + "|".join(comments) + ")*", re.DOTALL),
        leading_empty=re.compile(r"(?:[\s;]+|" + "|".join(comments) + ")*", re.DOTALL),
        line_comment=re.compile("|".join(line_comments)),
        mysql_family=mysql_family,
        nested_comments=nested,
    )


def _quoted(start: str, end: str, backslash: bool) -> str:
    """A regex for text quoted from ``start`` to ``end`` (or to the end of the text)."""
    if len(end) == 1 and backslash:
        body = rf"(?:[^{re.escape(end)}\\]|\\.)*"
    elif len(end) == 1:
        body = rf"[^{re.escape(end)}]*"
    else:
        body = ".*?"
    return re.escape(start) + body + "(?:" + re.escape(end) + r"|\Z)"


def executable_comment(text: str, rules: Lexis) -> str | None:
    """The first executable comment opener (``/*!``, ``/*M!``) outside strings and comments of
    ``text``, for a MySQL-family dialect; None when there is none (always, for other dialects)."""
    if not rules.mysql_family:
        return None
    for match in rules.marks(text):
        if match.lastgroup == "executable":
            return match.group()
    return None


def code_start(text: str, rules: Lexis) -> int:
    """Where the code of ``text`` starts: after blanks, comments and opening parentheses (an
    executable comment is code on MySQL-family engines, so the code starts there)."""
    position = 0
    while True:
        position = rules.skip(text, position)
        if not text.startswith("(", position):
            return position
        position += 1


_WORD = re.compile(r"[A-Za-z_]+")


def first_keyword(text: str, rules: Lexis) -> str:
    """The first word of the statement ``text`` in upper case, after blanks, comments and
    opening parentheses ('' when the code does not start with a word): the kind of statement
    a server engine is about to be sent."""
    word = _WORD.match(text, code_start(text, rules))
    return word.group(0).upper() if word else ""
