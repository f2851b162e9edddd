"""A Python that runs lm-eval's ``hf`` model, for the tests that run ``lm_eval --model hf``
(``tests/e2e/test_hf_model.py``, the README's quickstart; ``tests/submission/test_context.py``).

The suite's own environment holds no torch (``bash .ci/run`` installs the ``dev`` extra alone):
where torch can be imported, every ``lm_eval`` run imports it, to seed it and to describe the
machine (``torch.utils.collect_env``, which also starts ``pip list``), in the fifty-odd runs of
the suite that use no model of their own (measured: ``lm_eval`` of 6 ``logiccat_mini`` items
against the scripted server, 6.2 s of CPU with torch installed, 3.2 s without). These tests get a
virtualenv instead: lm-eval's ``hf`` extra (torch, accelerate, peft) installed there by pip,
torch pinned to a CPU build (on x86_64 a bare ``torch`` resolves to a CUDA build of several GB;
machines of CI's kind keep this wheel for Python 3.11 on disk), and after it on the path the
suite's own packages, through a path file. It is made once per run and shared by the workers
(:func:`hf_python`); where that build is not to be had (another Python) the tests skip, saying
why. In an environment that already imports torch (a developer's ``pip install -e
".[dev,hf]"``) it is that environment's own interpreter.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterable
from pathlib import Path

import pytest

from sqlbench_lmeval.build_lock import exclusive_build

TORCH = "torch==2.13.0+cpu"
#: What ``lm_eval --model hf`` imports beyond the suite's own packages.
NEEDED = ("torch", "transformers", "accelerate")


def hf_python(folder: Path) -> Path:
    """The interpreter of the ``hf`` virtualenv in ``folder`` (made there by the first caller
    of the run, under the folder's build lock), or this one where it imports :data:`NEEDED`;
    a skip naming pip's complaint when torch's CPU build cannot be installed."""
    if all(importlib.util.find_spec(name) is not None for name in NEEDED):
        return Path(sys.executable)
    venv = folder / "venv"
    done = folder / "made"  # written last: a venv a killed run left half made is made again
    with exclusive_build(folder, []):
        if not done.exists():
            shutil.rmtree(venv, ignore_errors=True)
            failure = _make(venv)
            if failure is not None:
                pytest.skip(
                    f"needs lm-eval's hf extra with {TORCH}, which pip could not install here: "
                    f"{failure}"
                )
            done.write_text("", encoding="utf-8")
    return venv / "bin" / "python"


def _make(venv: Path) -> str | None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(
        subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-c",
                "import sysconfig; print(sysconfig.get_path('purelib'))",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    # The suite's site-packages after the venv's own (addsitedir also reads its path files:
    # the editable install of this checkout, the task-discovery hook); the suite's pip runs as
    # this venv's, installing into it and never touching the suite's packages.
    ours = sysconfig.get_path("purelib")
    (site / "suite.pth").write_text(f"import site; site.addsitedir({ours!r})\n", encoding="utf-8")
    lm_eval = f"lm-eval[hf]=={importlib.metadata.version('lm_eval')}"
    installed = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            TORCH,
            lm_eval,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if installed.returncode != 0:
        return (
            installed.stderr.strip().splitlines()[-1] if installed.stderr.strip() else "no output"
        )
    return None


def write_tiny_causal_lm(python: Path, folder: Path, texts: Iterable[str]) -> Path:
    """``support.tiny_hf_model.write_tiny_causal_lm`` run by ``python`` (it needs torch)."""
    folder.mkdir(parents=True, exist_ok=True)
    texts_file = folder.parent / f"{folder.name}.texts.json"
    texts_file.write_text(json.dumps(list(texts)), encoding="utf-8")
    tests = Path(__file__).resolve().parents[1]
    subprocess.run(
        [str(python), "-m", "support.tiny_hf_model", str(folder), str(texts_file)],
        cwd=tests,
        check=True,
    )
    return folder
