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
explorer](reports.md), [verify and leaderboard](verify.md), [servers](mysql.md). Exit codes: 0
done, 2 a usage or input error, 3 the evaluation itself cannot run
([when the evaluation itself fails](failures.md)); `verify` exits 1 when a run is rejected.
"""


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands of ``parser`` by name, in the order ``--help`` lists them."""
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices.items())


def render() -> str:
    """The page's text."""
    from sqlbench_lmeval.cli import build_parser

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH  # argparse wraps help at the terminal's width
    try:
        parser = build_parser()
        parts = [HEADER, "## sqlbench-lmeval\n", "```text\n" + parser.format_help() + "```\n"]
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
