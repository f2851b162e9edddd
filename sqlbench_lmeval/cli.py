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
from sqlbench_lmeval.benchmarks import NAMES as BENCHMARK_NAMES
from sqlbench_lmeval.errors import UserError  # re-exported: commands raise it

__all__ = ["UserError", "build_parser", "main"]


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


def _score_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("benchmark", choices=BENCHMARK_NAMES)
    parser.add_argument("predictions", help='JSONL, one {"id": ..., "prediction": ...} per line')
    parser.add_argument("--output", "-o", required=True, help="where to write the score JSON")
    parser.add_argument("--cache-dir", help="cache root (default: $SQLBENCH_LMEVAL_CACHE)")
    parser.add_argument("--workers", type=int, help="worker processes (default: CPU count)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per query")
    parser.add_argument("--max-rows", type=int, default=10_000, help="rows per result")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


@_register("score", "score a predictions file offline (same numbers as the lm-eval task)")(
    _score_args
)
def _score(args: argparse.Namespace) -> int:
    import json

    from sqlbench_lmeval.execution import Limits
    from sqlbench_lmeval.offline import read_predictions, score_predictions

    predictions = read_predictions(args.predictions)
    result = score_predictions(
        args.benchmark,
        predictions,
        cache_dir=args.cache_dir,
        limits=Limits(timeout_s=args.timeout, max_rows=args.max_rows),
        workers=args.workers,
        progress=not args.no_progress,
    )
    with open(args.output, "w", encoding="utf-8") as out:
        json.dump(result, out, indent=1, ensure_ascii=False, default=str)
        out.write("\n")
    metrics = result["metrics"]
    shown = ", ".join(
        f"{name}={metrics[name]:.4f}" for name in ("ves", "ex", "ex_strict", "ex_set")
    )
    print(f"{args.benchmark}: {metrics['n']} items, {shown}; wrote {args.output}")
    if result["missing_ids"]:
        print(f"{len(result['missing_ids'])} item(s) had no prediction and scored 0")
    return 0


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
