"""Which rows could gold have returned? :func:`plan_ties` reads gold's sqlglot tree and derives a
:class:`TiePlan`: whether the outermost query's order is in question at all, the *probe* (gold's
text edited to return its rows in gold's order with its sort keys, without the LIMIT/OFFSET
cut) and where the cut was; ``tie_compare`` turns the probe's result into the right answers
(the decisions and their reasons: docs/ties.md#how-the-right-answers-are-found).

>>> plan = plan_ties("SELECT name FROM scores ORDER BY score DESC LIMIT 3", "sqlite", max_rows=100)
>>> plan.limit, plan.probe_sql
(3, 'SELECT name, score AS __tie_key_0 FROM scores ORDER BY score DESC\\nLIMIT 100')
>>> plan_ties("SELECT name, score FROM scores ORDER BY 2", "sqlite").probe_sql is None
True
>>> plan_ties("SELECT name FROM scores", "sqlite").has_order_or_cut
False"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import Token, TokenType

from sqlbench_lmeval.scoring.compare import outermost_order_by
from sqlbench_lmeval.vocabulary import TiePlanReason

#: Prefix of the extra key columns a probe appends after gold's own columns.
KEY_PREFIX = "__tie_key_"
#: The most rows a probe returns (the default row cap of execution): it ends in LIMIT this.
PROBE_ROWS = 10_000
#: Name of gold's result inside a probe that computes keys over it.
WRAPPER = "__tie_probe"

# Why a plan is not handled (``TiePlan.reason``; what each means: ``TiePlanReason``).
UNPARSED = TiePlanReason.UNPARSED
NOT_A_QUERY = TiePlanReason.NOT_A_QUERY
LIMIT_NOT_LITERAL = TiePlanReason.LIMIT_NOT_LITERAL
KEY_NOT_IN_OUTPUT = TiePlanReason.KEY_NOT_IN_OUTPUT
POSITION_OUT_OF_RANGE = TiePlanReason.POSITION_OUT_OF_RANGE
ORDER_ALL = TiePlanReason.ORDER_ALL
STAR_WITH_KEY = TiePlanReason.STAR_WITH_KEY
UNEXPECTED_TEXT = TiePlanReason.UNEXPECTED_TEXT
ALIAS_OR_COLUMN = TiePlanReason.ALIAS_OR_COLUMN
# Engines whose ORDER BY reads an output alias inside an expression before a table column of
# the same name (MySQL/MariaDB); elsewhere the table column wins there (and only a bare name
# is read as an alias first).
_ALIAS_FIRST_DIALECTS = frozenset({"mysql"})
# ``_needs_wrapper``: the copy into the select list first, the wrapper if that copy fails.
_EITHER = "either"

_SET_OPERATIONS = (exp.Union, exp.Except, exp.Intersect)
_QUERIES = (exp.Select, *_SET_OPERATIONS)


@dataclass(frozen=True)
class OutputKey:
    """A sort key read from gold's own output column ``index`` (0-based)."""

    index: int


@dataclass(frozen=True)
class ExtraKey:
    """A sort key the probe appends: extra column ``index`` after gold's own columns."""

    index: int


Key = OutputKey | ExtraKey


@dataclass(frozen=True)
class TiePlan:
    """What gold's outermost ORDER BY and LIMIT/OFFSET leave open, and how to see it.

    ``handled`` False (``reason`` says why): compare literally, as without tie-awareness.
    ``has_order_or_cut`` False: no outermost ORDER BY (or only constant keys) and no cut, so
    rows compare as a multiset and nothing is probed. Otherwise ``keys`` are the non-constant
    sort keys in ORDER BY order (empty: every row ties), ``offset``/``limit`` the cut (``limit``
    None: no LIMIT), and ``probe_sql`` the query to run on gold's engine, or None when gold's
    own result holds every key and there is no cut. ``fallback_sql``: the probe to use when
    ``probe_sql`` fails with an error, for a key that reads a name that is a computed output
    alias and may also be a table column (see :func:`_needs_wrapper`).
    """

    handled: bool
    reason: str | None = None
    keys: tuple[Key, ...] = ()
    offset: int = 0
    limit: int | None = None
    probe_sql: str | None = None
    fallback_sql: str | None = None
    probe_limit: int | None = None
    extra_columns: int = 0
    inner_cuts: bool = False
    #: Whether gold's outermost query has an ORDER BY at all, constant keys included: whether
    #: EX compares rows in order (``compare.gold_order_matters``), read from the same parse.
    order_by: bool = False

    @property
    def ordered(self) -> bool:
        """Whether the order between tie groups counts (some non-constant sort key)."""
        return bool(self.keys)

    @property
    def has_cut(self) -> bool:
        return self.limit is not None or self.offset > 0

    @property
    def has_order_or_cut(self) -> bool:
        return self.ordered or self.has_cut


