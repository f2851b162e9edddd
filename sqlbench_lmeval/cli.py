"""The ``sqlbench-lmeval`` command: each subcommand a thin shell over a library function of the
same name, heavy imports inside the handlers so that ``--help`` stays instant
(docs/layout.md#the-command-line; the exit codes: ``errors.ExitCode``, docs/cli.md#exit-codes)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from sqlbench_lmeval import __version__, benchmarks
from sqlbench_lmeval.benchmarks import names as benchmark_names
from sqlbench_lmeval.errors import (
    ExitCode,
    UserError,  # re-exported: commands raise it
)
from sqlbench_lmeval.execution import engines
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable

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


def _docs_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "page",
        nargs="?",
        help="a page, as outputs cite it (scoring, scoring.md, docs/scoring.md#data-dependence); "
        "without it, the folder of every page an output names as docs/...",
    )


@_register("docs", "print where the installed documentation (or one page of it) is")(_docs_args)
def _docs(args: argparse.Namespace) -> int:
    import difflib

    from sqlbench_lmeval.paths import docs_dir

    folder = docs_dir()
    if args.page is None:
        print(folder)
        return 0
    name = args.page.split("#", 1)[0].removeprefix("docs/").removesuffix(".md")
    page = folder / f"{name}.md"
    if not page.is_file():
        pages = sorted(path.stem for path in folder.glob("*.md"))
        close = difflib.get_close_matches(name, pages, n=1)
        guess = f"; did you mean {close[0]!r}?" if close else "."
        raise UserError(f"no page {args.page!r} in {folder}{guess} Pages: {', '.join(pages)}")
    print(page)
    return 0


def _score_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "benchmark",
        metavar="TASK",
        help=f"a benchmark ({', '.join(benchmark_names())}: all its items) or one of our tasks "
        "(logiccat_mini, tpcds_postgres, ...: that task's items and prompted dialect)",
    )
    parser.add_argument(
        "predictions",
        help='JSONL, one {"id": ..., "prediction": ...} per line (a retried answer: '
        '{"id": ..., "attempts": [...]} or the sqlbench-repair envelope as prediction); or an '
        "lm-eval --log_samples output (folder, model folder or samples file): its logged task "
        "and exactly its logged items (a --limit run scores its own items only)",
    )
    parser.add_argument("--output", "-o", required=True, help="where to write the score JSON")
    parser.add_argument("--cache-dir", help="cache root (default: $SQLBENCH_LMEVAL_CACHE)")
    _run_options(parser, "the engine's")
    _gold_options(parser, exclude=True)
    parser.add_argument(
        "--preview-rows",
        type=int,
        default=5,
        help="result rows of gold and prediction kept per item for the explorer (default: 5)",
    )
    parser.add_argument(
        "--samples",
        action="store_true",
        help="several sampled answers per id: a line's prediction may be a list of outputs, and "
        "repeated lines of an id add theirs in file order; reports ex_maj, pass_at_k, ves_mean, "
        "ex_mean as the *_sc tasks do (ves/ex: the first sample's)",
    )
    parser.add_argument(
        "--r-ves-time",
        type=int,
        nargs="?",
        const=100,
        metavar="N",
        help="also report r_ves_time, BIRD's time-based R-VES: each correct answer and its gold "
        "run N times (default 100), timed on this machine (not reproducible elsewhere; r_ves, "
        "on counted work, is); single answers only",
    )
    parser.add_argument(
        "--price",
        metavar="IN,OUT",
        help="prices of a million prompt and of a million completion tokens: a metered run's "
        "tokens (lm_eval --model sqlbench-metered) are also given as spend, per item and per "
        "task, in the prices' currency (never guessed: without --price, tokens only)",
    )
    parser.add_argument(
        "--dialect",
        help="sqlglot dialect the predictions are written in (e.g. postgres, mysql); they are "
        "translated to the engine's before they run (default: the engine's, sqlite for "
        "logiccat, duckdb for tpcds)",
    )
    _data_options(parser)


def _run_options(parser: argparse.ArgumentParser, timeout_default: str) -> None:
    """How answers run: workers, the per-query limits, progress bars (score and verify)."""
    parser.add_argument("--workers", type=int, help="worker processes (default: CPU count)")
    parser.add_argument(
        "--timeout",
        type=float,
        help=f"seconds per query (default: {timeout_default}: 10, or 60 on postgres)",
    )
    parser.add_argument("--max-rows", type=int, default=10_000, help="rows per result")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _gold_options(parser: argparse.ArgumentParser, exclude: bool) -> None:
    """Gold's own time limit, and (``exclude``) leaving out items whose gold does not finish."""
    parser.add_argument(
        "--gold-timeout",
        type=float,
        metavar="SECONDS",
        help="seconds for gold that did not finish within --timeout, run again on a fresh "
        "worker (default: the larger of 60 and --timeout); gold that still does not finish "
        "stops the run, naming the items",
    )
    if exclude:
        parser.add_argument(
            "--exclude-unfinished-gold",
            action="store_true",
            help="instead of stopping, leave items whose gold does not finish out of every mean "
            "(status excluded; counted as n_excluded, never scored 0)",
        )


