"""The worker process (``python -m sqlbench_lmeval.execution.worker``, started by
:mod:`sqlbench_lmeval.execution.pool`): reads batches of jobs on stdin, writes one result frame
per job (the messages: docs/engines.md#worker-processes)."""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading

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


#: Arguments the pool starts a worker with (``end_with_parent``): the parent's process id, the
#: read end of a pipe only the parent holds open, and whether the kernel may signal the
#: worker when the parent dies.
PARENT_ARGUMENT = "--parent"
DEATH_SIGNAL_ARGUMENT = "--kill-with-parent"
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def end_with_parent(parent_pid: int, parent_pipe: int, death_signal: bool) -> None:
    """Make this worker end when its parent does, whatever ended the parent (SIGKILL too;
    the rule: docs/engines.md#worker-processes).

    Two ways, so that each covers what the other cannot: a thread that waits on the read end
    of ``parent_pipe``, whose write end only the parent holds, and exits the process once the
    kernel closes it (every platform, every way the parent ends); and on Linux, with
    ``death_signal``, ``PR_SET_PDEATHSIG``: the kernel sends SIGKILL when the parent dies,
    also if a process the parent forked still holds the pipe. ``death_signal`` is given only
    by a parent that started the worker from its main thread: the kernel sends the signal when
    the starting *thread* ends."""
    if death_signal and sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the pipe below still ends the worker
    watcher = threading.Thread(
        target=_exit_when_closed, args=(parent_pipe,), name="parent-watch", daemon=True
    )
    watcher.start()
    if os.getppid() != parent_pid:  # the parent died before the watch began
        os._exit(1)


def _exit_when_closed(fd: int) -> None:
    try:
        while os.read(fd, 1):
            pass  # the parent never writes; anything read is ignored
    except OSError:
        pass
    # The parent is gone: nobody reads this worker's results; end now, even mid-query.
    os._exit(1)


def _parse_parent(argv: list[str]) -> tuple[int, int, bool] | None:
    if PARENT_ARGUMENT not in argv:
        return None
    pid, fd = argv[argv.index(PARENT_ARGUMENT) + 1].split(":")
    return int(pid), int(fd), DEATH_SIGNAL_ARGUMENT in argv


def main(argv: list[str] | None = None) -> int:
    parent = _parse_parent(sys.argv[1:] if argv is None else argv)
    if parent is not None:
        end_with_parent(*parent)
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