def _not_handled(reason: str, inner_cuts: bool = False) -> TiePlan:
    return TiePlan(handled=False, reason=reason, inner_cuts=inner_cuts)


def plan_ties(sql: str, dialect: str, max_rows: int = PROBE_ROWS) -> TiePlan:
    """The :class:`TiePlan` of gold ``sql`` written in sqlglot ``dialect``; the probe returns
    at most ``max_rows`` rows (the row cap it runs under)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect or None)
    except Exception:
        return _not_handled(UNPARSED)
    return replace(_plan(sql, dialect, max_rows, tree), order_by=outermost_order_by(tree))


def _plan(sql: str, dialect: str, max_rows: int, tree: exp.Expression) -> TiePlan:
    try:
        tokens = Dialect.get_or_raise(dialect or None).tokenize(sql)
    except Exception:
        return _not_handled(UNPARSED)
    query = outermost_query(tree)
    if not isinstance(query, _QUERIES):
        return _not_handled(NOT_A_QUERY)
    inner_cuts = any(
        node is not query and node.args.get("order") and node.args.get("limit")
        for node in tree.find_all(*_QUERIES)
    )
    cut = _cut(query)
    if cut is None:
        return _not_handled(LIMIT_NOT_LITERAL, inner_cuts)
    offset, limit = cut
    order = query.args.get("order")
    terms = list(order.expressions) if order is not None else []
    projections = _projections(query)
    found = _order_keys(terms, projections)
    if isinstance(found, str):
        return _not_handled(found, inner_cuts)
    keys, extra_terms = found
    wrap = False
    if extra_terms:
        extra_keys = [terms[i].this if isinstance(terms[i], exp.Ordered) else terms[i]
                      for i in extra_terms]  # fmt: skip
        wrap = _needs_wrapper(query, extra_keys, projections, dialect)
        if isinstance(wrap, str) and wrap != _EITHER:
            return _not_handled(wrap, inner_cuts)
        if wrap is None:
            return _not_handled(KEY_NOT_IN_OUTPUT, inner_cuts)
    plan = TiePlan(
        handled=True,
        keys=tuple(keys),
        offset=offset,
        limit=limit,
        extra_columns=len(extra_terms),
        inner_cuts=inner_cuts,
    )
    if not plan.has_cut and not extra_terms:
        return plan  # gold's own rows hold every key (or there is no order at all)
    star = None
    if extra_terms and projections is None:
        star = _star_qualifier(query, dialect)
        if star is None:
            return _not_handled(STAR_WITH_KEY, inner_cuts)
    texts = []
    for wrapped in (False, True) if wrap == _EITHER else (wrap,):
        gold = _GoldText(sql, tokens, paren_depths(tokens), outer_depth(tree), len(terms))
        probe, reason = _probe_text(gold, _Extras(extra_terms, star, wrapped))
        if probe is None:
            return _not_handled(reason or UNPARSED, inner_cuts)
        # Bounded, so the probe of a large result stays under the row cap: rows past the group
        # the cut goes through are never needed (``tie_compare`` refuses a probe cut inside it).
        texts.append(f"{probe.rstrip()}\nLIMIT {int(max_rows)}")
    fallback = texts[1] if len(texts) > 1 else None
    return replace(plan, probe_sql=texts[0], fallback_sql=fallback, probe_limit=int(max_rows))


def _order_keys(terms, projections) -> tuple[list[Key], list[int]] | str:
    """Gold's ORDER BY terms as tie keys, and the terms (by position) that become extra
    columns of the probe; or why they cannot be handled."""
    keys: list[Key] = []
    extra_terms: list[int] = []
    for position, term in enumerate(terms):
        key = term.this if isinstance(term, exp.Ordered) else term
        resolved = _resolve_key(key, projections)
        if resolved is _CONSTANT:
            continue
        if isinstance(resolved, str):
            return resolved
        if isinstance(resolved, tuple):
            keys.extend(resolved)
            continue
        if resolved is not None:
            keys.append(resolved)
            continue
        keys.append(ExtraKey(len(extra_terms)))
        extra_terms.append(position)
    return keys, extra_terms


def _needs_wrapper(
    query: exp.Expression,
    keys: list[exp.Expression],
    projections: list[exp.Expression] | None,
    dialect: str = "",
) -> bool | str | None:
    """How extra keys are computed: in gold's own select list (False), or by a wrapper query
    over gold's result (True), or not at all (None).

    In gold's select list a key cannot read an output alias (SQLite and MySQL refuse it), and
    under DISTINCT or a set operation an extra column would change the rows. A key that reads
    only gold's output columns by name is computed over gold's result instead:
    ``SELECT *, <key> FROM (<gold without the cut>) ORDER BY <gold's ORDER BY>``; it then needs
    unique output names. Under a table column of the same name, SQLite, DuckDB and PostgreSQL
    read the table's column in an ORDER BY expression where the wrapper reads the output's, and
    the wrapper's groups can then hold rows the engine's real key tells apart (``ROUND(price)
    AS price ... ORDER BY price + 0 LIMIT 1``: every rounded price ties, the real prices do
    not), which no check of the probe's result can see. Whether such a column exists is not in
    gold's text, so on those engines a key reading a computed alias is not handled
    (``ALIAS_OR_COLUMN``: the literal comparison); on MySQL the alias wins and the wrapper
    reads what ORDER BY reads.

    On those engines a plain query whose key reads a computed alias gets both probes
    (``_EITHER``): the key copied into gold's select list, where a table column of that name is
    read exactly as ORDER BY reads it, and the wrapper as the fallback for when that copy
    fails, which it does only when no such column exists (the name is then the alias's, in the
    select list and in ORDER BY alike). Under DISTINCT or a set operation no copy is possible:
    not handled (``ALIAS_OR_COLUMN``).
    """
    plain = isinstance(query, exp.Select) and not query.args.get("distinct")
    names = [_output_name(p) for p in projections or ()]
    computed = {
        p.alias.lower()
        for p in projections or ()
        if isinstance(p, exp.Alias)
        and not (isinstance(p.this, exp.Column) and p.this.name.lower() == p.alias.lower())
    }

    def over_outputs(key: exp.Expression) -> bool:
        columns = list(key.find_all(exp.Column))
        return (
            bool(columns)
            and not any(True for _ in key.find_all(exp.Subquery, exp.Select))
            and all(not c.table and c.name.lower() in names for c in columns)
        )

    reads_alias = any(
        c.name.lower() in computed and not c.table for key in keys for c in key.find_all(exp.Column)
    )
    if plain and not reads_alias:
        return False
    unique = all(names) and len(set(names)) == len(names)
    wrappable = projections is not None and unique and all(over_outputs(key) for key in keys)
    if reads_alias and dialect not in _ALIAS_FIRST_DIALECTS:
        if not plain:
            return ALIAS_OR_COLUMN
        # A key reading other columns than outputs has no wrapper: the copy alone, which
        # fails (probe_failed) where the alias's name is no table column.
        return _EITHER if wrappable else False
    return True if wrappable else None


def outermost_query(tree: exp.Expression) -> exp.Expression:
    """The query whose ORDER BY orders the result: parentheses around it are looked through
    (as ``compare.gold_order_matters`` does)."""
    while isinstance(tree, (exp.Subquery, exp.Paren)) and not tree.args.get("order"):
        tree = tree.this
    return tree


def _cut(query: exp.Expression) -> tuple[int, int | None] | None:
    """(offset, limit) of the outermost query; None when either is not a literal count."""
    limit = query.args.get("limit")
    offset = query.args.get("offset")
    parent = query.parent
    if limit is None and isinstance(parent, exp.Subquery):  # (SELECT ... ORDER BY ...) LIMIT n
        limit, offset = parent.args.get("limit"), parent.args.get("offset")
    count: int | None = None
    skip = 0
    if limit is not None:
        if isinstance(limit, exp.Fetch):
            value = limit.args.get("count")
            options = limit.args.get("limit_options")
            if options is not None and (
                options.args.get("percent") or options.args.get("with_ties")
            ):
                return None
        else:
            value = limit.expression
            if limit.args.get("offset") is not None:  # MySQL's LIMIT offset, count
                parsed = _literal_count(limit.args["offset"])
                if parsed is None:
                    return None
                skip = parsed
        if value is None:
            return None
        count = _literal_count(value)
        if count is None:
            return None
    if offset is not None:
        parsed = _literal_count(offset.expression if isinstance(offset, exp.Offset) else offset)
        if parsed is None:
            return None
        skip = parsed
    return skip, count


def _literal_count(node: exp.Expression) -> int | None:
    value = _integer(node)
    return value if value is not None and value >= 0 else None


def _integer(node: exp.Expression) -> int | None:
    """The value of an integer literal (parentheses looked through), else None."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return int(node.this)
        except ValueError:
            return None
    return None