def _gold_limits(limits, args: argparse.Namespace):
    """``limits`` with the gold options of ``args`` (``_gold_options``)."""
    import dataclasses

    return dataclasses.replace(
        limits,
        gold_timeout_s=args.gold_timeout,
        exclude_unfinished_gold=getattr(args, "exclude_unfinished_gold", False),
    )


def _data_options(parser: argparse.ArgumentParser) -> None:
    """Options that choose a benchmark's data (passed on to its ``load_items``)."""
    parser.add_argument(
        "--source",
        help="logiccat: upstream checkout or folder like shared/logiccat, used if the bundle must "
        "be built (default: $SQLBENCH_LMEVAL_LOGICCAT_SOURCE, else download the pinned archive)",
    )
    parser.add_argument(
        "--scale-factor", type=float, help="tpcds: TPC-DS scale factor of the database (default 1)"
    )
    parser.add_argument(
        "--engine",
        choices=engines.names(),
        help="logiccat: sqlite (embedded, default) or mysql (a MySQL-protocol server); "
        "tpcds: duckdb (embedded, default) or postgres (a PostgreSQL server)",
    )
    parser.add_argument(
        "--url",
        help="the server of --engine mysql (logiccat: mysql://user:pass@host:port, default "
        "$SQLBENCH_LMEVAL_MYSQL_URL) or --engine postgres (tpcds: "
        "postgresql://user:pass@host:port/db, default $SQLBENCH_LMEVAL_POSTGRES_URL); prepare "
        "needs an admin account; score/gold need a read-only one (the reader prepare creates; "
        "on the machine that ran prepare it is the default) and refuse any account with more "
        "than SELECT",
    )


@contextlib.contextmanager
def _json_output(path: str) -> Iterator:
    """``path`` opened for JSON written with ``ensure_ascii=False``, all or nothing: the text
    goes to a temporary file beside it, renamed to ``path`` only when the block ends without an
    error, so an interrupted command never leaves a half-written file.

    A lone surrogate (a raw model output may hold one) cannot be UTF-8: ``backslashreplace``
    writes it as the escape \\udXXX, which only occurs inside a JSON string, where it is the
    JSON escape of that very character, so the file reads back to the same text.
    """
    folder, name = os.path.split(os.path.abspath(path))
    temporary = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8", errors="backslashreplace") as handle:
            yield handle
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)


def _data_kwargs(args: argparse.Namespace) -> dict:
    options = {
        "source": args.source,
        "scale_factor": args.scale_factor,
        "engine": args.engine,
        "url": args.url,
    }
    return {name: value for name, value in options.items() if value is not None}


