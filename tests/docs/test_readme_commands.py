"""Every shell block of README.md and the task READMEs that is not marked (see
``support.markdown_docs``) runs here as written, with ``bash -e``, in a scratch folder that is
also ``$HOME``. What stands in for the user's world, and nothing else:

- ``pip``: a stand-in that checks each ``pip install ".[extra]"`` names extras pyproject.toml
  declares and installs nothing (this environment has them; installing from the built wheel is
  the user-path stage of ``.ci/run``);
- the model server: the scripted loopback server (``support.openai_server``) replaces the
  ``base_url`` of an ``lm_eval`` command, answering LogicCat questions with the known answers of
  ``support.logiccat_answers`` (gold, a wrong query or prose by item id) and TPC-DS questions
  with gold;
- size: ``lm_eval`` gets a small ``--limit``, and TPC-DS runs and ``prepare tpcds`` the test
  session's small scale factor, as a small ``--limit`` stands in for the whole task;
- data: the cache holds the session's LogicCat and TPC-DS builds, and ``~/src/LogicCat`` (the
  README's offline source) is the upstream copy the suite uses.

After each block the test checks what it wrote: the numbers the scripted answers imply, and for
the README's quickstart that the table under "What a run prints" is the one the command prints.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TPCDS_SCALE_FACTOR, logiccat_source
from support.lm_eval_run import lm_eval_command, offline_env, read_outputs
from support.logiccat_answers import QUESTION, check_known_answers, known_answer
from support.markdown_docs import REPO, USER_FILES, blocks, shell_blocks
from support.openai_server import ScriptedOpenAIServer

pytestmark = pytest.mark.slow

README = REPO / "README.md"
LIMIT = 6  # the README shows the table of a 6-item run
TPCDS_LIMIT = 2
README_PORT_URL = "http://localhost:8000/v1/chat/completions"

RUN_BLOCKS = [block for path in USER_FILES for block in shell_blocks(path) if block.marker is None]

PIP = '''#!{python}
"""pip as the README uses it: only `pip install` of this project's extras, checked, not run."""
import re, sys
extras = set({extras!r})
args = sys.argv[1:]
if args[:1] != ["install"]:
    sys.exit(f"pip stand-in: only `pip install` is expected, got {{args}}")
for target in [a for a in args[1:] if not a.startswith("-")]:
    match = re.fullmatch(r"(?:\\.|sqlbench-lmeval)(?:\\[([\\w,-]+)\\])?", target)
    if not match:
        sys.exit(f"pip stand-in: {{target!r}} is not this project")
    unknown = set(filter(None, (match.group(1) or "").split(","))) - extras
    if unknown:
        sys.exit(f"pip stand-in: no extra {{sorted(unknown)}} in pyproject.toml")
'''

LM_EVAL = '''#!{python}
"""lm_eval with the loopback server for the README's, a small --limit and scale factor."""
import json, os, sys
args = [a.replace({readme_url!r}, os.environ["DOCS_MODEL_URL"]) for a in sys.argv[1:]]
if "--limit" not in args:
    tasks = args[args.index("--tasks") + 1]
    args += ["--limit", {tpcds_limit!r} if "tpcds" in tasks else {limit!r}]
    if "tpcds" in tasks and "--metadata" not in args:
        args += ["--metadata", json.dumps({{"scale_factor": {sf!r}}})]
os.execv({lm_eval!r}[0], [*{lm_eval!r}, *args])
'''

SQLBENCH = '''#!{python}
"""sqlbench-lmeval, with the session's small TPC-DS scale factor for `prepare tpcds`."""
import sys
from sqlbench_lmeval.cli import main
args = sys.argv[1:]
if args[:2] == ["prepare", "tpcds"] and "--scale-factor" not in args:
    args += ["--scale-factor", {sf!r}]
