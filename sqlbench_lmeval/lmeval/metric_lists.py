"""The ``metric_list``s of our task YAML, written from the metric registry (``scoring.metrics``):
``python -m sqlbench_lmeval.lmeval.metric_lists`` rewrites them, ``--check`` names the files
that differ (why they are generated and which metrics a block gets:
docs/adding-a-metric.md)."""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import yaml

from sqlbench_lmeval.lmeval.task_specs import read_config
from sqlbench_lmeval.paths import tasks_dir
from sqlbench_lmeval.scoring.metrics import (
    FAMILIES,
    SAMPLED,
    SINGLE,
    Metric,
    group_metrics,
    task_metrics,
)

#: The comment a generated block opens with.
GENERATED = "# written from the metric registry: python -m sqlbench_lmeval.lmeval.metric_lists"

_BLOCK = re.compile(r"^(metric_list|aggregate_metric_list):[^\n]*\n(?:[ -][^\n]*\n)*", re.M)


def _task_kind(config: dict) -> tuple[str, str]:
    """(benchmark, kind) of a task's config, from its scoring filter."""
    (step,) = [step for entry in config["filter_list"] for step in entry["filter"]]
    sampled = str(step["function"]).endswith("ExecuteAndScoreSamples")
    return str(step["benchmark"]), SAMPLED if sampled else SINGLE


def _block(key: str, metrics: Sequence[Metric], group: bool = False) -> str:
    """The YAML block ``key:`` listing ``metrics``, a comment before each family."""
    lines = [f"{key}:", f"  {GENERATED}"]
    family = None
    for metric in metrics:
        if metric.family != family:
            family = metric.family
            lines += [f"  # {line}" for line in textwrap.wrap(FAMILIES[family], 94)]
        last = ("weight_by_size", True) if group else ("higher_is_better", metric.higher_is_better)
        entry = {"metric": metric.name, "aggregation": metric.aggregation, last[0]: last[1]}
        body = yaml.safe_dump([entry], sort_keys=False, default_flow_style=False)
        lines += [f"  {line}" for line in body.splitlines()]
    return "\n".join(lines) + "\n"


def generated(path: Path, tasks: Path) -> str:
    """The text of the YAML file ``path`` with its metric blocks written from the registry."""
    text = path.read_text(encoding="utf-8")
    config = read_config(path)

    def replace(match: re.Match) -> str:
        key = match.group(1)
        if key == "metric_list":
            return _block(key, task_metrics(*_task_kind(config)))
        benchmarks = {
            _task_kind(read_config(tasks_file(tasks, task)))[0] for task in config["task"]
        }
        (benchmark,) = benchmarks
        return _block(key, group_metrics(benchmark), group=True)

    return _BLOCK.sub(replace, text)


def tasks_file(tasks: Path, task: str) -> Path:
    """The YAML file that defines ``task``."""
    for path in sorted(tasks.glob("*/*.yaml")):
        if read_config(path).get("task") == task:
            return path
    raise LookupError(f"no YAML file under {tasks} defines task {task!r}")


def yaml_files(tasks: Path) -> list[Path]:
    """Our task files that hold a metric block (task files and the templates they include)."""
    files = sorted(tasks.glob("*/*.yaml")) + sorted(tasks.glob("*/_*_yaml"))
    return [path for path in files if _BLOCK.search(path.read_text(encoding="utf-8"))]


def stale(tasks: Path | None = None) -> dict[Path, str]:
    """Files whose metric blocks differ from the registry's, with the text they should have."""
    tasks = tasks or tasks_dir()
    out = {}
    for path in yaml_files(tasks):
        text = generated(path, tasks)
        if text != path.read_text(encoding="utf-8"):
            out[path] = text
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say which files differ")
    parser.add_argument("--tasks", type=Path, help="the tasks folder (default: ours)")
    args = parser.parse_args(argv)
    differing = stale(args.tasks)
    for path, text in differing.items():
        if args.check:
            print(f"{path}: metric blocks differ from the registry", file=sys.stderr)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    return 1 if args.check and differing else 0


if __name__ == "__main__":
    sys.exit(main())