@_register("score", "score a predictions file offline (same numbers as the lm-eval task)")(
    _score_args
)
def _score(args: argparse.Namespace) -> int:

    from sqlbench_lmeval.execution import Limits
    from sqlbench_lmeval.offline import read_predictions, score_group, score_predictions

    benchmark, task, members = _score_target(args.benchmark)
    ids = None
    options = {"dialect": args.dialect, **_data_kwargs(args)}
    group = None  # the logged tasks of an lm-eval group run (``--tasks logiccat``)
    limit = None  # how --limit cut the lm-eval run scored ("--limit 30"), said wherever n is
    if _is_lmeval_output(args.predictions):
        from sqlbench_lmeval.report.metadata import run_limit
        from sqlbench_lmeval.submission.logged import logged_runs

        limit = run_limit(args.predictions)
        runs = logged_runs(args.predictions, args.benchmark)
        logged = runs[0]
        benchmark, task, predictions = logged.benchmark, logged.task, logged.predictions
        ids = list(predictions)  # exactly the items the run logged (e.g. a --limit run)
        options = {**logged.options, **{k: v for k, v in options.items() if v is not None}}
        if len(runs) > 1:
            group = {run.task: run.predictions for run in runs}
        if logged.incomplete:
            print(f"sqlbench-lmeval score: warning: {logged.incomplete}", file=sys.stderr)
    else:
        predictions = read_predictions(args.predictions, samples=args.samples, name=args.benchmark)
        if members:  # a group of ours other than a benchmark's whole (logiccat_test)
            from sqlbench_lmeval.offline import group_predictions

            data = {k: v for k, v in options.items() if v is not None}
            group = group_predictions(args.benchmark, predictions, cache_dir=args.cache_dir, **data)
    price = _price(args.price)
    common = {
        "cache_dir": args.cache_dir,
        "limits": _gold_limits(
            Limits(timeout_s=_timeout(args, options.get("engine")), max_rows=args.max_rows), args
        ),
        "workers": args.workers,
        "progress": not args.no_progress,
        "preview_rows": args.preview_rows,
    }
    timed = args.r_ves_time
    if group is not None:
        every_item = not _is_lmeval_output(args.predictions)  # a file's missing ids score 0
        result = score_group(
            args.benchmark, group, every_item=every_item, r_ves_time=timed, **common, **options
        )
    else:
        result = score_predictions(
            benchmark, predictions, task=task, ids=ids, r_ves_time=timed, **common, **options
        )
    if price is not None:
        _add_spend(result, price)
    if limit is not None:
        result["limit"] = limit  # the report marks the run's name with it, as an lm-eval run's
    with _json_output(args.output) as out:
        # json.dumps without indent uses the C encoder; json.dump and indent are pure Python.
        out.write(json.dumps(result, ensure_ascii=False, default=str))
        out.write("\n")
    # Imported here, as scoring is: ``sqlbench-lmeval --help`` and the light commands start
    # without it.
    from sqlbench_lmeval.scoring.data_dependence import (
        CHANGED,
        DATA_DEPENDENCE,
        DIFFERS,
        NO_TABLE,
        NOT_TESTED,
        UNCHANGED,
        UNDECIDABLE,
    )
    from sqlbench_lmeval.scoring.metrics import EX_READS_DATA, names, not_defined

    metrics = result["metrics"]
    # The registry's summary metrics (``Metric.in_summary``) the run has, in registry order.
    shown = ", ".join(
        f"{name}={metrics[name]:.4f}" for name in names(in_summary=True) if name in metrics
    )
    dialect = result["prediction_dialect"]
    # A --limit run's numbers are over the items it answered, not over its tasks: said here.
    cut = ""
    if limit is not None:
        cut = f" (the run used {limit})" if limit.startswith("--") else f" (a partial run: {limit})"
    print(f"{result['task']} ({dialect}): {metrics['n']} items{cut}, {shown}; wrote {args.output}")
    if result.get("gold_note"):
        print(f"{result['task']}: {result['gold_note']}")
    for name, task_metrics in (result.get("tasks") or {}).items():
        # A group's tasks, one line each, as lm-eval's table lists them under the group.
        each = ", ".join(
            f"{metric}={task_metrics[metric]:.4f}"
            for metric in names(in_summary=True)
            if metric in task_metrics
        )
        print(f"  {name}: {task_metrics['n']} items, {each}")
    from sqlbench_lmeval.scoring.verdicts import LOOP_ADVICE, TRUNCATION_ADVICE, VERDICTS

    counts = metrics.get("verdict_counts") or {}
    print("verdicts: " + ", ".join(f"{v} {counts[v]}" for v in VERDICTS if counts.get(v)))
    if result["missing_ids"]:
        print(f"{len(result['missing_ids'])} item(s) had no prediction and scored 0")
    from sqlbench_lmeval.scoring.timeouts import timed_out_line

    late = timed_out_line(result["items"])
    if late:
        print(late)
    if metrics.get("n_excluded"):
        ids = ", ".join(str(i) for i in metrics["excluded_ids"])
        print(
            f"{metrics['n_excluded']} item(s) left out of every number: their gold did not "
            f"finish ({ids}); {metrics['n']} items counted"
        )
    loops = metrics.get("n_truncated_loops", 0)
    if metrics.get("n_truncated", 0) > loops:
        print(f"{metrics['n_truncated'] - loops} item(s) were truncated: {TRUNCATION_ADVICE}")
    if loops:
        print(f"{loops} truncated item(s) end in a repetition loop: {LOOP_ADVICE}")
    for name in names(in_summary=True):
        # A metric the engine cannot give (r_ves where it counts no work) is said to be so,
        # never shown as a 0.
        reason = None if name in metrics else not_defined(name, result["engine"])
        if reason is not None and result["items"]:
            print(f"{name}: {reason}")
    if metrics.get("n_reads_no_table"):
        print(
            f"{metrics['n_reads_no_table']} answer(s) do not read the data (constants, also "
            f"dressed up as queries): EX counts them, {EX_READS_DATA}="
            f"{metrics[EX_READS_DATA]:.4f} and r_ves do not"
        )
    if metrics.get("cost"):
        print(_cost_line(metrics["cost"]))
    # How each answer's reading of the data was decided (docs/scoring.md, "Data dependence").
    decided = Counter(item.get(DATA_DEPENDENCE) for item in result["items"])
    if decided.keys() - {None}:
        values = (NO_TABLE, DIFFERS, UNCHANGED, CHANGED, UNDECIDABLE, NOT_TESTED)
        print("data dependence: " + ", ".join(f"{v} {decided[v]}" for v in values if decided[v]))
    return 0


