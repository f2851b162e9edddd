"""Run the real ``lm_eval`` CLI with ``--model sqlbench-repair`` around the scripted chat server.

``run_repair(server, tasks, workdir, retries=3, extra_args=[...], env={...})`` returns
``(results, samples)`` like ``support.lm_eval_run.run_lm_eval``; the caller owns ``server``
(a running ``ScriptedOpenAIServer``), so it can read ``server.requests`` afterwards.
``run_wrapped(server, model, model_args, tasks, workdir, ...)`` runs any of our wrapper models
(``sqlbench-metered``, or the repair model over it) the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from support.lm_eval_run import lm_eval_command, read_outputs, run_offline


def run_repair(
    server,
    tasks: str,
    workdir: Path,
    *,
    retries: int = 3,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> tuple[dict, dict[str, list[dict]]]:
    return run_wrapped(
        server,
        "sqlbench-repair",
        f"base=local-chat-completions,retries={retries}",
        tasks,
        workdir,
        extra_args=extra_args,
        env=env,
    )


def run_wrapped(
    server,
    model: str,
    model_args: str,
    tasks: str,
    workdir: Path,
    *,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> tuple[dict, dict[str, list[dict]]]:
    """``lm_eval --model <model> --model_args <model_args>,base_url=<server's chat route>,
    model=test`` (any of our wrapper models), as :func:`run_repair` runs it."""
    output_dir = workdir / "out"
    command = [
        *lm_eval_command(),
        "--model", model,
        "--model_args", f"{model_args},base_url={server.chat_url},model=test",
        "--apply_chat_template",
        "--tasks", tasks,
        "--batch_size", "1",
        "--output_path", str(output_dir),
        "--log_samples",
        *extra_args,
    ]  # fmt: skip
    done = run_offline(command, workdir, env)
    assert done.returncode == 0 and not server.errors, (
        f"{' '.join(command)}\n{server.errors}\n{(done.stdout + done.stderr)[-6000:]}"
    )
    return read_outputs(output_dir)
