"""Errors the user can act on, and the exit codes of every ``sqlbench-lmeval`` command."""

from __future__ import annotations

import enum
import functools
import os
import sys


class ExitCode(enum.IntEnum):
    """What a ``sqlbench-lmeval`` command's exit status says: the one list of them, which
    docs/cli.md#exit-codes renders as its table (``docs/gen_cli.py``). Each code carries the
    commands that use it and what it means. 4 is not used: ``verify`` exited 4 for "verified
    with findings" before, and a script written for that must not read another verdict into it.

    >>> ExitCode.REJECTED, int(ExitCode.UNATTESTED), ExitCode.REJECTED.commands
    (<ExitCode.REJECTED: 6>, 5, '`verify`')
    """

    def __new__(cls, value: int, commands: str, meaning: str):
        member = int.__new__(cls, value)
        member._value_ = value
        member.commands = commands
        member.meaning = meaning
        return member

    DONE = (
        0,
        "every command",
        "done; for `verify`, every run given is verified, with findings or without",
    )
    CRASH = (
        1,
        "every command",
        "a crash: an exception nobody planned for, with Python's traceback (a fault of "
        "sqlbench-lmeval or of the machine; report it)",
    )
    USER_ERROR = (
        2,
        "every command (and `lm_eval` on our tasks' data hooks)",
        "a usage or input error (a bad option, a missing or damaged file, a run folder that "
        "cannot be read): one line on stderr, nothing done, nothing written",
    )
    UNAVAILABLE = (
        3,
        "`score`, `gold`, `verify`, `leaderboard`",
        "the evaluation itself cannot run (a database, server, worker or cache that fails): "
        "nothing scored, no output file ([when the evaluation itself fails](failures.md))",
    )
    UNATTESTED = (
        5,
        "`verify`",
        "no run is rejected and one is unattested: a predictions file, a `score` output or a "
        "samples log without prompts, whose outputs nothing shows how they were made",
    )
    REJECTED = (
        6,
        "`verify`",
        "a run is rejected: its protocol is not the benchmark's, or its claims do not stand "
        "([verdicts](verify.md#verdicts))",
    )


class UserError(Exception):
    """A problem the user can fix (bad input file, missing data): printed without a traceback.

    The CLI prints it as ``sqlbench-lmeval COMMAND: error: MESSAGE`` and exits with status 2
    (:attr:`ExitCode.USER_ERROR`).
    """


class DriverMissing(UserError, ImportError):
    """A server engine was asked for and its driver (an optional extra) is not installed.

    A :class:`UserError`: the command stops before any work with one line naming the extra to
    install. Also an ``ImportError``, which is what importing the engine's module would have
    raised: code that asks whether an engine is usable here catches that.
    """


def exits_on_user_error(hook):
    """For an lm-eval ``custom_dataset`` hook: a :class:`UserError` (a missing driver, a LogicCat
    source that cannot be read, a damaged bundle) stops the program with its one line on stderr
    and exit status 2, as the ``sqlbench-lmeval`` commands do. lm-eval would show it at the end
    of a traceback through its task loader (67 lines), which hides the one thing to do (install
    the extra, set the variable) among dozens of lines."""

    @functools.wraps(hook)
    def wrapper(*args, **kwargs):
        try:
            return hook(*args, **kwargs)
        except UserError as error:
            program = _program_name()
            print(f"{program}: error: {error}" if program else f"error: {error}", file=sys.stderr)
            raise SystemExit(int(ExitCode.USER_ERROR)) from None

    return wrapper


def _program_name() -> str:
    """What the user ran: ``lm_eval`` for the script and for ``python -m lm_eval`` alike."""
    path = sys.argv[0] if sys.argv and sys.argv[0] not in ("", "-c") else ""
    name = os.path.basename(path)
    return os.path.basename(os.path.dirname(path)) if name == "__main__.py" else name
