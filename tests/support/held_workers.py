"""A setup-hook module that holds a worker in a query until the test lets it go, for tests that
act on workers while they run a query (kill them, kill their parent).

``HOOKS`` is the module's text, to be written as an importable file: its ``register`` gives
each connection ``wait_to_be_killed()``, which writes the worker's pid as a file into
``$KILL_TEST_FOLDER`` and then waits until a file ``go`` appears there (at most 120 s).
"""

from __future__ import annotations

import textwrap

HOOKS = textwrap.dedent(
    """
    import os
    import time

    FOLDER = os.environ["KILL_TEST_FOLDER"]


    def register(conn):
        conn.create_function("wait_to_be_killed", 0, wait_to_be_killed)


    def wait_to_be_killed():
        with open(os.path.join(FOLDER, str(os.getpid())), "w"):
            pass
        # Until the test has killed as many workers as it means to (then "go" exists).
        for _ in range(6000):
            if os.path.exists(os.path.join(FOLDER, "go")):
                return 1
            time.sleep(0.02)
        return 0
    """
)
