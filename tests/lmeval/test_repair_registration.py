"""``sqlbench-repair`` is registered in lm-eval's model registry without hiding its own models.

lm-eval 0.4.13 imports ``lm_eval.models`` (which registers the built-in models) only while the
registry is empty; ``discovery.ModelsImportHook`` registers ours right after that import. Each
probe runs in a fresh interpreter, so the ``.pth`` start-up hook is the one that acts.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from sqlbench_lmeval.lmeval import discovery

PROBE = textwrap.dedent(
    """
    import json, sys
    from lm_eval.api.registry import get_model, model_registry
    builtin = get_model("local-chat-completions").__name__
    before = "sqlbench_lmeval.lmeval.repair" in sys.modules
    repair = get_model("sqlbench-repair")
    print(json.dumps({
        "builtin": builtin,
        "hf_listed": "hf" in model_registry.keys(),
        "repair": f"{repair.__module__}.{repair.__name__}",
        "repair_imported_before_asked": before,
    }))
    """
)


def probe(env_extra=None) -> subprocess.CompletedProcess:
    import os

    env = {k: v for k, v in os.environ.items() if k != discovery.DISABLE_ENV}
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300
    )


def test_builtin_models_stay_resolvable_and_ours_is_found_lazily():
    done = probe()
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == {
        "builtin": "LocalChatCompletion",
        "hf_listed": True,
        "repair": "sqlbench_lmeval.lmeval.repair.RepairModel",
        "repair_imported_before_asked": False,
    }


def test_start_up_arms_the_models_finder_without_importing_lm_eval():
    code = (
        "import sys; print([type(f).__name__ for f in sys.meta_path if 'ImportHook' in "
        "type(f).__name__], 'lm_eval' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split("] ")[1].strip() == "False"
    assert "ModelsImportHook" in done.stdout and "TasksImportHook" in done.stdout


def test_discovery_switched_off_registers_nothing():
    done = probe({discovery.DISABLE_ENV: "1"})
    assert done.returncode != 0
    assert "sqlbench-repair" in done.stderr  # lm-eval's "no model for this name found"
