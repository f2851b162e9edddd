"""The ``sqlbench-lmeval`` command.

Each subcommand is a thin shell over a library function of the same name, so everything the
CLI does can be done from Python too. Imports of heavy modules happen inside the handlers:
``sqlbench-lmeval --help`` must stay instant and never construct lm-eval's TaskManager.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from sqlbench_lmeval import __version__

BENCHMARK_NAMES = ("logiccat", "tpcds")


def _tasks_dir(args: argparse.Namespace) -> int:
    from sqlbench_lmeval.paths import tasks_dir

    print(tasks_dir())
    return 0


# Subcommands are added by ``_register`` calls below; each entry is (name, help, add_args, handler).
_COMMANDS: list[tuple[str, str, Callable[[argparse.ArgumentParser], None], Callable]] = []


def _register(name: str, help: str):
    def wrap(add_args):
        def deco(handler):
            _COMMANDS.append((name, help, add_args, handler))
            return handler

        return deco

    return wrap


_register("tasks-dir", "print the folder of our lm-eval tasks (for --include_path)")(
    lambda p: None
)(_tasks_dir)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sqlbench-lmeval",
        description="Text-to-SQL benchmarks for lm-evaluation-harness: build data, score, report.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, help_text, add_args, handler in _COMMANDS:
        command = sub.add_parser(name, help=help_text, description=help_text)
        add_args(command)
        command.set_defaults(handler=handler)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except UserError as error:
        print(f"sqlbench-lmeval {args.command}: error: {error}", file=sys.stderr)
        return 2


class UserError(Exception):
    """A problem the user can fix (bad input file, missing data); printed without a traceback."""
