"""``sqlbench-lmeval --help`` / ``--version``: they work, and stay light (no lm-eval import)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sqlbench_lmeval import __version__
from sqlbench_lmeval.cli import main


def run_module(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sqlbench_lmeval", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_help_lists_the_tasks_dir_subcommand():
    done = run_module("--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: sqlbench-lmeval")
    assert "tasks-dir" in done.stdout


def test_version():
    done = run_module("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"sqlbench-lmeval {__version__}"


def test_console_script_matches_the_module():
    script = Path(sys.executable).with_name("sqlbench-lmeval")
    if not script.exists():
        pytest.skip("package not installed in this interpreter's environment")
    done = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"sqlbench-lmeval {__version__}"


def test_help_does_not_import_heavy_modules():
    code = (
        "import sys\n"
        "from sqlbench_lmeval.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('lm_eval', 'torch', 'datasets', 'matplotlib')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_no_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert "COMMAND" in capsys.readouterr().err


def test_tasks_dir_prints_an_existing_folder(capsys):
    assert main(["tasks-dir"]) == 0
    assert Path(capsys.readouterr().out.strip()).is_dir()