def _score_target(name: str) -> tuple[str, str | None, tuple[str, ...] | None]:
    """(benchmark, task or None for the whole benchmark or a group, the group's tasks or None)
    that ``score NAME`` scores: a group of ours other than a benchmark's whole
    (``logiccat_test``) names its tasks, anything else is ``offline.task_target``'s."""
    from sqlbench_lmeval.lmeval.task_specs import task_groups, task_spec
    from sqlbench_lmeval.offline import task_target

    members = None if name in benchmark_names() else task_groups().get(name)
    if members:
        return task_spec(members[0]).benchmark, None, members
    return (*task_target(name), None)


def _price(text: str | None) -> tuple[float, float] | None:
    """``--price IN,OUT`` read (a UserError says what is wrong with it)."""
    if text is None:
        return None
    from sqlbench_lmeval.scoring.cost import parse_price

    try:
        return parse_price(text)
    except ValueError as error:
        raise UserError(str(error)) from None


def _add_spend(result: dict, price: tuple[float, float]) -> None:
    """The spend at ``price`` of every item, of the run and of each task of a group."""
    from sqlbench_lmeval.scoring.cost import priced

    priced(result["items"], result["metrics"].get("cost"), price)
    for task_metrics in (result.get("tasks") or {}).values():
        priced([], task_metrics.get("cost"), price)


def _cost_line(cost: dict) -> str:
    """``score``'s line on what a metered run cost (docs/cost.md)."""

    def amount(value, digits=0) -> str:
        return "unknown" if value is None else f"{value:,.{digits}f}"

    sources = ", ".join(f"{name} {n}" for name, n in sorted(cost["tokens_from"].items()))
    line = (
        f"cost: {cost['n_metered']} items metered ({cost['requests']} requests), tokens counted "
        f"for {cost['n_counted']} ({sources}): prompt {amount(cost['prompt_tokens'])} "
        f"(median {amount(cost['median_prompt_tokens'], 1)}), completion "
        f"{amount(cost['completion_tokens'])} (median "
        f"{amount(cost['median_completion_tokens'], 1)}); latency {amount(cost['latency_s'], 2)} s "
        f"(median {amount(cost['median_latency_s'], 2)} s)"
    )
    if cost.get("tokenizer"):  # which tokenizer counted (docs/cost.md)
        line += f"; counted by tokenizer {cost['tokenizer']}"
    if "spend" in cost:
        prices = cost["price_per_million"]
        line += (
            f"; spend {cost['spend']:.4f} at {prices['prompt_tokens']:g}/"
            f"{prices['completion_tokens']:g} per million tokens"
        )
    return line


def _is_lmeval_output(path: str) -> bool:
    """An lm-eval --output_path folder, model folder, samples or results file."""

    candidate = Path(path)
    if candidate.is_dir():
        return True
    return candidate.name.startswith(("samples_", "results_"))


def _timeout(args: argparse.Namespace, engine: str | None = None) -> float:
    """``--timeout``, else the default time limit of the engine (``engine``: the one a logged
    run used, else ``--engine``)."""
    from sqlbench_lmeval.execution.runner import default_timeout

    timeout = getattr(args, "timeout", None)
    return default_timeout(engine or args.engine) if timeout is None else timeout


def _prepare_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("benchmark", choices=benchmark_names())
    parser.add_argument("--cache-dir", help="cache root (default: $SQLBENCH_LMEVAL_CACHE)")
    _data_options(parser)
    parser.add_argument("--force", action="store_true", help="logiccat: rebuild even if cached")
    parser.add_argument(
        "--reload",
        action="store_true",
        help="--engine mysql (logiccat) or postgres (tpcds): load the data again although the "
        "server already holds this dataset version (default: verify it and load nothing)",
    )
    parser.add_argument(
        "--rotate-reader",
        action="store_true",
        help="--engine mysql (logiccat) or postgres (tpcds): give the read-only account a new "
        "password (default: keep it; every evaluating machine then needs the new option or "
        "password file)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        help="processes that run the gold queries (default: CPU count)",
    )


@_register("prepare", "build a benchmark's data into the cache ahead of time")(_prepare_args)
def _prepare(args: argparse.Namespace) -> int:
    summary = benchmarks.get(args.benchmark).prepare(
        args.cache_dir,
        force=args.force,
        reload=args.reload,
        rotate_reader=args.rotate_reader,
        workers=args.workers,
        **_data_kwargs(args),
    )
    print(summary)
    return 0


def _gold_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("benchmark", choices=benchmark_names())
    parser.add_argument("--output", "-o", required=True, help="JSONL file, one line per item")
    parser.add_argument("--cache-dir", help="cache root (default: $SQLBENCH_LMEVAL_CACHE)")
    parser.add_argument("--workers", type=int, help="worker processes (default: CPU count)")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    _data_options(parser)


