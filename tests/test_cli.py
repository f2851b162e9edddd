"""``sqlbench-lmeval --help`` / ``--version``: they work, and stay light (no lm-eval import)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sqlbench_lmeval import __version__
from sqlbench_lmeval.cli import OUTPUT_KINDS, build_parser, main


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


def test_an_interrupted_command_leaves_no_output_folder(tmp_path):
    """``score`` waits to read its predictions from a FIFO after making --output's folders;
    Ctrl-C (SIGINT) there must take those folders away with it."""
    import os
    import signal
    import time

    fifo = tmp_path / "predictions.jsonl"
    os.mkfifo(fifo)
    output = tmp_path / "out" / "deeper" / "s.json"
    code = "from sqlbench_lmeval.cli import main\nraise SystemExit(main())"
    command = [sys.executable, "-c", code, "score", "tpcds", str(fifo), "-o", str(output)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):  # the folders exist before the predictions are read
            if output.parent.is_dir():
                break
            time.sleep(0.05)
        assert output.parent.is_dir()
        time.sleep(0.2)  # it now blocks opening the FIFO
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode != 0
    assert "KeyboardInterrupt" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["predictions.jsonl"]


def test_docs_prints_the_folder_and_the_page_an_output_cites(capsys):
    assert main(["docs"]) == 0
    folder = Path(capsys.readouterr().out.strip())
    assert (folder / "index.md").is_file()
    # As the explorer cites it: "docs/scoring.md, section Data dependence".
    assert main(["docs", "docs/scoring.md#data-dependence"]) == 0
    assert Path(capsys.readouterr().out.strip()) == folder / "scoring.md"
    assert main(["docs", "r-ves"]) == 0
    assert Path(capsys.readouterr().out.strip()) == folder / "r-ves.md"
    assert main(["docs", "scorng"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"sqlbench-lmeval docs: error: no page 'scorng' in {folder}; did you")
    assert "did you mean 'scoring'? Pages: " in line


def test_an_unknown_task_offers_the_closest_and_lists_the_group(tmp_path, capsys):
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"id": 1, "prediction": "SELECT 1"}\n', "utf-8")
    output = tmp_path / "out" / "s.json"
    assert main(["score", "logicat", str(predictions), "-o", str(output)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(
        "sqlbench-lmeval score: error: 'logicat' is not a sqlbench-lmeval task or group; "
        "did you mean 'logiccat'? Ours: logiccat (group), logiccat_"
    )
    assert ", tpcds, " in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.jsonl"]  # no output folder


def _commands() -> dict:
    parser = build_parser()
    (sub,) = [action for action in parser._actions if action.choices and "score" in action.choices]
    return dict(sub.choices)


def test_every_command_with_an_output_option_says_what_it_names():
    with_output = {
        name
        for name, command in _commands().items()
        if any("--output" in action.option_strings for action in command._actions)
    }
    assert with_output == set(OUTPUT_KINDS)
    assert {
        "score",
        "gold",
        "report",
        "explore",
        "verify",
        "leaderboard",
        "complexity",
    } <= with_output


FOLDER_COMMANDS = {
    # The runs do not exist: each command must stop on --output before reading them.
    "report": ["report", "absent-run"],
    "explore": ["explore", "absent-run"],
    "verify": ["verify", "absent-run"],
    "leaderboard": ["leaderboard", "absent-run"],
    "complexity": ["complexity", "absent.sql"],
}


@pytest.mark.parametrize("command", sorted(FOLDER_COMMANDS))
def test_an_output_folder_that_is_a_file_is_refused_before_any_work(command, tmp_path, capsys):
    assert OUTPUT_KINDS[command] == "folder"
    existing = tmp_path / "report.md"
    existing.write_text("kept\n", encoding="utf-8")
    code = main([*FOLDER_COMMANDS[command], "--output", str(existing)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"--output {existing} is a file; {command} writes a folder of files there" in err
    assert existing.read_text("utf-8") == "kept\n"


@pytest.mark.parametrize("command", sorted(FOLDER_COMMANDS))
def test_a_refused_command_leaves_no_output_folder_behind(command, tmp_path, capsys):
    # The output folder is made before any work (above); the run does not exist, so the
    # command stops (exit 2) and takes away what it made, up to the first folder that was there.
    output = tmp_path / "new" / "out"
    assert main([*FOLDER_COMMANDS[command], "--output", str(output)]) == 2
    assert "absent" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_refused_command_keeps_an_output_folder_that_was_there(tmp_path, capsys):
    kept = tmp_path / "results" / "mine.txt"
    kept.parent.mkdir()
    kept.write_text("kept\n", encoding="utf-8")
    output = kept.parent / "report"
    assert main(["report", "absent-run", "--output", str(output)]) == 2
    assert sorted(kept.parent.iterdir()) == [kept]


@pytest.mark.parametrize("command", ["score", "gold", "fidelity"])
def test_an_output_file_that_is_a_folder_is_refused(command, tmp_path, capsys):
    assert OUTPUT_KINDS[command] == "file"
    arguments = {"score": ["score", "logiccat", "absent.jsonl"]}.get(command, [command, "logiccat"])
    code = main([*arguments, "--cache-dir", str(tmp_path / "cache"), "--output", str(tmp_path)])
    assert code == 2
    assert f"--output {tmp_path} is a folder; give the path of a file" in capsys.readouterr().err
    assert not (tmp_path / "cache").exists()


def test_an_output_folder_under_a_file_is_refused(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    code = main(["score", "logiccat", "absent.jsonl", "--output", str(blocker / "s.json")])
    assert code == 2
    assert f"cannot create the folder {blocker} for --output" in capsys.readouterr().err


def test_complexity_creates_its_missing_output_folder(tmp_path, capsys):
    workload = tmp_path / "queries.sql"
    workload.write_text(
        "SELECT a FROM t WHERE b = 1\n"
        "SELECT t.a, COUNT(*) FROM t JOIN u ON t.a = u.a GROUP BY t.a\n",
        encoding="utf-8",
    )
    folder = tmp_path / "new" / "plots"
    assert main(["complexity", f"mine={workload}", "--output", str(folder)]) == 0
    out = capsys.readouterr().out
    pngs = sorted(folder.glob("*.png"))
    assert pngs
    assert all(f"wrote {png}" in out for png in pngs)


# Words of the project's own work, which mean nothing to a user: "the seed" (the benchmark
# descriptions the package implements), numbered issues, numbered builders.
INTERNAL_WORDS = re.compile(
    r"\bthe seed\b|\bseed'?s? (recipe|scoring|sentences)\b|\bseed's\b|\bissues? #?\d+"
    r"|\bbuilder #?\d+\b|\bthe brief\b",
    re.IGNORECASE,
)
PACKAGE = Path(__file__).resolve().parents[1] / "sqlbench_lmeval"
TASKS = Path(__file__).resolve().parents[1] / "tasks"


@pytest.mark.parametrize(
    "text",
    [
        "as the seed says",
        "the seed's recipe",
        "Unreleased (issue 19)",
        "see issues #21",
        "counted by builder 4's check",
    ],
)
def test_the_internal_words_pattern_finds_them(text):
    assert INTERNAL_WORDS.search(text)


@pytest.mark.parametrize(
    "text", ["bootstrap seed (default: a fixed one)", "logiccat-0123abcd-builder5", "--seed SEED"]
)
def test_the_internal_words_pattern_leaves_plain_words(text):
    assert not INTERNAL_WORDS.search(text)


def test_no_help_text_speaks_internal_words():
    parser = build_parser()
    texts = {"sqlbench-lmeval --help": parser.format_help()}
    texts.update(
        {
            f"sqlbench-lmeval {name} --help": command.format_help()
            for name, command in _commands().items()
        }
    )
    assert {"tasks-dir", "prepare", *OUTPUT_KINDS} <= set(_commands())  # every command's help
    found = {
        where: match.group(0)
        for where, text in texts.items()
        if (match := INTERNAL_WORDS.search(text))
    }
    assert found == {}


def _package_strings():
    """Every string literal of the package (messages, help, docstrings, f-string parts), and
    every text file it ships beside its modules, with the task YAMLs."""
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield f"{path.relative_to(PACKAGE.parent)}:{node.lineno}", node.value
    shipped = [p for p in PACKAGE.rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")]
    for path in sorted([*shipped, *TASKS.rglob("*.yaml"), *TASKS.rglob("_*_yaml")]):
        yield str(path.relative_to(PACKAGE.parent)), path.read_text("utf-8")


def test_no_message_of_the_package_speaks_internal_words():
    strings = list(_package_strings())
    assert len(strings) > 5_000  # the walk reached the package
    found = [
        f"{where}: {match.group(0)!r}"
        for where, text in strings
        if (match := INTERNAL_WORDS.search(text))
    ]
    assert found == []
