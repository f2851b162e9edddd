"""Run the real ``lm_eval`` CLI against the scripted loopback server and read what it wrote.

Usage from any test (``tests/`` is on ``sys.path``, see ``pythonpath`` in pyproject.toml)::

    from support.lm_eval_run import run_lm_eval

    def test_logiccat_end_to_end(tmp_path):
        results, samples = run_lm_eval(
            "logiccat_mini",                       # str or list of task names / YAML paths
            answer=lambda prompt: "```sql\\nSELECT 1\\n```",   # prompt text -> model output
            workdir=tmp_path,
            extra_args=["--limit", "3"],
        )
        assert results["results"]["logiccat_mini"]["ex,score"] == 0.0
        assert samples["logiccat_mini"][0]["filtered_resps"]

Arguments:

- ``tasks``: task names (or YAML paths) as for ``--tasks``; a list is joined with commas.
- ``answer``: ``Callable[[str], str]`` or a constant string; called with the prompt text of
  each request (completions: the prompt; chat: the last user message); or a
  ``support.openai_server.RequestAnswer``, called with the prompt and the request's body.
- ``include_path``: passed as ``--include_path`` when given (lm-eval takes one folder).
- ``chat``: False runs ``--model local-completions`` (``tokenizer_backend=None,
  tokenized_requests=False``); True runs ``--model local-chat-completions`` with
  ``--apply_chat_template``.
- ``extra_args``: more CLI arguments, e.g. ``["--limit", "5", "--gen_kwargs", "..."]``.
- ``workdir``: where outputs go (use pytest's ``tmp_path``); a fresh temp folder by default.
- ``env``: extra environment variables for the CLI (on top of ours, see below).
- ``lm_eval``: the command to run; by default the ``lm_eval`` script beside the current
  interpreter.

``run_lm_eval_failing`` (same arguments) is for a run that must fail: it asserts the non-zero
exit and that no results file was written, and returns the run's output.

Returns ``(results, samples)``: ``results`` is the parsed ``results_*.json``; ``samples`` maps
each task name to its list of ``--log_samples`` records (``doc``, ``target``, ``arguments``,
``resps``, ``filtered_resps`` and every metric at top level). lm-eval writes a missing metric
as a bare ``NaN``, which is not JSON; it is read here as ``float("nan")``.

The CLI runs with ``--output_path``, ``--log_samples`` and ``--batch_size 1``, with
``HF_HUB_OFFLINE=1``, ``HF_DATASETS_OFFLINE=1``, ``TRANSFORMERS_OFFLINE=1`` and ``HF_HOME`` in
``workdir`` (nothing may be fetched from a hub). A failing run raises ``AssertionError`` with
the command, the exit code, the tail of its output and any error from ``answer``.
"""

from __future__ import annotations

import glob
import json
import math
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from support.openai_server import RequestAnswer, ScriptedOpenAIServer

TIMEOUT_S = 600
_TAIL_CHARS = 6000


def lm_eval_command() -> list[str]:
    """The ``lm_eval`` console script of the running environment (``python -m`` as fallback)."""
    script = Path(sys.executable).with_name("lm_eval")
    return [str(script)] if script.exists() else [sys.executable, "-m", "lm_eval"]