_CONSTANT = object()


def _projections(query: exp.Expression) -> list[exp.Expression] | None:
    """The output expressions of ``query`` (a set operation: its first branch's), or None when
    a ``*`` hides how many there are."""
    while isinstance(query, _SET_OPERATIONS):
        query = query.left
    while isinstance(query, exp.Subquery):
        query = query.this
    if not isinstance(query, exp.Select):
        return None
    for projection in query.expressions:
        if isinstance(projection, exp.Star) or (
            isinstance(projection, exp.Column) and projection.is_star
        ):
            return None
    return list(query.expressions)


def _unaliased(projection: exp.Expression) -> exp.Expression:
    """A projection without its alias and parentheses (``DISTINCT(x)`` selects ``(x)``)."""
    if isinstance(projection, exp.Alias):
        projection = projection.this
    while isinstance(projection, exp.Paren):
        projection = projection.this
    return projection


def _output_name(projection: exp.Expression) -> str:
    """The name an output column is known by: its alias, or a bare column's name ("" else)."""
    if isinstance(projection, exp.Alias):
        return projection.alias.lower()
    projection = _unaliased(projection)
    return projection.name.lower() if isinstance(projection, exp.Column) else ""


def _resolve_key(key: exp.Expression, projections: list[exp.Expression] | None):
    """An :class:`OutputKey`, ``_CONSTANT``, None (needs an extra column), or a reason (str)
    why the key cannot be handled."""
    while isinstance(key, exp.Paren):
        key = key.this
    if isinstance(key, exp.Literal) and not key.is_string:
        position = _integer(key)
        if position is None:
            return _CONSTANT  # ORDER BY 1.5: a constant, not a position
        if projections is not None and not 1 <= position <= len(projections):
            return POSITION_OUT_OF_RANGE
        return OutputKey(position - 1)
    if isinstance(key, exp.Var) and key.name.upper() == "ALL":
        # DuckDB's ORDER BY ALL: every output column, left to right.
        return ORDER_ALL if projections is None else tuple(map(OutputKey, range(len(projections))))
    if _is_constant(key):
        return _CONSTANT
    if projections is None:
        return None
    if isinstance(key, exp.Column) and not key.table:
        name = key.name.lower()
        for index, projection in enumerate(projections):
            if _output_name(projection) == name:
                return OutputKey(index)
    for index, projection in enumerate(projections):
        if _unaliased(projection) == key:
            return OutputKey(index)
    return None


