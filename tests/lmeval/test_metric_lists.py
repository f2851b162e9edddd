"""The task YAML ``metric_list``s are written from the metric registry, and say what it says."""

from __future__ import annotations

import shutil

import pytest

from sqlbench_lmeval.lmeval.metric_lists import GENERATED, main, stale
from sqlbench_lmeval.lmeval.task_specs import task_groups, task_specs
from sqlbench_lmeval.paths import tasks_dir
from sqlbench_lmeval.scoring.metrics import SAMPLED, SINGLE, group_metrics, task_metrics


def test_every_task_yaml_lists_what_the_registry_writes():
    differing = stale()
    assert not differing, (
        "metric_list blocks differ from the registry; run "
        f"`python -m sqlbench_lmeval.lmeval.metric_lists`: {sorted(map(str, differing))}"
    )


def test_every_task_reports_the_registry_metrics_of_its_benchmark_and_kind():
    # Read by task_specs (lm-eval's include rules), not by the writer: every task, including
    # those that inherit their template's list, names exactly the registry's metrics.
    specs = task_specs()
    assert {spec.benchmark for spec in specs.values()} == {"logiccat", "tpcds"}
    for spec in specs.values():
        kind = SAMPLED if spec.sampled else SINGLE
        expected = tuple(m.name for m in task_metrics(spec.benchmark, kind))
        assert spec.metrics == expected, spec.name
    assert any(spec.sampled for spec in specs.values())


@pytest.mark.parametrize("group", ["logiccat", "logiccat_dev", "logiccat_test"])
def test_the_logiccat_groups_average_the_registry_group_metrics(group):
    assert set(task_groups()) == {"logiccat", "logiccat_dev", "logiccat_test"}
    tasks = task_groups()[group]
    assert {task_specs()[task].benchmark for task in tasks} == {"logiccat"}
    text = (tasks_dir() / "logiccat" / f"{group}.yaml").read_text(encoding="utf-8")
    listed = [line.split(":", 1)[1].strip() for line in text.splitlines() if "- metric:" in line]
    assert listed == [m.name for m in group_metrics("logiccat")]


def test_the_writer_restores_a_hand_edited_list(tmp_path, capsys):
    copy = tmp_path / "tasks"
    shutil.copytree(tasks_dir(), copy)
    template = copy / "tpcds" / "_tpcds_template_yaml"
    original = template.read_text(encoding="utf-8")
    edited = original.replace(
        "  - metric: ex_set\n    aggregation: mean\n    higher_is_better: true\n", ""
    ).replace(f"  {GENERATED}\n", f"  {GENERATED}\n  - metric: made_up\n")
    assert edited != original
    template.write_text(edited, encoding="utf-8")
    assert main(["--check", "--tasks", str(copy)]) == 1
    assert "_tpcds_template_yaml" in capsys.readouterr().err
    assert template.read_text(encoding="utf-8") == edited  # --check writes nothing
    assert main(["--tasks", str(copy)]) == 0
    assert template.read_text(encoding="utf-8") == original
    assert stale(copy) == {}
