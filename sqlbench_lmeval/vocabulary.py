"""Every status, reason, flag and verdict value a score file, a gold record or a message can
carry, each an enum member of one class here: how a query ended (:class:`Status`), the statuses
only a score has, why an answer is refused or scored as it is, where a scoring exception arose,
gold's health and flags, how an answer's reading of the data was judged, gold's tie status, the
verdict classes, LogicCat's fidelity classes, where a metered answer's token counts came from
(:class:`TokensFrom`) and ``verify``'s severities and verdicts. A
:class:`Vocabulary` member is written, counted and printed as its value, so a score dict, a JSON
file and a message read the same whether a value came from here or from a file. This module
sits with the helpers, below ``sql/`` and ``execution/``, and imports nothing of the package:
every layer names its values from here (the choice: docs/DEVELOPING.md#one-vocabulary).

>>> class Color(Vocabulary):
...     RED = "red"
>>> Color.RED, f"{Color.RED}", Color.RED == "red", {"red": 1}[Color.RED], Color("red").name
('red', 'red', True, 1, 'RED')
>>> Status("timeout") is Status.TIMEOUT, str(VerdictClass.WRONG_RESULT)
(True, 'wrong_result')
"""

from __future__ import annotations

from enum import Enum


class Vocabulary(str, Enum):
    """A ``str`` enum printed, formatted and shown as its value (as ``enum.StrEnum`` of Python 3.11,
    which the package's oldest Python, 3.10, lacks)."""

    __str__ = str.__str__
    __format__ = str.__format__
    __repr__ = str.__repr__


class Status(Vocabulary):
    """How a query ended: every query ends in exactly one (``execution.outcome.Outcome``)."""

    OK = "ok"  # ran; columns and rows hold the full result
    ERROR = "error"  # the engine refused or failed (message in Outcome.error)
    TIMEOUT = "timeout"  # stopped at Limits.timeout_s (by the engine, or the worker was killed)
    TOO_MANY_ROWS = "too_many_rows"  # more than Limits.max_rows rows, or a result too large
    NO_SQL = "no_sql"  # nothing to run: None, blank or comment-only
    # The worker process died while running it (a segfault, the OOM killer), or the server
    # dropped the connection each time it ran (runner.LOSSES_ALLOWED) while coming back.
    CRASHED = "crashed"


class ScoreStatus(Vocabulary):
    """A score's status where no query of the answer ran to give a :class:`Status`."""

    #: The item's prediction was never submitted (offline scoring only).
    MISSING = "missing"
    #: The item is left out because its gold did not finish (``Limits.exclude_unfinished_gold``,
    #: ``stages.recheck_gold``): in no mean, counted apart; its score has no metric numbers.
    EXCLUDED = "excluded"
    #: The report rebuilt the item from lm-eval's numbers: its score dict was unreadable.
    UNKNOWN = "unknown"


class Refusal(Vocabulary):
    """Why an answer is refused before anything runs (``sql.extract.Extraction.problem``, and
    the score's ``reason``; docs/statement-rule.md)."""

    EXECUTABLE_COMMENT = "executable_comment"
    MULTIPLE_STATEMENTS = "multiple_statements"
    NOT_READ_ONLY = "not_read_only"


class Reason(Vocabulary):
    """Why an answer scored as it did (the score's ``reason``), besides a :class:`Refusal`, an
    exception's ``"<stage>: <type>: <message>"`` (:class:`Stage`) and a :class:`Status` after
    ``gold_`` or ``pred_`` (gold's or the answer's query did not end ``ok``)."""

    #: The comparison's reasons (``scoring.compare.Verdict.reason``): equal, or where not.
    MATCH = "match"
    COLUMN_COUNT = "column_count"
    ROW_COUNT = "row_count"
    VALUES = "values"
    ORDER = "order"
    #: Not gold's literal result but one of its tie resolutions (``scoring.tie_compare``).
    TIE_EQUIVALENT = "tie_equivalent"
    #: The answer could not be translated into the engine's dialect (``scoring.translate``).
    TRANSPILE_ERROR = "transpile_error"
    #: An output cut off by the generation limit that did not match gold.
    TRUNCATED = "truncated"
    #: It ran on an item whose gold is broken (``scoring.item.gold_broken``): never compared.
    BROKEN_GOLD = "broken_gold"


class Stage(Vocabulary):
    """Where an exception while scoring one answer arose: the first word of its reason."""

    EXTRACT = "extract"
    TRANSPILE = "transpile"
    COMPARE = "compare"
    SCORE = "score"
    STRUCTURE = "structure"
    DOCUMENT = "document"
    SCORING = "scoring"


class GoldStatus(Vocabulary):
    """Gold's health (the score's ``gold_status``, an item's build-time one), besides a
    :class:`Status` of gold that did not run: anything but ``ok`` means EX on that item says
    little about the model."""

    OK = "ok"
    EMPTY = "empty"
    ALL_NULL = "all_null"
    #: Gold is not a query (LogicCat's build-time verdict).
    NON_SELECT = "non_select"
    #: No gold ran: the document could not be read as an item.
    UNKNOWN = "unknown"


class GoldFlag(Vocabulary):
    """What a benchmark's build found about a gold query (an item's ``flags``)."""

    CLOCK_DEPENDENT = "clock_dependent"
    #: RAND(): seeded alike on every run (docs/engines.md#one-seed-for-every-statement), yet
    #: gold drawing random numbers states no fact about the data; kept out of ex_on_healthy_gold.
    RANDOM = "random"
    NONDETERMINISTIC_ORDER = "nondeterministic_order"
    MYSQL_SPECIFIC = "mysql_specific"