def _star_qualifier(query: exp.Expression, dialect: str) -> str | None:
    """What a ``*`` becomes so that extra columns can follow it: itself, except on MySQL,
    which refuses ``SELECT *, x`` and wants ``t.*`` (one table's columns: only when the query
    reads one table, else None)."""
    if dialect != "mysql":
        return "*"
    source = query.args.get("from_")
    if query.args.get("joins") or source is None or not isinstance(source.this, exp.Table):
        return None
    return f"{exp.to_identifier(source.this.alias_or_name).sql(dialect=dialect)}.*"


def _is_constant(node: exp.Expression) -> bool:
    """No column, subquery, aggregate, window or function call that could vary by row."""
    if isinstance(node, (exp.Column, exp.Subquery, exp.Select, exp.Window, exp.AggFunc)):
        return False
    if isinstance(node, (exp.Rand, exp.Anonymous)):
        return False
    if isinstance(node, exp.Func) and not isinstance(node, exp.Cast):
        # A function of constants is a constant, but function calls are rare in ORDER BY and
        # some read state (RANDOM(), clock): keep them as keys, which is only stricter.
        return False
    return all(_is_constant(child) for child in node.iter_expressions())


# -- the probe's text ----------------------------------------------------------------------
#
# The probe is gold's own text with two kinds of edit, never a re-generated query: sqlglot's
# writer does not always keep a query's meaning (LogicCat's SQLite gold calls MySQL-compatible
# functions such as DATE_ADD(d, '1', 'YEAR') and VAR_SAMP that it would rewrite), while an edit
# of the text leaves every other character as it was. The edits, found with sqlglot's tokenizer
# at the outermost query's parenthesis depth: the LIMIT/OFFSET/FETCH clause is cut off, and each
# extra key is copied from the ORDER BY term's own text (without ASC/DESC, NULLS FIRST/LAST and
# COLLATE) into the select list, before FROM. A copied key that names an output alias fails on
# SQLite and MySQL (a select list cannot read its own aliases) and the probe then errors, which
# leaves the item to the literal comparison; a table column of the same name wins over an alias
# in ORDER BY and in the select list alike, so the copy never reads another value than the key.

