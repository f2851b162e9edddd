"""The core install, without the mysql and postgres extras, runs everything but the server engines.

Each check runs a fresh interpreter in which PyMySQL and psycopg cannot be imported
(``sys.modules[name] = None``: ``import`` raises ModuleNotFoundError and
``importlib.util.find_spec`` answers None, as when the package is not installed), so that the
drivers this test environment holds are out of sight. The user's own path - a built wheel in a
fresh virtualenv with only the extras the README names - is ``.ci/user-path``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "sqlbench_lmeval"
DRIVERS = ("pymysql", "psycopg")
HIDE_DRIVERS = "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in DRIVERS)

#: The one line each server engine's missing driver gives, written out here as the user must
#: read it: the extra to install, quoted for a shell.
MYSQL_LINE = (
    'the mysql engine needs PyMySQL, which is not installed: pip install "sqlbench-lmeval[mysql]"'
)
POSTGRES_LINE = (
    "the postgres engine needs psycopg, which is not installed: "
    'pip install "sqlbench-lmeval[postgres]"'
)
#: The server engines' own modules: the only ones that may need a driver to import.
SERVER_ENGINE_MODULES = {
    "sqlbench_lmeval.execution.mysql": MYSQL_LINE,
    "sqlbench_lmeval.execution.mysql_admin": MYSQL_LINE,
    "sqlbench_lmeval.execution.postgres": POSTGRES_LINE,
    "sqlbench_lmeval.execution.postgres_admin": POSTGRES_LINE,
}


def module_names() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__main__":  # importing it runs the command line
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def without_drivers(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", HIDE_DRIVERS + code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_drivers_are_hidden_in_the_child(tmp_path):
    # A check on the check: with the drivers hidden, neither imports nor is found.
    done = without_drivers(
        "import importlib.util\n"
        f"print([importlib.util.find_spec(n) for n in {DRIVERS!r}])\n"
        "import pymysql\n",
        tmp_path,
    )
    assert done.stdout.strip() == "[None, None]"
    assert "ModuleNotFoundError" in done.stderr


def test_every_module_imports_without_the_drivers_but_the_server_engines(tmp_path):
    names = module_names()
    assert set(SERVER_ENGINE_MODULES) <= set(names)
    code = f"""
import importlib, json
failures = {{}}
for name in {names!r}:
    try:
        importlib.import_module(name)
    except Exception as error:
        failures[name] = [type(error).__name__, str(error)]
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[loaded]
print(json.dumps(failures))
"""
    done = without_drivers(code, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    failures = json.loads(done.stdout.splitlines()[-1])
    assert failures == {
        name: ["DriverMissing", line] for name, line in SERVER_ENGINE_MODULES.items()
    }


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        (
            ["prepare", "logiccat", "--engine", "mysql", "--url", "mysql://a:b@127.0.0.1:1"],
            MYSQL_LINE,
        ),
        (
            ["prepare", "tpcds", "--engine", "postgres", "--url", "postgresql://a@127.0.0.1:1/x"],
            POSTGRES_LINE,
        ),
        (
            ["score", "logiccat", "predictions.jsonl", "--engine", "mysql", "-o", "s.json"],
            MYSQL_LINE,
        ),
        (["gold", "tpcds", "--engine", "postgres", "-o", "gold.jsonl"], POSTGRES_LINE),
    ],
    ids=["prepare-logiccat-mysql", "prepare-tpcds-postgres", "score-mysql", "gold-postgres"],
)
def test_a_server_engine_without_its_driver_stops_the_command_before_any_work(
    tmp_path, arguments, line
):
    cache = tmp_path / "cache"
    (tmp_path / "predictions.jsonl").write_text('{"id": 1, "prediction": "SELECT 1"}\n', "utf-8")
    code = (
        "from sqlbench_lmeval.cli import main\n"
        f"raise SystemExit(main({[*arguments, '--cache-dir', str(cache)]!r}))\n"
    )
    done = without_drivers(code, tmp_path)
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.splitlines() == [f"sqlbench-lmeval {arguments[0]}: error: {line}"]
    assert not cache.exists()  # nothing was built, downloaded or cached
    assert sorted(p.name for p in tmp_path.iterdir()) == ["predictions.jsonl"]


@pytest.mark.parametrize(
    ("call", "line"),
    [
        ("sqlbench_lmeval.logiccat.task.load_dataset('mini', engine='mysql')", MYSQL_LINE),
        ("sqlbench_lmeval.tpcds.task.load_dataset(0.01, engine='postgres')", POSTGRES_LINE),
    ],
    ids=["logiccat", "tpcds"],
)
def test_the_lm_eval_dataset_hooks_stop_with_the_one_line(tmp_path, call, line):
    """What lm-eval calls to build a task (``custom_dataset``): exit 2 and the line, instead of
    a traceback through lm-eval's task loader."""
    cache = tmp_path / "cache"
    code = (
        "import os, sqlbench_lmeval.logiccat.task, sqlbench_lmeval.tpcds.task\n"
        f"os.environ['SQLBENCH_LMEVAL_CACHE'] = {str(cache)!r}\n"
        "sys.argv = ['lm_eval']\n"
        f"{call}\n"
    )
    done = without_drivers(code, tmp_path)
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.splitlines() == [f"lm_eval: error: {line}"]
    assert not cache.exists()
