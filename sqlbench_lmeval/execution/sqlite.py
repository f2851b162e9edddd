"""SQLite, sandboxed: hostile SQL in, :class:`Outcome` out (the defences in the order a connection
is built: docs/engines.md#sqlite; the work it counts: docs/r-ves.md#how-each-engine-counts-work)."""

from __future__ import annotations

import itertools
import operator
import random
import sqlite3
import sys
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from sqlbench_lmeval.execution import perturbed, random_seed
from sqlbench_lmeval.execution.deadline import over_budget, stopped
from sqlbench_lmeval.execution.engines import Engine
from sqlbench_lmeval.execution.fetch import MIB, fetch_limited, out_of_memory
from sqlbench_lmeval.execution.job import Limits
from sqlbench_lmeval.execution.outcome import Outcome, Status
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable

VALUE_MAX_BYTES = 16 * MIB  # longest string/blob a query may build (zeroblob(1e9) fails fast)
SQL_MAX_BYTES = 1_000_000  # longest statement text accepted
#: Virtual-machine steps per progress-handler call above :data:`EXACT_STEPS`, the unit of work
#: there. A Python call costs ~0.3 us, a step ~0.04-0.2 us: at 16 a VM-bound query (LogicCat
#: 1440, 70M steps) ran 1.3-1.6x as long, at 64 within 5%.
STEP_UNIT = 64
#: Steps counted one by one (the handler a C callable, ~0.1 us a call) before a statement is
#: stopped and run again counted in units: 3,765 of LogicCat's 3,886 gold queries take fewer,
#: and above it a unit is under 1/64 of the count.
EXACT_STEPS = 4096
#: Handler calls between two looks at the deadline (every 4,096 steps, ~0.1 ms of work): asking
#: the clock on every call would double the handler's cost. Counting one by one, the first
#: :data:`EXACT_STEPS` steps are not timed (as the first 4,096 counted in units are not).
DEADLINE_EVERY_CALLS = 64
#: What the exact handler returns once its budget is spent: non-zero stops the statement.
_STOP = itertools.repeat(1)
#: ``StepCounter.max_calls`` without a work budget: an int, so the test per call stays cheap.
_NO_BUDGET = sys.maxsize

_ALLOWED_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
_DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer"})
_SEVERAL_STATEMENTS = "You can only execute one statement at a time."
# Primary result codes of a file that is damaged or went away (a read-only query on a sound
# file cannot cause them); IOERR_NOMEM is memory, which a query can exhaust.
_BROKEN_FILE_CODES = frozenset({10, 11, 14, 26})  # IOERR, CORRUPT, CANTOPEN, NOTADB
_SQLITE_IOERR_NOMEM = 3082
_BROKEN_FILE_MESSAGES = (
    "database disk image is malformed",
    "file is not a database",
    "unable to open database file",
    "disk I/O error",
)


class _Deadline:
    """The progress handler's state: the monotonic time after which the statement is aborted."""

    __slots__ = ("at",)

    def __init__(self) -> None:
        self.at = float("inf")

    def __call__(self) -> int:
        # Non-zero aborts the running statement with "interrupted".
        return time.monotonic() > self.at