@_register("gold", "run every gold query and write its result (JSONL), e.g. to audit gold")(
    _gold_args
)
def _gold(args: argparse.Namespace) -> int:

    from sqlbench_lmeval.execution import Limits
    from sqlbench_lmeval.offline import gold_lines

    lines = gold_lines(
        args.benchmark,
        cache_dir=args.cache_dir,
        limits=Limits(timeout_s=_timeout(args)),
        workers=args.workers,
        progress=not args.no_progress,
        **_data_kwargs(args),
    )
    with _json_output(args.output) as out:
        for line in lines:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"{args.benchmark}: gold results of {len(lines)} items written to {args.output}")
    return 0


def _fidelity_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("benchmark", choices=["logiccat"])
    parser.add_argument(
        "--output",
        "-o",
        help="JSONL file, one line per item with its verdicts (a .md file: a markdown table of "
        "the items some pair disagrees on)",
    )
    parser.add_argument(
        "--reference",
        help="a MariaDB reference run of the gold (default: $SQLBENCH_LMEVAL_MARIADB_REFERENCE); "
        "adds server_vs_reference and sqlite_vs_reference",
    )
    parser.add_argument("--cache-dir", help="cache root (default: $SQLBENCH_LMEVAL_CACHE)")
    parser.add_argument("--source", help="logiccat: upstream folder, if the bundle must be built")
    parser.add_argument("--url", help="the prepared server (default: its read-only account)")
    parser.add_argument("--workers", type=int, help="worker processes (default: CPU count)")
    parser.add_argument(
        "--timeout",
        type=float,
        help="seconds per gold query on each engine (default: 10); gold stopped by it counts "
        "as not run on that engine",
    )


@_register(
    "fidelity",
    "LogicCat gold on SQLite vs on the MySQL server (and a reference run), item by item",
)(_fidelity_args)
def _fidelity(args: argparse.Namespace) -> int:
    from sqlbench_lmeval.execution import Limits
    from sqlbench_lmeval.logiccat.cross_engine import fidelity_command

    comparison = fidelity_command(
        url=args.url,
        reference=args.reference,
        cache_dir=args.cache_dir,
        source=args.source,
        workers=args.workers,
        output=args.output,
        limits=Limits() if args.timeout is None else Limits(timeout_s=args.timeout),
    )
    print(comparison.summary())
    if args.output:
        print(f"item-by-item listing written to {args.output}")
    return 0


def _complexity_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "benchmarks",
        nargs="*",
        metavar="WORKLOAD",
        help=f"any of {', '.join(benchmark_names())} (its gold SQL), or a file of SQL queries "
        '(one per line, or JSONL with a "sql" field; NAME=PATH names it)',
    )
    parser.add_argument("--cache-dir", help="cache root (default: $SQLBENCH_LMEVAL_CACHE)")
    parser.add_argument(
        "--dialect", default="", help="sqlglot dialect of SQL files (default: generic SQL)"
    )
    parser.add_argument(
        "--output",
        "-o",
        help="also write the radar chart (paper Fig. 2, relative to the first workload) and "
        "count histograms (Fig. 4 style) as PNGs into this folder",
    )


@_register(
    "complexity",
    "mean complexity counts per workload (gold SQL or SQL file); --output draws Figs. 2 and 4",
)(_complexity_args)
def _complexity(args: argparse.Namespace) -> int:
    from sqlbench_lmeval.report.complexity import workloads_complexity
    from sqlbench_lmeval.sql.workloads import format_complexity_table

    workloads = workloads_complexity(
        args.benchmarks or benchmark_names(), cache_dir=args.cache_dir, dialect=args.dialect
    )
    print(format_complexity_table(workloads))
    if args.output:
        from sqlbench_lmeval.report.complexity import (
            from_workload_complexity,
            write_complexity_plots,
        )

        for path in write_complexity_plots(from_workload_complexity(workloads), args.output):
            print(f"wrote {path}")
    return 0


def _runs_argument(parser: argparse.ArgumentParser) -> None:
    """The runs ``report`` and ``explore`` read."""
    parser.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="an lm-eval --output_path folder (or its model subfolder) written with "
        "--log_samples, or a `sqlbench-lmeval score` JSON; NAME=PATH names the run",
    )


def _report_args(parser: argparse.ArgumentParser) -> None:
    _runs_argument(parser)
    parser.add_argument("--output", "-o", required=True, help="folder for report.md/.html + PNGs")
    parser.add_argument(
        "--resamples", type=int, default=2_000, help="bootstrap resamples (default: 2000)"
    )
    parser.add_argument("--seed", type=int, help="bootstrap seed (default: a fixed one)")


