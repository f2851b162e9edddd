"""Run the real ``lm_eval`` CLI with ``--model sqlbench-repair`` around the scripted chat server.

``run_repair(server, tasks, workdir, retries=3, extra_args=[...], env={...})`` returns
``(results, samples)`` like ``support.lm_eval_run.run_lm_eval``; the caller owns ``server``
(a running ``ScriptedOpenAIServer``), so it can read ``server.requests`` afterwards.
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
    output_dir = workdir / "out"
    command = [
        *lm_eval_command(),
        "--model", "sqlbench-repair",
        "--model_args", f"base=local-chat-completions,retries={retries},"
        f"base_url={server.chat_url},model=test",
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
