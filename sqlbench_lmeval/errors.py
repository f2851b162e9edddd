"""Errors the user can act on."""

from __future__ import annotations

import functools
import os
import sys


class UserError(Exception):
    """A problem the user can fix (bad input file, missing data): printed without a traceback.

    The CLI prints it as ``sqlbench-lmeval COMMAND: error: MESSAGE`` and exits with status 2.
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
            raise SystemExit(2) from None

    return wrapper


def _program_name() -> str:
    """What the user ran: ``lm_eval`` for the script and for ``python -m lm_eval`` alike."""
    path = sys.argv[0] if sys.argv and sys.argv[0] not in ("", "-c") else ""
    name = os.path.basename(path)
    return os.path.basename(os.path.dirname(path)) if name == "__main__.py" else name
