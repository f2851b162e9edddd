"""The worker process (``python -m sqlbench_lmeval.execution.worker``, started by
:mod:`sqlbench_lmeval.execution.pool`): reads batches of jobs on stdin, writes one result frame
per job (the messages: docs/engines.md#worker-processes)."""

from __future__ import annotations

import os
import pickle
import sys

from sqlbench_lmeval.execution.protocol import HEADER, write_frame


def read_exact(fd: int, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = os.read(fd, size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


# Address-space cap per worker: twice the engine memory limit plus room for the interpreter,
# libraries and thread stacks. A runaway allocation the engines do not account for (DuckDB's
# repeat('x', 2e9)) then fails as an out-of-memory error instead of pushing the machine into
# swap or the OOM killer.
ADDRESS_SPACE_BASE_MB = 1024


def cap_address_space(memory_mb: int) -> None:
    try:
        import resource

        limit = (2 * int(memory_mb) + ADDRESS_SPACE_BASE_MB) * 1024 * 1024
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):
        pass  # not on this platform: the engine limits and the watchdog remain


def main() -> int:
    try:
        return _serve()
    except (BrokenPipeError, KeyboardInterrupt):
        return 0  # the parent went away or stopped the batch
    finally:
        from sqlbench_lmeval.execution import runner

        runner.close_all()  # servers log connections that vanish without a goodbye


def _serve() -> int:
    # The protocol gets private copies of stdin/stdout; fd 1 then points at stderr so that a
    # print() in a setup hook or library cannot corrupt the frames.
    inp = os.dup(0)
    out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    from sqlbench_lmeval.execution import runner
    from sqlbench_lmeval.execution.outcome import Outcome, Status
    from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable

    def heartbeat() -> None:
        write_frame(out, ("alive",))

    capped_mb = None
    while True:
        header = read_exact(inp, HEADER.size)
        if header is None:
            return 0  # parent closed the pipe: done
        payload = read_exact(inp, HEADER.unpack(header)[0])
        if payload is None:
            return 0
        message = pickle.loads(payload)
        if message[0] == "init":
            sys.path[:] = message[1]
            write_frame(out, ("ready",))
            continue
        _, limits, items = message
        if limits.memory_mb != capped_mb:
            cap_address_space(limits.memory_mb)
            capped_mb = limits.memory_mb
        for index, job in items:
            if runner.strip_sql(job.sql) is not None and not runner.is_open(job.database, limits):
                write_frame(out, ("opening",))
                try:
                    runner.connection(job.database, limits)
                except Exception:
                    pass  # execute() below retries it and reports what stays broken
                write_frame(out, ("alive",))
            try:
                outcome = runner.execute(job, limits, heartbeat=heartbeat)
                write_frame(out, (index, outcome))
            except EvaluationUnavailable as error:
                write_frame(out, ("unavailable", index, str(error)))
                return 0
            except Exception as error:  # e.g. a result value that cannot be pickled
                message_text = f"{type(error).__name__}: {error}"
                write_frame(out, (index, Outcome(Status.ERROR, error=message_text)))


if __name__ == "__main__":
    sys.exit(main())