@_register("report", "compare model runs: tables with bootstrap CIs, paired tests, charts")(
    _report_args
)
def _report(args: argparse.Namespace) -> int:
    from sqlbench_lmeval.report import read_runs, write_report
    from sqlbench_lmeval.report.stats import SEED

    if args.resamples < 100:
        raise UserError("--resamples must be at least 100")
    runs = read_runs(args.runs)
    for run in runs:
        for note in run.notes:
            print(f"sqlbench-lmeval report: warning: run {run.name}: {note}", file=sys.stderr)
    files = write_report(
        runs, args.output, resamples=args.resamples, seed=SEED if args.seed is None else args.seed
    )
    names = ", ".join(run.name for run in runs)
    print(f"report on {names}: wrote {files.markdown}, {files.html} and {len(files.images)} PNGs")
    return 0


def _explore_args(parser: argparse.ArgumentParser) -> None:
    _runs_argument(parser)
    parser.add_argument("--output", "-o", required=True, help="folder for explorer.html")
    parser.add_argument(
        "--audit-gold",
        metavar="FILE",
        help="an audit-gold.json (sqlbench-lmeval audit-gold) whose suspect items are marked",
    )


@_register("explore", "write explorer.html: every item, each run's verdict, filters, SQL diffs")(
    _explore_args
)
def _explore(args: argparse.Namespace) -> int:
    from sqlbench_lmeval.report import read_runs
    from sqlbench_lmeval.report.explorer import write_explorer

    suspects = None
    if args.audit_gold is not None:
        from sqlbench_lmeval.audit.pages import read_suspects

        suspects = read_suspects(args.audit_gold)
    runs = read_runs(args.runs)
    path = write_explorer(runs, args.output, suspects)
    print(f"explorer on {', '.join(run.name for run in runs)}: wrote {path}")
    return 0


def _gold_card_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "task",
        metavar="TASK",
        help=f"a benchmark ({', '.join(benchmark_names())}: all its items) or one of our tasks",
    )
    parser.add_argument(
        "--output", "-o", required=True, help="folder for gold-card.md, .html and .json"
    )
    parser.add_argument("--cache-dir", help="cache root (default: $SQLBENCH_LMEVAL_CACHE)")
    parser.add_argument(
        "--dialect",
        help="the dialect the published gold is read as (default: the task's prompted dialect)",
    )
    _run_options(parser, "the engine's")
    _gold_options(parser, exclude=False)
    _data_options(parser)


@_register(
    "gold-card",
    "the ceiling of every metric (gold as the answer), gold health, reference points; writes "
    "gold-card.md/.html/.json",
)(_gold_card_args)
def _gold_card(args: argparse.Namespace) -> int:
    from sqlbench_lmeval.audit.card import gold_card
    from sqlbench_lmeval.audit.pages import write_card
    from sqlbench_lmeval.execution import Limits

    options = _data_kwargs(args)
    limits = Limits(timeout_s=_timeout(args, options.get("engine")), max_rows=args.max_rows)
    card = gold_card(
        args.task,
        dialect=args.dialect,
        cache_dir=args.cache_dir,
        limits=_gold_limits(limits, args),
        workers=args.workers,
        progress=not args.no_progress,
        **options,
    )
    paths = write_card(card, Path(args.output))
    ceiling = ", ".join(f"{name}={value:.4f}" for name, value in card["ceiling"].items())
    print(
        f"gold card of {card['task']} ({card['engine']}, read as {card['dialect']}): {ceiling}; "
        f"{len(card['unhealthy'])} unhealthy gold; wrote {paths['md']}, {paths['html']}, "
        f"{paths['json']}"
    )
    return 0


def _audit_gold_args(parser: argparse.ArgumentParser) -> None:
    _runs_argument(parser)
    parser.add_argument(
        "--output", "-o", required=True, help="folder for audit-gold.md, .html, .csv and .json"
    )
    parser.add_argument(
        "--agree",
        type=int,
        default=3,
        metavar="K",
        help="runs of different models that must return one and the same other result (default 3)",
    )
    parser.add_argument("--cache-dir", help="cache root (default: $SQLBENCH_LMEVAL_CACHE)")
    _run_options(parser, "the engine's")
    _data_options(parser)