class StepCounter:
    """A SQLite progress handler that counts its calls (``steps`` = calls x ``every``), stops the
    statement once it has made more than ``max_calls`` (the work budget, :meth:`budget`) and,
    on every ``check``-th call, returns ``inner()``'s verdict (the deadline: non-zero aborts
    the statement). SQLite keeps one progress handler per connection, so one handler does all.
    The handler is a C callable, the next answer of a chain of ``itertools.repeat`` blocks that
    Python makes once per ``check`` calls: a Python handler costs ~0.3 us a call, 0.33 s of the
    2 s of LogicCat 1440 (70M steps). :meth:`budget` starts a new chain; :meth:`install` hands
    it to a connection.

    >>> counter = StepCounter(every=64)
    >>> counter.budget(128)
    >>> [counter.handler() for _ in range(3)], counter.calls, counter.over_budget()
    ([0, 0, 1], 3, True)
    >>> counter = StepCounter(inner=lambda: 1, every=1, check=2)
    >>> counter.budget(None)
    >>> [counter.handler() for _ in range(4)], counter.steps, counter.over_budget()
    ([0, 1, 0, 1], 4, False)
    """

    __slots__ = ("check", "every", "handler", "inner", "max_calls", "_block", "_size", "_start")

    def __init__(
        self,
        inner: Callable[[], object] | None = None,
        every: int = STEP_UNIT,
        check: int = DEADLINE_EVERY_CALLS,
    ):
        self.every = every
        self.check = check
        self.inner = inner
        self.budget(None)

    def budget(self, steps: int | None) -> None:
        """Count from zero, stopping the statement past ``steps`` steps (None: never)."""
        self.max_calls = _NO_BUDGET if steps is None else steps // self.every
        self._start, self._size, self._block = 0, 0, iter(())
        self.handler = itertools.chain.from_iterable(self._blocks()).__next__

    def install(self, conn: sqlite3.Connection) -> None:
        """Make :attr:`handler` ``conn``'s progress handler, called every ``every`` steps."""
        conn.set_progress_handler(self.handler, self.every)

    def _blocks(self):
        """The handler's answers, block by block: zeros up to the next look at ``inner`` (or
        to the budget's end), that look's verdict, and ones once the budget is spent. Each
        block is made when the call that needs its first answer comes, so ``inner`` is asked
        at its call and not before."""
        check, inner, last = self.check, self.inner, self.max_calls
        answered = 0
        while True:
            ask_at = answered - answered % check + check if inner is not None else last + 1
            free = min(ask_at - 1, last) - answered
            if free > 0:
                yield self._made(answered, itertools.repeat(0, free), free)
                answered += free
            if answered >= last:
                yield self._made(answered, itertools.repeat(1, _NO_BUDGET), _NO_BUDGET)
                return
            yield self._made(answered, itertools.repeat(int(bool(inner())), 1), 1)
            answered += 1

    def _made(self, start: int, block, size: int):
        self._start, self._size, self._block = start, size, block
        return block

    @property
    def calls(self) -> int:
        """The handler's calls since :meth:`budget`."""
        return self._start + self._size - operator.length_hint(self._block)

    def over_budget(self) -> bool:
        """Whether this handler stopped the statement for its budget."""
        return self.calls > self.max_calls

    @property
    def steps(self) -> int:
        return self.calls * self.every


class SandboxConnection(sqlite3.Connection):
    """A sqlite3 connection that carries its progress handler (the step counter and deadline),
    its file's path and its random generator (reseeded before each statement)."""

    deadline: _Deadline
    counter: StepCounter
    path: str
    random: random.Random


def generator(conn: sqlite3.Connection) -> random.Random:
    """The random generator that functions registered on ``conn`` read: a sandboxed
    connection's own, which :func:`run` reseeds before each statement; for any other
    connection, a new one started from the one seed (random_seed)."""
    own = getattr(conn, "random", None)
    return own if isinstance(own, random.Random) else random_seed.sqlite_generator()


def _random_blob(source: random.Random) -> Callable[[object], bytes]:
    """SQLite's ``randomblob(n)`` drawn from ``source``: ``n`` bytes, at least one."""

    def randomblob(size: object) -> bytes:
        try:
            count = max(int(size), 1)  # type: ignore[call-overload]
        except (TypeError, ValueError):
            count = 1
        if count > VALUE_MAX_BYTES:  # SQLite itself refuses it: "string or blob too big"
            return bytes(VALUE_MAX_BYTES + 1)
        return source.randbytes(count)

    return randomblob


def _seed_random_functions(conn: SandboxConnection) -> None:
    """Replace SQLite's ``random()`` and ``randomblob(n)``, which read a generator seeded from
    the operating system, by the same functions on the connection's own generator."""
    source = conn.random = random_seed.sqlite_generator()
    conn.create_function("random", 0, lambda: source.getrandbits(64) - 2**63)
    conn.create_function("randomblob", 1, _random_blob(source))


