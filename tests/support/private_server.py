"""A private database server for tests, started and stopped by one of the ``.ci`` scripts.

``ScriptServer(script, prefix, name, *options)`` runs ``bash <script> start <folder> <options>``
in a new temporary folder (the script initialises a data directory there, starts the server and
prints its admin URL last) and ``stop`` runs ``bash <script> stop <folder>`` and removes the
folder.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

CI = Path(__file__).resolve().parents[2] / ".ci"


class ScriptServer:
    """A server from ``.ci/<script>`` in a temporary folder; ``url`` is its admin URL."""

    def __init__(self, script: str, prefix: str, name: str, *options: str) -> None:
        self.script = CI / script
        # Short path: a unix socket path must stay under ~100 bytes.
        self.folder = Path(tempfile.mkdtemp(prefix=prefix))
        started = subprocess.run(
            ["bash", str(self.script), "start", str(self.folder), *options],
            capture_output=True,
            text=True,
            check=False,
        )
        if started.returncode != 0:
            self.stop()
            raise RuntimeError(f"could not start a private {name}: {started.stderr.strip()}")
        self.url = started.stdout.strip().splitlines()[-1]

    def stop(self) -> None:
        subprocess.run(["bash", str(self.script), "stop", str(self.folder)], check=False)
        shutil.rmtree(self.folder, ignore_errors=True)