@_register(
    "audit-gold",
    "items no run matches while K runs of different models agree on another result, and unhealthy "
    "gold; writes audit-gold.md/.html/.csv/.json (changes no score)",
)(_audit_gold_args)
def _audit_gold(args: argparse.Namespace) -> int:
    from sqlbench_lmeval.audit.pages import write_audit
    from sqlbench_lmeval.audit.suspects import audit_gold
    from sqlbench_lmeval.execution import Limits
    from sqlbench_lmeval.report import read_runs

    if args.agree < 2:
        raise UserError("--agree must be at least 2: one run alone is no evidence against gold")
    runs = read_runs(args.runs)
    options = _data_kwargs(args)
    audit = audit_gold(
        runs,
        agree=args.agree,
        cache_dir=args.cache_dir,
        limits=Limits(timeout_s=_timeout(args, options.get("engine")), max_rows=args.max_rows),
        workers=args.workers,
        progress=not args.no_progress,
        **options,
    )
    paths = write_audit(audit, Path(args.output))
    print(
        f"audit-gold of {', '.join(run.name for run in runs)}: {len(audit['suspect'])} suspect "
        f"item(s), {len(audit['unhealthy'])} with unhealthy gold; wrote {paths['md']}, "
        f"{paths['csv']}, {paths['json']}"
    )
    return 0


def _verify_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="an lm-eval --output_path folder (or model folder) written with --log_samples, a "
        "`score` output, or a predictions JSONL (with --task); NAME=PATH names the run",
    )
    parser.add_argument("--output", "-o", required=True, help="folder for the reports")
    parser.add_argument("--task", help="the task of a predictions file (or one task of a run)")
    _verify_options(parser)
    _gold_options(parser, exclude=False)


def _verify_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-dir", help="cache root (default: $SQLBENCH_LMEVAL_CACHE)")
    _data_options(parser)
    _run_options(parser, "the run's engine's")


@_register(
    "verify",
    "verify runs from their raw outputs: completeness, provenance, settings, re-scoring, "
    "integrity; a verdict and a digest per run. Exit status, the worst run's: "
    f"{int(ExitCode.DONE)} verified (with findings or without), {int(ExitCode.UNATTESTED)} "
    f"unattested, {int(ExitCode.REJECTED)} rejected; every code: docs/cli.md, Exit codes",
)(_verify_args)
def _verify(args: argparse.Namespace) -> int:

    from sqlbench_lmeval.submission.cross_run import cross_run_findings
    from sqlbench_lmeval.submission.logged import read_submissions
    from sqlbench_lmeval.submission.verify import (
        EXIT_CODES,
        VERIFIED_MEANS,
        run_limits,
        verify_submission,
        worst_verdict,
    )
    from sqlbench_lmeval.submission.verify_report import report_stems, write_verification

    submissions = [sub for spec in args.runs for sub in read_submissions(spec, task=args.task)]
    stems = report_stems([(sub.name, sub.inputs, sub.source) for sub in submissions])
    options = _verify_data(args)
    verifications = cross_run_findings(
        [
            verify_submission(
                submission,
                cache_dir=args.cache_dir,
                limits=_gold_limits(
                    run_limits(submission, options, args.timeout, args.max_rows), args
                ),
                workers=args.workers,
                progress=not args.no_progress,
                source=args.source,
                options=options,
            )
            for submission in submissions
        ]
    )
    for verification, stem in zip(verifications, stems, strict=True):
        paths = write_verification(verification, Path(args.output), stem)
        counts = ", ".join(f"{task.task} {task.verdict}" for task in verification.tasks)
        print(
            f"{verification.run}: {verification.verdict} ({counts}); digest "
            f"{verification.digest()}; wrote {paths['markdown']}"
        )
        for finding in verification.all_findings:
            if finding.severity != "info":
                where = f"{finding.task}: " if finding.task else ""
                print(f"  [{finding.severity}] {where}{finding.code}: {finding.message}")
    print(VERIFIED_MEANS)
    return EXIT_CODES[worst_verdict(v.verdict for v in verifications)]


def _verify_data(args: argparse.Namespace) -> dict:
    """Data options given to verify/leaderboard; they override what a run recorded (a
    predictions file records none)."""
    options = {"scale_factor": args.scale_factor, "engine": args.engine, "url": args.url}
    return {name: value for name, value in options.items() if value is not None}


def _leaderboard_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", nargs="+", metavar="RUN", help="runs, as for verify")
    parser.add_argument(
        "--output",
        "-o",
        required=True,
        help="folder for leaderboard.html/.csv/.json/.md and verifications/ (which also caches "
        "each run's verification by the content of its files)",
    )
    parser.add_argument(
        "--resamples", type=int, default=2_000, help="bootstrap resamples (default: 2000)"
    )
    parser.add_argument("--seed", type=int, help="bootstrap seed (default: a fixed one)")
    parser.add_argument("--task", help="the task of predictions files (or one task of a run)")
    _verify_options(parser)