def _authorize(action: int, arg1, arg2, db_name, source) -> int:
    if action not in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _limit(conn: sqlite3.Connection, name: str, value: int) -> None:
    # Connection.setlimit exists from Python 3.11; on 3.10 the authorizer alone denies ATTACH.
    category = getattr(sqlite3, name, None)
    if category is not None and hasattr(conn, "setlimit"):
        conn.setlimit(category, value)


def connect(
    path: str, limits: Limits, setup: Callable[[sqlite3.Connection], object] | None = None
) -> SandboxConnection:
    """Open ``path`` read-only inside the sandbox; raises FileNotFoundError or sqlite3.Error."""
    resolved = Path(path).resolve()
    if not resolved.is_file():
        raise FileNotFoundError(f"database file not found: {path}")
    uri = "file:" + urllib.parse.quote(str(resolved)) + "?mode=ro"
    conn = sqlite3.connect(
        uri,
        uri=True,
        check_same_thread=False,
        isolation_level=None,
        factory=SandboxConnection,
        cached_statements=0,  # a cached statement would shift the step count (see above)
    )
    try:
        conn.execute(f"PRAGMA hard_heap_limit = {int(limits.memory_mb) * MIB}")
        conn.execute("PRAGMA temp_store = MEMORY")  # sorts spill into the bounded heap, not /tmp
        # Read the schema now: a file that is not a database fails here, not in a query, and
        # no query's step count includes parsing it.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        _seed_random_functions(conn)
        if setup is not None:
            setup(conn)
        _limit(conn, "SQLITE_LIMIT_ATTACHED", 0)
        _limit(conn, "SQLITE_LIMIT_LENGTH", VALUE_MAX_BYTES)
        _limit(conn, "SQLITE_LIMIT_SQL_LENGTH", SQL_MAX_BYTES)
        _limit(conn, "SQLITE_LIMIT_WORKER_THREADS", 0)
        conn.set_authorizer(_authorize)
        conn.deadline = _Deadline()
        conn.counter = StepCounter(conn.deadline)
        conn.path = str(resolved)
        conn.counter.install(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def run(conn: SandboxConnection, sql: str, limits: Limits) -> Outcome:
    """Run one statement on a connection from :func:`connect`; never raises for bad SQL.

    The statement runs with its steps counted one by one; one that takes more than
    :data:`EXACT_STEPS` is stopped there and run again, counted in units of :data:`STEP_UNIT`
    (a Python progress handler on every step would cost ~0.3 us each, as much as the step). The
    deadline counts from the first start; ``elapsed_s`` is the time of the run that answered.
    Under ``limits.count_work`` False it runs once, uncounted (``work`` None)."""
    deadline = conn.deadline
    counter = conn.counter
    start = time.monotonic()
    deadline.at = start + limits.timeout_s
    try:
        if not limits.count_work:  # once, under the counter's handler alone
            counter.budget(limits.work_budget)
            counter.install(conn)
            return _execute(conn, sql, limits, start)
        # A C callable: 0 (go on) EXACT_STEPS times, then 1 (stop); what is left of the
        # budget tells how many steps ran. (The counter, idle meanwhile, holds no budget: the
        # ``finally`` below left it so, and so did ``connect``.)
        budget = itertools.repeat(0, EXACT_STEPS)
        conn.set_progress_handler(itertools.chain(budget, _STOP).__next__, 1)
        outcome = _execute(conn, sql, limits, start)
        # Steps of preparing, running and fetching: all of it happens in this statement.
        left = operator.length_hint(budget)
        if not (left == 0 and outcome.status is Status.ERROR and outcome.error == "interrupted"):
            return replace(outcome, work=EXACT_STEPS - left) if outcome.ok else outcome
        counter.budget(limits.work_budget)  # the budget counts this run's steps alone
        counter.install(conn)
        again = time.monotonic()
        outcome = _execute(conn, sql, limits, start)
        if not outcome.ok:
            return outcome
        # Timed from its own start (r_ves_time reads elapsed_s); the deadline was the first's.
        return replace(outcome, work=counter.steps, elapsed_s=outcome.elapsed_s - (again - start))
    finally:
        deadline.at = float("inf")
        counter.budget(None)
        counter.install(conn)


def _execute(conn: SandboxConnection, sql: str, limits: Limits, start: float) -> Outcome:
    """Execute and fetch ``sql`` once under the connection's current progress handler, its
    random generator started from its one seed (a second run draws the numbers the first did)."""
    cursor = None
    random_seed.reseed(conn.random)
    try:
        cursor = conn.execute(sql)
        if cursor.description is None:  # only comments / empty statements
            return Outcome(Status.NO_SQL, error="no statement to run")
        columns = tuple(d[0] for d in cursor.description)
        return fetch_limited(cursor.fetchmany, columns, limits, start)
    except sqlite3.OperationalError as error:
        if str(error) == "interrupted" and conn.counter.over_budget():
            return over_budget(limits.work_budget or 0, "VM steps", start)
        if str(error) == "interrupted" and time.monotonic() >= conn.deadline.at:
            return stopped(limits.timeout_s, start)
        _raise_if_broken_file(error, conn)
        return _error(error, start)
    except sqlite3.ProgrammingError as error:
        if str(error) == _SEVERAL_STATEMENTS:
            return Outcome(
                Status.ERROR,
                error="several statements: exactly one SQL statement per query is allowed",
                elapsed_s=time.monotonic() - start,
            )
        return _error(error, start)
    except MemoryError:
        # hard_heap_limit surfaces as MemoryError, which is not a sqlite3.Error.
        return out_of_memory(limits, start)
    except Exception as error:  # sqlite3.Error, UnicodeEncodeError of lone surrogates, ...
        _raise_if_broken_file(error, conn)
        return _error(error, start)
    finally:
        if cursor is not None:
            try:
                cursor.close()
            except Exception:
                pass


def _raise_if_broken_file(error: BaseException, conn: SandboxConnection) -> None:
    """EvaluationUnavailable when ``error`` says the database file is damaged or gone."""
    if not isinstance(error, sqlite3.DatabaseError):
        return
    code = getattr(error, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        broken = code & 0xFF in _BROKEN_FILE_CODES and code != _SQLITE_IOERR_NOMEM
    else:
        broken = str(error) in _BROKEN_FILE_MESSAGES
    if broken:
        raise EvaluationUnavailable(
            f"the SQLite database file {conn.path} is damaged or gone: {error} (rebuild the "
            "benchmark's data: `sqlbench-lmeval prepare`)"
        )


def _error(error: BaseException, start: float) -> Outcome:
    message = str(error) or type(error).__name__
    return Outcome(Status.ERROR, error=message, elapsed_s=time.monotonic() - start)


_heap_limit = [0]


def set_heap_limit(limits: Limits) -> None:
    """Assert ``limits.memory_mb`` as SQLite's ``hard_heap_limit``: it is process-wide, so it is
    set before each use, where the limits may have changed since the connection was opened."""
    wanted = int(limits.memory_mb) * MIB
    if _heap_limit[0] != wanted:
        _heap_limit[0] = wanted
        # Any sandboxed connection refuses PRAGMA, so use a throwaway one.
        scratch = sqlite3.connect(":memory:")
        scratch.execute(f"PRAGMA hard_heap_limit = {wanted}")
        scratch.close()


def _version() -> str:
    return sqlite3.sqlite_version


ENGINE = Engine(
    name="sqlite",
    dialect="sqlite",
    server=False,
    connect=connect,
    run=run,
    version=_version,
    build_perturbed=perturbed.build_sqlite,
    process_limits=set_heap_limit,
    error_modules=("sqlite3",),
    stops_at_work_budget=True,
    work_unit=f"VM steps (exact up to {EXACT_STEPS}, then in units of {STEP_UNIT})",
)