def offline_env(workdir: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for an offline lm-eval run whose Hugging Face files stay in ``workdir``."""
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HOME=str(workdir / "hf_home"),
        TOKENIZERS_PARALLELISM="false",
    )
    env.update(extra or {})
    return env


def model_args(server: ScriptedOpenAIServer, *, chat: bool) -> list[str]:
    """``--model``/``--model_args`` (and the chat template flag) pointing lm-eval at ``server``."""
    if chat:
        return [
            "--model",
            "local-chat-completions",
            "--model_args",
            f"base_url={server.chat_url},model=test",
            "--apply_chat_template",
        ]
    return [
        "--model",
        "local-completions",
        "--model_args",
        f"base_url={server.completions_url},model=test,"
        "tokenizer_backend=None,tokenized_requests=False",
    ]


def run_offline(
    command: Sequence[str], workdir: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``command`` run in ``workdir`` with :func:`offline_env` (output captured, never raises)."""
    return subprocess.run(
        list(command),
        cwd=workdir,
        env=offline_env(workdir, env),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def read_outputs(output_dir: Path) -> tuple[dict, dict[str, list[dict]]]:
    """The single ``results_*.json`` under ``output_dir`` and its ``samples_<task>_*.jsonl``."""
    results_files = sorted(glob.glob(str(output_dir / "**" / "results_*.json"), recursive=True))
    if len(results_files) != 1:
        raise AssertionError(f"expected one results_*.json under {output_dir}: {results_files}")
    results_path = Path(results_files[0])
    results = json.loads(results_path.read_text(encoding="utf-8"), parse_constant=_constant)
    samples: dict[str, list[dict]] = {}
    for task in results.get("configs", {}):
        # The name goes on with the run's date (a digit): samples_tpcds_* would also match
        # samples_tpcds_postgres_* when both tasks ran.
        pattern = str(results_path.parent / f"samples_{glob.escape(task)}_[0-9]*.jsonl")
        files = sorted(glob.glob(pattern))
        if files:
            samples[task] = read_jsonl(Path(files[-1]))
    return results, samples


def read_jsonl(path: Path) -> list[dict]:
    """Records of a JSONL file that may contain bare ``NaN``/``Infinity`` (as lm-eval writes)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line, parse_constant=_constant) for line in lines if line.strip()]


def run_lm_eval(
    tasks: str | Sequence[str],
    *,
    answer: Callable[[str], str] | RequestAnswer | str,
    include_path: str | os.PathLike | None = None,
    chat: bool = False,
    extra_args: Sequence[str] = (),
    workdir: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
    lm_eval: Sequence[str] | None = None,
    console: list[str] | None = None,
) -> tuple[dict, dict[str, list[dict]]]:
    """Run ``lm_eval`` on ``tasks`` against a scripted model; see the module docstring.
    ``console``, when given, receives the run's stdout and stderr."""
    command, done, errors, output_dir = _run(
        tasks, answer, include_path, chat, extra_args, workdir, env, lm_eval
    )
    if console is not None:
        console += [done.stdout, done.stderr]
    if done.returncode != 0 or errors:
        output = (done.stdout + done.stderr)[-_TAIL_CHARS:]
        raise AssertionError(
            f"lm_eval failed (exit {done.returncode}): {' '.join(command)}\n"
            f"answer() errors: {errors}\n--- output tail ---\n{output}"
        )
    return read_outputs(output_dir)


def run_lm_eval_failing(
    tasks: str | Sequence[str],
    *,
    answer: Callable[[str], str] | RequestAnswer | str,
    include_path: str | os.PathLike | None = None,
    extra_args: Sequence[str] = (),
    workdir: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
    exit_code: int | None = None,
) -> str:
    """Run ``lm_eval`` as :func:`run_lm_eval` does, for a run that must fail: asserts a non-zero
    exit (``exit_code`` when given) and that no ``results_*.json`` was written; returns the
    run's output (stdout, then stderr)."""
    _, done, errors, output_dir = _run(
        tasks, answer, include_path, False, extra_args, workdir, env, None
    )
    text = done.stdout + done.stderr
    assert errors == [], errors
    assert done.returncode != 0, text[-_TAIL_CHARS:]
    assert exit_code is None or done.returncode == exit_code, text[-_TAIL_CHARS:]
    assert list(output_dir.rglob("results_*.json")) == [], text[-_TAIL_CHARS:]
    return text


def _run(tasks, answer, include_path, chat, extra_args, workdir, env, lm_eval):
    """(command, completed process, errors of ``answer``, output folder) of one lm_eval run."""
    workdir = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="lm_eval_"))
    output_dir = workdir / "lm_eval_output"
    task_arg = tasks if isinstance(tasks, str) else ",".join(tasks)
    with ScriptedOpenAIServer(answer) as server:
        command = [
            *(lm_eval or lm_eval_command()),
            *model_args(server, chat=chat),
            "--tasks",
            task_arg,
            "--batch_size",
            "1",
            "--output_path",
            str(output_dir),
            "--log_samples",
            *(["--include_path", str(include_path)] if include_path is not None else []),
            *extra_args,
        ]
        done = run_offline(command, workdir, env)
        errors = list(server.errors)
    return command, done, errors, output_dir


def run_hf_lm_eval(
    model_args: str,
    tasks: str,
    workdir: Path,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    *,
    python: Path,
) -> Path:
    """``lm_eval --model hf`` on the CPU with ``--log_samples`` (batch size 1), run by
    ``python`` (one that imports torch: the ``hf_python`` fixture, ``support.hf_python``); the
    output folder. A failing run raises ``AssertionError`` with the tail of its output."""
    output = workdir / "runs"
    command = [
        str(python), "-m", "lm_eval",
        "--model", "hf",
        "--model_args", model_args,
        "--device", "cpu",
        "--tasks", tasks,
        "--batch_size", "1",
        "--output_path", str(output),
        "--log_samples",
        *extra_args,
    ]  # fmt: skip
    done = run_offline(command, workdir, env)
    assert done.returncode == 0, (done.stdout + done.stderr)[-_TAIL_CHARS:]
    return output


def _constant(name: str) -> float:
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[name]