sys.exit(main(args))
'''


def extras() -> set[str]:
    """The optional-dependency extras pyproject.toml declares."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([\w-]+) = \[", section, re.M))


def _script(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory) -> Path:
    """A folder of the stand-in commands, put first on PATH."""
    folder = tmp_path_factory.mktemp("stand-ins")
    python = sys.executable
    lm_eval = lm_eval_command()
    _script(folder / "pip", PIP.format(python=python, extras=sorted(extras())))
    _script(
        folder / "lm_eval",
        LM_EVAL.format(
            python=python,
            readme_url=README_PORT_URL,
            limit=str(LIMIT),
            tpcds_limit=str(TPCDS_LIMIT),
            sf=str(TPCDS_SCALE_FACTOR),
            lm_eval=lm_eval,
        ),
    )
    _script(folder / "sqlbench-lmeval", SQLBENCH.format(python=python, sf=str(TPCDS_SCALE_FACTOR)))
    return folder


@pytest.fixture(scope="module")
def cache(logiccat_cache, tpcds_cache, tmp_path_factory) -> Path:
    """A cache root that holds the session's LogicCat and TPC-DS builds."""
    root = tmp_path_factory.mktemp("docs-cache")
    (root / "logiccat").symlink_to(logiccat_cache / "logiccat")
    (root / "tpcds").symlink_to(tpcds_cache / "tpcds")
    return root


@pytest.fixture(scope="module")
def answers(cache, tpcds_items):
    """The scripted model: known answers for LogicCat, gold for TPC-DS; and LogicCat's items."""
    from sqlbench_lmeval.logiccat.benchmark import load_items
    from sqlbench_lmeval.logiccat.bundle import load_bundle

    logiccat = load_items(cache_dir=cache)
    mysql_gold = {record.id: record.gold_sql_mysql for record in load_bundle(cache).records}
    # Items that share a question and a database share a prompt (e.g. test items 446 and 486):
    # each gets the first one's answer, and is checked against it.
    by_question: dict = {}
    for item in logiccat:
        by_question.setdefault(item.question.strip(), item)
    tpcds = {item.question: item for item in tpcds_items}

    def answer(prompt: str) -> str:
        found = QUESTION.search(prompt)
        if found and found.group(1).strip() in by_question:
            record = by_question[found.group(1).strip()]
            # The gold of the dialect the prompt asks (logiccat_dev/logiccat_test ask MySQL).
            asks_mysql = "Write one MySQL query" in prompt
            return known_answer(record, mysql_gold[record.id] if asks_mysql else record.gold_sql)
        for question, item in tpcds.items():
            if f"Question: {question}\n" in prompt:
                return f"```sql\n{item.gold_sql}\n```"
        raise AssertionError("a prompt without a known question")

    return answer, {item.id: by_question[item.question.strip()] for item in logiccat}


def run_block(block, workdir: Path, stand_ins: Path, cache: Path, answer) -> str:
    """Run ``block`` with bash in ``workdir``; its output (stdout and stderr)."""
    home_source = workdir / "src" / "LogicCat"
    home_source.parent.mkdir(parents=True)
    home_source.symlink_to(logiccat_source())
    with ScriptedOpenAIServer(answer) as server:
        env = offline_env(
            workdir,
            {
                "HOME": str(workdir),
                "PATH": f"{stand_ins}{os.pathsep}{os.environ['PATH']}",
                "SQLBENCH_LMEVAL_CACHE": str(cache),
                "DOCS_MODEL_URL": server.chat_url,
            },
        )
        env.pop("SQLBENCH_LMEVAL_LOGICCAT_SOURCE", None)  # the block says where the data is
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block.text],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert server.errors == [], server.errors
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{block.where} failed (exit {done.returncode}):\n{output[-6000:]}"
    return done.stdout


def _table(text: str) -> list[str]:
    """The lines of lm-eval's results table in ``text``."""
    return [line for line in text.splitlines() if line.startswith("|")]


def _shown_output() -> list[str]:
    """The table README.md shows under "What a run prints"."""
    (shown,) = [b for b in blocks(README) if b.language == "text" and "|logiccat_mini|" in b.text]
    return _table(shown.text)


@pytest.mark.parametrize("block", RUN_BLOCKS, ids=lambda b: b.where)
def test_block_runs_as_written(block, tmp_path, stand_ins, cache, answers):
    answer, logiccat_items = answers
    stdout = run_block(block, tmp_path, stand_ins, cache, answer)
    commands = block.commands()
    if any(c.startswith("lm_eval") for c in commands):
        results, samples = read_outputs(tmp_path / "runs")
        for task, records in samples.items():
            if task.startswith("logiccat"):
                assert len(records) == LIMIT, task
                check_known_answers(records, logiccat_items)
            else:
                assert len(records) == TPCDS_LIMIT, task
                # Gold as the answer: its own result and its own structure.
                for record in records:
                    assert (record["ex"], record["structural_similarity"]) == (1, 1.0), record
        assert samples, "the run logged no samples"
        if "--tasks logiccat_mini" in block.text and block.path == README:
            # The README shows the table this command prints for a LIMIT-item run.
            assert _table(stdout) == _shown_output()
    for command in commands:
        output = re.search(r"(?:--output|-o) (\S+)", command)
        if command.startswith("sqlbench-lmeval score") and output:
            scores = json.loads((tmp_path / output.group(1)).read_text(encoding="utf-8"))
            assert scores["items"], command
        elif command.startswith(("sqlbench-lmeval report", "sqlbench-lmeval explore")):
            folder = tmp_path / output.group(1)
            page = "report.html" if "report" in command.split()[1] else "explorer.html"
            assert (folder / page).is_file(), command
        elif command.startswith("sqlbench-lmeval submission") and output:
            # The board's file: every test record, in upstream's order, answered or empty.
            records = json.loads((tmp_path / output.group(1)).read_text(encoding="utf-8"))
            assert len(records) == 800, command
            assert [r["idx"] for r in records] == sorted(r["idx"] for r in records)
            assert sum(1 for r in records if r["query"]) > 0, command
        elif command.startswith("sqlbench-lmeval prepare"):
            assert "tpcds" in command or "logiccat" in command


def test_the_shown_output_is_a_table_of_every_printed_metric():
    lines = _shown_output()
    names = {line.split("|")[5].strip() for line in lines[2:]}
    assert names == {
        "ves",
        "ex",
        "ex_strict",
        "ex_set",
        "ex_reads_data",
        "ex_on_healthy_gold",
        "r_ves",
    }