_CUT_TOKENS = frozenset({TokenType.LIMIT, TokenType.OFFSET, TokenType.FETCH})
_CUT_WORDS = frozenset({"FIRST", "NEXT", "ROW", "ROWS", "ONLY"})
_DIRECTIONS = frozenset({TokenType.ASC, TokenType.DESC})


def outer_depth(tree: exp.Expression) -> int:
    """How many parentheses enclose the outermost query (see :func:`outermost_query`)."""
    depth = 0
    while isinstance(tree, (exp.Subquery, exp.Paren)) and not tree.args.get("order"):
        tree = tree.this
        depth += 1
    return depth


def paren_depths(tokens: list[Token]) -> list[int]:
    """Per token, how many parentheses enclose it (a parenthesis itself counts as outside)."""
    depths = []
    level = 0
    for token in tokens:
        if token.token_type == TokenType.R_PAREN:
            level -= 1
        depths.append(level)
        if token.token_type == TokenType.L_PAREN:
            level += 1
    return depths


@dataclass(frozen=True)
class _GoldText:
    """Gold's text as the probe is cut from it: its tokens, their paren depths, the depth of
    its outermost query, and how many ORDER BY terms that query has."""

    sql: str
    tokens: list[Token]
    depths: list[int]
    depth: int
    term_count: int


@dataclass(frozen=True)
class _Extras:
    """The ORDER BY terms (by position) that become extra columns of the probe, the qualifier
    of a star in its SELECT list, and whether the probe wraps gold in a subquery."""

    terms: list[int]
    star: str | None
    wrap: bool = False


def _probe_text(gold: _GoldText, extras: _Extras) -> tuple[str | None, str | None]:
    """(the probe's text without its final LIMIT, None) or (None, why it cannot be made).

    The text ends where gold's last token before the cut ends (a comment after it is dropped)
    or with a line break, so that a LIMIT appended on a new line is never commented out.
    """
    sql, tokens, depth = gold.sql, gold.tokens, gold.depth
    depths = gold.depths
    selects = [i for i, t in enumerate(tokens)
               if t.token_type == TokenType.SELECT and depths[i] == depth]  # fmt: skip
    if not selects:
        return None, UNEXPECTED_TEXT
    main = selects[-1]
    cut = next(
        (i for i in range(main, len(tokens))
         if tokens[i].token_type in _CUT_TOKENS and depths[i] <= depth),
        len(tokens),
    )  # fmt: skip
    closing = 0
    for token in tokens[cut:]:
        if token.token_type == TokenType.R_PAREN:
            closing += 1
        elif not (
            token.token_type in _CUT_TOKENS
            or token.token_type in (TokenType.NUMBER, TokenType.COMMA, TokenType.SEMICOLON)
            or token.text.upper() in _CUT_WORDS
        ):
            return None, UNEXPECTED_TEXT  # something after the cut: not the last clause
    body = [i for i in range(cut) if tokens[i].token_type != TokenType.SEMICOLON]
    if not body:
        return None, UNEXPECTED_TEXT
    # Where the kept text ends: at the cut (its line break before it stays), else after the
    # last token (trailing semicolons and comments go).
    tail = tokens[cut].start if cut < len(tokens) else tokens[body[-1]].end + 1
    edits: list[tuple[int, int, str]] = [(tail, len(sql), "\n" + ")" * closing if closing else "")]
    if not extras.terms:
        return _edited(sql, edits), None
    return _with_extra_columns(gold, extras, (main, cut), edits)


