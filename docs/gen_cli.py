"""Write docs/cli.md, the command-line reference, from the ``--help`` of every command.

Run ``python regenerate.py`` (every generated file; or this script alone) after changing a
command or an option of ``sqlbench-lmeval``; ``tests/docs/test_docs.py`` and ``regenerate.py
--check`` fail while docs/cli.md differs from what this script writes. The help is
formatted at a fixed width (``COLUMNS``), so the page does not depend on the terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parent / "cli.md"
WIDTH = "100"

HEADER = """# Command-line reference

Generated from `sqlbench-lmeval --help` and the `--help` of each command by
`python regenerate.py` (`docs/gen_cli.py`); CI fails when this page and the program differ. What the
commands do, with examples: [scoring files offline](score.md), [reports and the
explorer](reports.md), [verify and leaderboard](verify.md), [servers](mysql.md). What each
command's exit status means: [exit codes](#exit-codes).
"""

EXIT_CODES = """## Exit codes

Every command's, from `sqlbench_lmeval.errors.ExitCode` (the one list in the code). `verify`
exits with the code of the worst verdict among the runs it was given (rejected, then
unattested); 4 is not used (`verify` exited 4 for "verified with findings" before, and a script
written for that must not read another verdict into it). A command interrupted by Ctrl-C ends
as any program killed by SIGINT (130 in a shell). One that exits 2 or 3, or is interrupted,
removes the `--output` folder it created ([when the evaluation itself fails](failures.md)).

| exit code | name | commands | meaning |
| --- | --- | --- | --- |
"""


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands of ``parser`` by name, in the order ``--help`` lists them."""
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices.items())


def exit_codes() -> str:
    """The exit-code section: one row per ``ExitCode``."""
    from sqlbench_lmeval.errors import ExitCode

    rows = [f"| {int(c)} | `{c.name}` | {c.commands} | {c.meaning} |\n" for c in ExitCode]
    return EXIT_CODES + "".join(rows)


def render() -> str:
    """The page's text."""
    from sqlbench_lmeval.cli import build_parser

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH  # argparse wraps help at the terminal's width
    try:
        parser = build_parser()
        parts = [HEADER, exit_codes()]
        parts += ["## sqlbench-lmeval\n", "```text\n" + parser.format_help() + "```\n"]
        for name, command in commands(parser).items():
            parts += [f"## {name}\n", "```text\n" + command.format_help() + "```\n"]
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous
    return "\n".join(parts)


def main() -> int:
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