@_register(
    "leaderboard",
    "rank verified runs per task: EX with CIs, rank intervals, groups not significantly "
    "different; writes leaderboard.html/.csv/.json/.md",
)(_leaderboard_args)
def _leaderboard(args: argparse.Namespace) -> int:
    from sqlbench_lmeval.report.stats import SEED
    from sqlbench_lmeval.submission.leaderboard import build_leaderboard

    if args.resamples < 100:
        raise UserError("--resamples must be at least 100")
    files = build_leaderboard(
        args.runs,
        args.output,
        cache_dir=args.cache_dir,
        timeout_s=args.timeout,
        max_rows=args.max_rows,
        workers=args.workers,
        resamples=args.resamples,
        seed=SEED if args.seed is None else args.seed,
        progress=not args.no_progress,
        source=args.source,
        options=_verify_data(args),
        task=args.task,
    )
    print(
        f"leaderboard: re-scored {len(files.verified)} run(s), {len(files.cached)} from the "
        f"cache; wrote {files.html}, {files.csv}, {files.json}, {files.markdown}"
    )
    return 0


def _submission_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "task",
        metavar="TASK",
        help="the test set of a leaderboard with hidden gold: logiccat_test (LogicCat's board)",
    )
    parser.add_argument(
        "run",
        metavar="RUN",
        help="an lm-eval --output_path folder (or its model subfolder) written with "
        "--log_samples that ran TASK",
    )
    parser.add_argument(
        "--output",
        "-o",
        required=True,
        help="the predictions file to write (JSON: the board's test records in their order, "
        "query set to the run's SQL in the board's dialect)",
    )
    parser.add_argument("--cache-dir", help="cache root (default: $SQLBENCH_LMEVAL_CACHE)")
    parser.add_argument("--source", help="logiccat: upstream folder, if the bundle must be built")


@_register(
    "submission",
    "write a leaderboard's predictions file from an lm-eval run of its test set "
    "(logiccat_test: upstream's test.json records with the run's SQL)",
)(_submission_args)
def _submission(args: argparse.Namespace) -> int:
    from sqlbench_lmeval.submission.board_file import write_submission

    written = write_submission(
        args.task, args.run, args.output, cache_dir=args.cache_dir, source=args.source
    )
    print(written.summary())
    return 0


#: What each command's ``--output`` names: a file, or a folder it writes its files into.
OUTPUT_KINDS = {
    "score": "file",
    "gold": "file",
    "submission": "file",
    "fidelity": "file",
    "complexity": "folder",
    "report": "folder",
    "explore": "folder",
    "gold-card": "folder",
    "audit-gold": "folder",
    "verify": "folder",
    "leaderboard": "folder",
}


def _prepare_output(command: str, output: str | None) -> list[Path]:
    """Make the place ``--output`` names ready before any work, so that a command never fails
    on it after scoring: the folder of an output file, or the output folder, is created; a
    file path that is a folder, or a folder path that is a file, is a UserError. Returns the
    folders it created, deepest first (:func:`_remove_created` removes them when the command
    fails, so a failed command leaves nothing behind)."""
    if output is None:
        return []
    path = Path(output)
    kind = OUTPUT_KINDS[command]
    if kind == "file" and path.is_dir():
        raise UserError(
            f"--output {output} is a folder; give the path of a file to write, such as "
            f"{path / ('scores.json' if command == 'score' else f'{command}.jsonl')}"
        )
    if kind == "folder" and path.exists() and not path.is_dir():
        raise UserError(f"--output {output} is a file; {command} writes a folder of files there")
    folder = path.parent if kind == "file" else path
    created = [f for f in (folder, *folder.parents) if not f.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(f"cannot create the folder {folder} for --output: {error}") from error
    return created


def _remove_created(created: Sequence[Path]) -> None:
    """Remove the folders :func:`_prepare_output` created, deepest first, and the empty
    folders the command made in them (``leaderboard``'s ``verifications/``); never a file."""
    if not created:
        return
    inner = sorted((p for p in created[0].rglob("*") if p.is_dir()), key=lambda p: -len(p.parts))
    for folder in [*inner, *created]:
        try:
            folder.rmdir()
        except OSError:  # something is in it (not ours to remove), or it is gone already
            if folder in created:
                return


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
    created: list[Path] = []
    try:
        if args.command in OUTPUT_KINDS:
            created = _prepare_output(args.command, args.output)
        return int(args.handler(args) or 0)
    except UserError as error:
        _remove_created(created)
        print(f"sqlbench-lmeval {args.command}: error: {error}", file=sys.stderr)
        return ExitCode.USER_ERROR
    except EvaluationUnavailable as error:
        _remove_created(created)
        print(
            f"sqlbench-lmeval {args.command}: the evaluation cannot run: {error}\n"
            "Stopped; no output file was written. This is a failure of the evaluation's set-up, "
            "not of the model: fix it and run the command again.",
            file=sys.stderr,
        )
        return ExitCode.UNAVAILABLE
    except BaseException:
        # Interrupted (Ctrl-C) or crashed: the folders made for --output go too, when empty.
        _remove_created(created)
        raise