def _with_extra_columns(gold: _GoldText, extras: _Extras, span, edits):
    """The probe with gold's ORDER BY keys ``extras.terms`` as extra columns: added to its
    SELECT list, or to a wrapper around it; ``span`` is (gold's main SELECT, its cut)."""
    sql, tokens, depth = gold.sql, gold.tokens, gold.depth
    depths = gold.depths
    main, cut = span
    spans = _order_terms(tokens, depths, depth, main, cut)
    if spans is None or len(spans) != gold.term_count:
        return None, UNEXPECTED_TEXT
    columns = "".join(
        f", {sql[spans[term][0] : spans[term][1]]} AS {KEY_PREFIX}{index}"
        for index, term in enumerate(extras.terms)
    )
    if extras.wrap:
        order = max(
            i
            for i in range(main, cut)
            if tokens[i].token_type == TokenType.ORDER_BY and depths[i] == depth
        )
        order_text = sql[tokens[order].start : _clause_end(tokens, depths, depth, order, cut)]
        inner = _edited(sql, edits).rstrip(" \t")
        # A qualified star: MySQL refuses ``SELECT *, x``.
        return f"SELECT {WRAPPER}.*{columns} FROM ({inner}\n) AS {WRAPPER} {order_text}", None
    source = next(
        (i for i in range(main, cut)
         if tokens[i].token_type == TokenType.FROM and depths[i] == depth),
        None,
    )  # fmt: skip
    if source is None:
        return None, UNEXPECTED_TEXT
    at = tokens[source - 1].end + 1
    edits.append((at, at, columns))
    star = extras.star
    if star is not None and star != "*":
        for i in range(main + 1, source):
            token = tokens[i]
            if (
                token.token_type == TokenType.STAR
                and depths[i] == depth
                and (tokens[i - 1].token_type != TokenType.DOT)
            ):
                edits.append((token.start, token.end + 1, star))
    return _edited(sql, edits), None


def _edited(sql: str, edits: list[tuple[int, int, str]]) -> str:
    """``sql`` with each (start, end, replacement) applied, from the last one back."""
    for start, end, replacement in sorted(edits, reverse=True):
        sql = sql[:start] + replacement + sql[end:]
    return sql


def _clause_end(tokens: list[Token], depths: list[int], depth: int, start: int, stop: int) -> int:
    """The character offset just past the last token of the clause starting at ``start``."""
    end = start
    for i in range(start, stop):
        if depths[i] < depth or tokens[i].token_type == TokenType.SEMICOLON:
            break
        end = i
    return tokens[end].end + 1


def _order_terms(
    tokens: list[Token], depths: list[int], depth: int, main: int, cut: int
) -> list[tuple[int, int]] | None:
    """Character spans of the outermost ORDER BY's keys (without direction, NULLS and
    COLLATE), in order; None without such an ORDER BY."""
    orders = [i for i in range(main, cut)
              if tokens[i].token_type == TokenType.ORDER_BY and depths[i] == depth]  # fmt: skip
    if not orders:
        return None
    terms: list[list[Token]] = [[]]
    for i in range(orders[-1] + 1, cut):
        token = tokens[i]
        if depths[i] < depth or token.token_type == TokenType.SEMICOLON:
            break
        if token.token_type == TokenType.COMMA and depths[i] == depth:
            terms.append([])
        else:
            terms[-1].append(token)
    spans = []
    for term in terms:
        while len(term) > 1:
            if term[-1].token_type in _DIRECTIONS:
                term = term[:-1]
            elif len(term) > 2 and term[-2].text.upper() == "NULLS":
                term = term[:-2]
            elif len(term) > 2 and term[-2].token_type == TokenType.COLLATE:
                term = term[:-2]
            else:
                break
        if not term:
            return None
        spans.append((term[0].start, term[-1].end + 1))
    return spans