class DataDependence(Vocabulary):
    """How an answer's reading of the data was judged (the score's ``data_dependence``)."""

    #: It names no table (syntactic, no run): flagged.
    NO_TABLE = "no_table"
    #: It matched gold, and on a perturbed copy where gold's result changed its result is not
    #: gold's there (another result, an error, a timeout): flagged.
    DIFFERS = "differs"
    #: It matched gold, and on every perturbed copy where gold's result changed its result is
    #: gold's there: it reads the data.
    CHANGED = "changed"
    #: Gold's result changed on no perturbed copy (or gold did not finish, or failed, there):
    #: the test cannot tell, and nothing is flagged.
    UNDECIDABLE = "undecidable"
    #: The engine keeps no perturbed copy (a server): the syntactic test only.
    NOT_TESTED = "not_tested"
    #: Score files of COMPARISON_VERSION 4 and older only: its result on the one perturbed
    #: copy of then stayed the same while gold's changed: flagged.
    UNCHANGED = "unchanged"


class TieStatus(Vocabulary):
    """How gold's ties were judged (the score's ``tie_status``; docs/scoring.md)."""

    #: Gold has no ORDER BY and no cut: one right answer, its rows in any order.
    NONE = "none"
    #: Probed: the right answers are known (``acceptable`` counts them).
    ANSWERS = "answers"
    #: Gold returned no result: its ties were not judged.
    NO_GOLD_RESULT = "no_gold_result"
    #: Written ``not_handled:<a TiePlanReason>``: the probe cannot be planned for gold's query,
    #: which is compared literally.
    NOT_HANDLED = "not_handled"
    #: Why a probe's result cannot be used (``scoring.tie_compare``; compared literally).
    PROBE_FAILED = "probe_failed"  # the probe did not run (error, timeout, row cap)
    PROBE_COLUMNS = "probe_columns"  # not gold's columns plus the extra keys
    KEYS_NOT_SORTED = "keys_not_sorted"  # equal keys apart: not the engine's order of these keys
    GOLD_NOT_ACCEPTED = "gold_not_accepted"  # gold's own result is not among the answers
    PROBE_TRUNCATED = "probe_truncated"  # the probe's row limit may have cut the last group short


class TiePlanReason(Vocabulary):
    """Why no tie probe is planned for a gold query (``scoring.tie_probe.TiePlan.reason``)."""

    UNPARSED = "unparsed"
    NOT_A_QUERY = "not_a_query"
    LIMIT_NOT_LITERAL = "limit_not_literal"
    KEY_NOT_IN_OUTPUT = "key_not_in_output"  # DISTINCT / set operation ordered by another value
    POSITION_OUT_OF_RANGE = "position_out_of_range"
    ORDER_ALL = "order_by_all"  # DuckDB's ORDER BY ALL over a SELECT *
    STAR_WITH_KEY = "star_with_key"  # MySQL: SELECT * over a join, ordered by a non-output value
    UNEXPECTED_TEXT = "unexpected_text"  # the tokens do not show the clauses the tree has
    #: A key expression reads a computed output alias's name, which a table column of that name
    #: would take from it (SQLite, DuckDB, PostgreSQL): which of the two the engine sorts by
    #: cannot be told from gold's text.
    ALIAS_OR_COLUMN = "alias_or_column"


class FidelityClass(Vocabulary):
    """How LogicCat's gold on one engine compares with another's (``sqlbench-lmeval fidelity``):
    they agree, or why they differ, the first that applies in this order (docs/logiccat.md)."""

    AGREE = "agree"
    #: ORDER BY ... LIMIT inside a subquery cuts through ties (flagged
    #: ``nondeterministic_order``): which rows reach the outer query is the engine's choice.
    SUBQUERY_TIES = "subquery_ties"
    CLOCK_RANDOM = "clock_random"
    MYSQL_SPECIFIC = "mysql_specific"
    #: MySQL rounds DECIMAL results and intermediates; we compute in binary floating point.
    DECIMAL_SCALE = "decimal_scale"
    OUR_ERROR = "our_error"
    OTHER = "other"


class TokensFrom(Vocabulary):
    """Where a metered answer's token counts came from (``scoring.cost``, docs/cost.md): the
    server's ``usage``, a tokenizer (the one named, or a local model's own), or both across an
    item's requests."""

    USAGE = "usage"
    TOKENIZER = "tokenizer"
    MIXED = "mixed"


class Severity(Vocabulary):
    """How much a finding of ``verify`` weighs (``submission.checks.base.Finding``), worst
    first."""

    REJECT = "reject"
    UNATTESTED = "unattested"
    FINDING = "finding"
    INFO = "info"


class RunVerdict(Vocabulary):
    """``verify``'s verdict on a run: its worst finding's :class:`Severity` (docs/verify.md)."""

    VERIFIED = "verified"
    WITH_FINDINGS = "verified with findings"
    UNATTESTED = "unattested"
    REJECTED = "rejected"


class VerdictClass(Vocabulary):
    """How an answer ended: one class per item, counted alike by ``score``, ``verify``,
    ``report`` and the explorer (the rule: docs/scoring.md, "Verdicts"). ``wrong_result``: ran,
    result differs from gold; ``broken_gold``: ran, on an item whose gold gave no result when
    the data was prepared (never compared); ``truncated``: cut off by the generation limit and
    not correct (whatever its status); the rest are statuses."""

    CORRECT = "correct"
    WRONG_RESULT = "wrong_result"
    BROKEN_GOLD = "broken_gold"
    ERROR = "error"
    TIMEOUT = "timeout"
    TOO_MANY_ROWS = "too_many_rows"
    NO_SQL = "no_sql"
    TRUNCATED = "truncated"
    CRASHED = "crashed"
    MISSING = "missing"
