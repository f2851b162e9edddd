"""Run many jobs in parallel worker processes that can be killed and replaced:
:func:`execute_many` runs one batch (lazy jobs in, outcomes out in input order, a watchdog
that kills a hung worker, a second run for a job whose worker died, the evaluation's own
failures raised as ``EvaluationUnavailable``), and a :class:`WorkerPool` keeps the workers
for all batches of a scoring run (why it looks like this: docs/engines.md#worker-processes).
"""

from __future__ import annotations

import itertools
import math
import os
import pickle
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from tqdm.auto import tqdm

from sqlbench_lmeval.execution.job import DEFAULT_LIMITS, Job, Limits
from sqlbench_lmeval.execution.outcome import Outcome, Status
from sqlbench_lmeval.execution.protocol import HEADER, encode_frame
from sqlbench_lmeval.execution.runner import describe, execute
from sqlbench_lmeval.execution.unavailable import EvaluationUnavailable
from sqlbench_lmeval.execution.worker import DEATH_SIGNAL_ARGUMENT, PARENT_ARGUMENT

KILL_GRACE_S = 2.0  # extra time before the watchdog kills a worker whose engine did not stop
MAX_CHUNK = 32  # jobs per message to a worker
READ_SIZE = 1 << 20
BATCH_WAIT_S = 0.005
STARTUP_FAILURES_ALLOWED = 3
OPENING_DEATHS_ALLOWED = 2  # workers that die opening a database before the batch stops
#: How long a worker may take to open a database (and run its setup hook) before it is killed.
OPENING_WAIT_S = 60.0
STOP_WAIT_S = 2.0  # how long a worker told to stop may take to close its connections
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


def default_workers() -> int:
    """CPUs this process may use (affinity-aware), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def execute_many(
    jobs: Iterable[Job],
    limits: Limits = DEFAULT_LIMITS,
    *,
    workers: int | None = None,
    progress: str | None = None,
    expected: int | None = None,
    pool: WorkerPool | None = None,
    keep: Callable[[int, Outcome], Outcome] | None = None,
    more: Callable[[], list[Job] | None] | None = None,
) -> list[Outcome]:
    """Run ``jobs`` in worker processes; one Outcome per job, in input order.

    ``workers`` defaults to the CPU count; ``workers=0`` runs everything in this process (no
    isolation: for debugging only). ``pool``: an open :class:`WorkerPool` whose workers run the
    batch and stay for the next one; its size then stands for ``workers``. Without one, the
    batch starts its own workers and stops them at its end.
    ``progress`` is a tqdm description, or None for no bar.
    A job with its own ``limits`` runs under those, the others under ``limits``.
    ``jobs`` without a length is consumed lazily, while earlier jobs run; ``expected`` is then
    about how many it yields (chunk size and the bar's total; any count
    is handled: fewer jobs count the rest as done, so the total the bar showed never drops).
    ``keep(index, outcome)``, if given, is what the batch keeps of each outcome as it arrives
    (e.g. ``HeldResults.keep``, which bounds the memory of many large results).
    ``more``, if given, is asked for further jobs once ``jobs`` is exhausted, again each time
    results have come in (jobs that depend on earlier results: they join the batch instead of
    waiting for its end): a list (empty: none yet), or None once no more will come; their
    outcomes follow those of ``jobs``, in the order given.
    Bad SQL never raises; a failure of the evaluation itself (no worker starts, a database
    cannot be opened, a server stays gone: see ``execution.unavailable``) raises
    :class:`EvaluationUnavailable` and ends the batch.
    """
    if pool is not None:
        if pool.closed:
            raise ValueError("execute_many: the worker pool is closed")
        workers = pool.size
    if isinstance(jobs, Sequence):
        jobs, expected = iter(jobs), len(jobs)
    source = iter(jobs)
    first = next(source, None)  # no worker starts for an empty batch
    if first is None:
        return []
    source = itertools.chain([first], source)
    bar = _progress_bar(expected, progress)
    try:
        if workers == 0:
            results = []
            # In this process every result is in when ``more`` is asked: [] means no more.
            extra = iter(lambda: (more() or None) if more is not None else None, None)
            for job in itertools.chain(source, itertools.chain.from_iterable(extra)):
                outcome = execute(job, job.limits or limits)
                results.append(outcome if keep is None else keep(len(results), outcome))
                bar.update(1)
            _settle_total(bar, len(results))
            return results
        count = min(workers or default_workers(), expected or MAX_CHUNK)
        return _Batch(source, limits, count, bar, expected, pool, keep, more).run()
    finally:
        bar.close()


class WorkerPool:
    """Worker processes shared by the batches of one run, stopped when it closes.

    Use it as a context manager around the batches (``pool=`` of :func:`execute_many`,
    ``GoldCache.run``, ``GoldCache.run_together``); no worker process is left once the ``with``
    ends, also when its body raises. Workers start with the first batch that needs them. Between
    batches the pool holds only idle workers (docs/engines.md#worker-processes); ``workers`` as for
    :func:`execute_many` (0: every batch runs in this process).
    """

    def __init__(self, workers: int | None = None) -> None:
        self.size = default_workers() if workers is None else workers
        self.closed = False
        self._idle: list[_Worker] = []

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def pids(self) -> list[int]:
        """The process ids of the idle workers (between batches: all of them)."""
        return [worker.proc.pid for worker in self._idle]

    def close(self) -> None:
        """Stop every worker (each closes its connections first, as at a batch's end)."""
        self.closed = True
        self.renew()

    def renew(self) -> None:
        """Stop the idle workers, so the next batch runs on fresh ones: for a re-run that
        promises a fresh process. (Starting them beside the pool's instead would hold twice the
        server sessions a run is documented to need.)"""
        idle, self._idle = self._idle, []
        _stop_all(idle, kill=False)

    def _take(self, count: int) -> list[_Worker]:
        """Up to ``count`` idle workers for a batch; one that died while idle (its death is
        no job's) is reaped and left out, and the batch starts another."""
        taken: list[_Worker] = []
        while self._idle and len(taken) < count:
            worker = self._idle.pop(0)
            if worker.proc.poll() is None:
                taken.append(worker)
            else:
                worker.stop(kill=True)
        return taken

    def _give_back(self, worker: _Worker) -> bool:
        """Keep ``worker`` for the next batch if it is idle and alive; False if not kept."""
        if self.closed or worker.pending or worker.outbuf or worker.proc.poll() is not None:
            return False
        self._idle.append(worker)
        return True


class _NoBar:
    total = None

    def update(self, n: int = 1) -> None:
        pass

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass


def _settle_total(bar, made: int) -> None:
    """Once the source is exhausted: a bar that expected more jobs than were made (answers
    refused before they run, duplicate samples) counts the shortfall as done, so the total it
    showed from the start stays; one that expected fewer, or none, shows the real count."""
    if bar.total is not None and made < bar.total:
        bar.update(bar.total - made)
    elif bar.total != made:
        bar.total = made
        bar.refresh()


def _progress_bar(total: int | None, description: str | None):
    if description is None:
        return _NoBar()
    return tqdm(total=total, desc=description, unit="query")


class _Worker:
    """Parent-side handle of one worker process and its in-flight jobs."""

    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [_PACKAGE_ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        )
        # The worker ends when this process does (worker.end_with_parent): it watches the read
        # end of this pipe, whose write end only this process holds, until the kernel closes it.
        watched, self.lifeline = os.pipe()
        command = [sys.executable, "-m", "sqlbench_lmeval.execution.worker"]
        command += [PARENT_ARGUMENT, f"{os.getpid()}:{watched}"]
        if threading.current_thread() is threading.main_thread():
            command.append(DEATH_SIGNAL_ARGUMENT)
        try:
            self.proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                bufsize=0,
                pass_fds=(watched,),
            )
        except BaseException:
            os.close(self.lifeline)
            raise
        finally:
            os.close(watched)
        self.rfd = self.proc.stdout.fileno()
        self.wfd = self.proc.stdin.fileno()
        os.set_blocking(self.wfd, False)
        self.inbuf = bytearray()
        self.outbuf = bytearray()
        self.pending: deque[int] = deque()
        self.ready = False
        self.opening = False  # between its "opening" and "alive" messages
        self.busy_since = 0.0
        self.used = False  # has been sent a job (a job that killed a worker reruns on a fresh one)
        self.send(("init", list(sys.path)))

    def send(self, message: object) -> None:
        self.send_all([message])

    def send_all(self, messages: Sequence[object]) -> None:
        for message in messages:
            self.outbuf += encode_frame(message)
        self.flush()

    def flush(self) -> None:
        """Write as much of the buffer as the pipe takes now (non-blocking)."""
        try:
            while self.outbuf:
                written = os.write(self.wfd, self.outbuf)
                del self.outbuf[:written]
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self.outbuf.clear()  # the worker is gone; its EOF on stdout reports it

    def frames(self, data: bytes) -> list:
        self.inbuf += data
        messages = []
        offset = 0
        view = memoryview(self.inbuf)
        while len(self.inbuf) - offset >= HEADER.size:
            (size,) = HEADER.unpack_from(self.inbuf, offset)
            end = offset + HEADER.size + size
            if end > len(self.inbuf):
                break
            messages.append(pickle.loads(view[offset + HEADER.size : end]))
            offset = end
        view.release()
        del self.inbuf[:offset]
        return messages

    def stop(self, kill: bool) -> None:
        _stop_all([self], kill)

    def close_lifeline(self) -> None:
        if self.lifeline is not None:
            os.close(self.lifeline)
            self.lifeline = None

    def close_pipes(self) -> None:
        """Close both pipes: on EOF the worker closes its connections and exits."""
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass


def _stop_all(workers: Sequence[_Worker], kill: bool) -> None:
    """Stop ``workers``: killed, or told to stop (EOF on their input, so each closes its
    connections: servers log a connection dropped without a goodbye) and killed if they do not
    exit within ``STOP_WAIT_S``. They stop side by side; none is left running, also when the
    wait is interrupted (Ctrl-C)."""
    try:
        for worker in workers:
            if kill and worker.proc.poll() is None:
                worker.proc.kill()
            worker.close_pipes()
        deadline = time.monotonic() + STOP_WAIT_S
        for worker in workers:
            try:
                worker.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.proc.kill()
    finally:
        for worker in workers:
            if worker.proc.poll() is None:
                worker.proc.kill()
            worker.proc.wait()
            # Only now: a worker whose lifeline closed first would exit without closing its
            # server sessions.
            worker.close_lifeline()


class _Batch:
    """One execute_many call: the queue, the workers and the event loop that drives them."""

    def __init__(
        self,
        source: Iterator[Job],
        limits: Limits,
        workers: int,
        bar,
        expected: int | None,
        pool: WorkerPool | None = None,
        keep: Callable[[int, Outcome], Outcome] | None = None,
        more: Callable[[], list[Job] | None] | None = None,
    ) -> None:
        self.pool = pool
        self.keep = keep
        self.more = more
        self.source: Iterator[Job] | None = source  # None once every job has been taken
        self.jobs: list[Job] = []
        self.limits = limits
        self.count = workers
        self.bar = bar
        self.results: list[Outcome | None] = []
        self.remaining = 0  # jobs taken from the source and not finished
        self.queue: deque[int] = deque()
        size = expected or MAX_CHUNK * workers * 4
        self.chunk = max(1, min(MAX_CHUNK, math.ceil(size / (workers * 4))))
        # Jobs taken from the source ahead of the workers: enough that none waits for work.
        self.queue_target = 2 * self.chunk * workers
        self.kill_after = limits.timeout_s + KILL_GRACE_S
        self.selector = selectors.DefaultSelector()
        self.workers: list[_Worker] = []
        self.startup_failures = 0
        self.opening_deaths = 0
        self.stolen: set[int] = set()
        # Jobs whose worker died under them once: each runs again alone on a fresh worker.
        self.died_once: dict[int, str] = {}
        self.rerun: deque[int] = deque()

    def run(self) -> list[Outcome]:
        ended = False
        try:
            for worker in self.pool._take(self.count) if self.pool is not None else []:
                self._add_worker(worker)
            while len(self.workers) < self.count:
                self._start_worker()
            while self.remaining or self.source is not None:
                producing = self._take_jobs()
                self._dispatch()
                # While the source makes jobs the workers may need soon, only look for
                # results and go on making jobs; otherwise wait for the workers, while any
                # job is out: once the last has finished and ``more`` has said none follow,
                # no worker has anything to say, and a wait sat out its whole 0.5 s
                # (measured: 0.5 s of a LogicCat score run's 4.8 s, after every result was in).
                self._wait_and_read(block=not producing and self.remaining > 0)
                self._watchdog()
                if (
                    not producing
                    and all(len(w.pending) > self.chunk // 2 for w in self.workers)
                    and not any(w.inbuf for w in self.workers)
                ):
                    # Every worker has work queued: let results pile up a little, so the
                    # parent wakes once per many results instead of once per query (on a
                    # 2-core machine those wake-ups compete with the workers for CPU). Not
                    # while a result is half read: its worker waits on the full pipe, and a
                    # 32 MiB result would come 64 KiB per pause (measured: 1.4 s an answer).
                    time.sleep(BATCH_WAIT_S)
            ended = True
        finally:
            for worker in self.workers:
                self._unregister(worker)
            # A batch that raised stops all its workers; one that ended keeps the idle ones
            # in its pool (any other still runs a duplicate whose result no longer counts).
            kept = ended and self.pool is not None
            stopping = [w for w in self.workers if not (kept and self.pool._give_back(w))]
            self.workers = []
            try:
                _stop_all([w for w in stopping if w.pending], kill=True)
            finally:
                _stop_all([w for w in stopping if not w.pending], kill=False)
                self.selector.close()
        return self.results  # type: ignore[return-value]

    def _take_jobs(self) -> bool:
        """Take up to one chunk from the source while the queue is short; True while more
        jobs should be made before waiting for the workers. Once the source is exhausted,
        ``more`` (if any) is asked each round for further jobs, until it answers None."""
        if self.source is None or len(self.queue) >= self.queue_target:
            return False
        taken = self._append(itertools.islice(self.source, self.chunk))
        if taken < self.chunk:
            extra = None if self.more is None else self.more()
            if extra is None or (not extra and not self.remaining):  # none can follow
                self.source = None
                _settle_total(self.bar, len(self.jobs))
                return False
            self._append(extra)
            self.source = iter(())  # ask ``more`` again once results have come in
            return False
        return len(self.queue) < self.queue_target

    def _append(self, jobs: Iterable[Job]) -> int:
        taken = 0
        for job in jobs:
            self.queue.append(len(self.jobs))
            self.jobs.append(job)
            self.results.append(None)
            taken += 1
        self.remaining += taken
        return taken

    # -- workers --------------------------------------------------------------------------

    def _start_worker(self) -> None:
        self._add_worker(_Worker())

    def _add_worker(self, worker: _Worker) -> None:
        self.workers.append(worker)
        self.selector.register(worker.rfd, selectors.EVENT_READ, worker)

    def _unregister(self, worker: _Worker) -> None:
        for fd in (worker.rfd, worker.wfd):
            try:
                self.selector.unregister(fd)
            except (KeyError, ValueError):
                pass

    def _retire(self, worker: _Worker, status: Status | None, message: str) -> None:
        """Stop ``worker``; mark its running job (if any) with ``status``; re-queue the rest."""
        self._unregister(worker)
        worker.stop(kill=True)
        self.workers.remove(worker)
        if not worker.ready:
            self.startup_failures += 1
            if self.startup_failures >= STARTUP_FAILURES_ALLOWED:
                raise EvaluationUnavailable(
                    f"SQL worker processes fail to start ({message}, {self.startup_failures} "
                    f"times; their error output is above); command: {sys.executable} -m "
                    "sqlbench_lmeval.execution.worker"
                )
        elif worker.opening and worker.pending:
            # Not the query's fault: the database or its setup hook took the worker down.
            self.opening_deaths += 1
            if self.opening_deaths >= OPENING_DEATHS_ALLOWED:
                database = describe(self.jobs[worker.pending[0]].database)
                raise EvaluationUnavailable(
                    f"SQL worker processes die while opening the {database} ({message}, "
                    f"{self.opening_deaths} times)"
                )
        elif worker.pending and status is Status.CRASHED and self._first_death(worker):
            culprit = worker.pending.popleft()
            if self.results[culprit] is None:
                self.died_once[culprit] = message
                self.rerun.append(culprit)
        elif worker.pending and status is not None:
            culprit = worker.pending.popleft()
            if status is Status.CRASHED:
                message = (
                    f"{message} on both runs of this query, the second on a fresh worker "
                    f"(the first: {self.died_once[culprit]})"
                )
            self._finish(
                culprit, Outcome(status, error=message, elapsed_s=self._kill_after(culprit))
            )
        self.queue.extendleft(reversed([i for i in worker.pending if self.results[i] is None]))
        worker.pending.clear()
        if self.remaining or self.source is not None:
            self._start_worker()

    def _first_death(self, worker: _Worker) -> bool:
        """Whether the job ``worker`` was running has not had a worker die under it before."""
        return worker.pending[0] not in self.died_once

    def _death_message(self, worker: _Worker) -> str:
        code = worker.proc.wait()
        if code < 0:
            try:
                return f"worker process died (signal {signal.Signals(-code).name})"
            except ValueError:
                return f"worker process died (signal {-code})"
        return f"worker process exited with code {code}"

    # -- loop steps -----------------------------------------------------------------------

    def _dispatch(self) -> None:
        for worker in self.workers:
            if not worker.ready or len(worker.pending) >= self.chunk:
                continue
            if self.rerun and not worker.used:
                # Alone, so that a second death is this job's and no other job's.
                indices = [self.rerun.popleft()]
                if self.results[indices[0]] is not None:  # its stolen copy finished meanwhile
                    continue
            elif self.queue:
                indices = []
                while self.queue and len(indices) < self.chunk:
                    indices.append(self.queue.popleft())
            elif not worker.pending and self.source is None:
                indices = self._steal()
            else:
                continue
            if not indices:
                continue
            if not worker.pending:
                worker.busy_since = time.monotonic()
            worker.used = True
            # One message per limits among the jobs (most batches: one message), in one write.
            # Jobs of several limits alternate (an answer's runs on two copies, each scaled to
            # its copy): a message per run of equal limits took one write and one wake-up of the
            # worker for every job or two. The worker runs a message's jobs in order, so the
            # pending order is the grouped one.
            groups: dict[Limits, list[int]] = {}
            for index in indices:
                groups.setdefault(self._limits_of(index), []).append(index)
            worker.pending.extend(index for run in groups.values() for index in run)
            worker.send_all(
                [
                    ("run", limits, [(i, self.jobs[i]) for i in run])
                    for limits, run in groups.items()
                ]
            )
            self._watch_writes(worker)

    def _steal(self) -> list[int]:
        """For an idle worker once the queue is empty: the back half of the jobs still waiting
        behind another worker's running job (e.g. a 3 s query). Both copies may run; the first
        result counts and the batch ends without waiting for the other."""
        best: list[int] = []
        for other in self.workers:
            waiting = [
                i
                for i in list(other.pending)[1:]
                if self.results[i] is None and i not in self.stolen
            ]
            if len(waiting) > len(best):
                best = waiting
        taken = best[len(best) // 2 :]
        self.stolen.update(taken)
        return taken

    def _watch_writes(self, worker: _Worker) -> None:
        try:
            registered = self.selector.get_key(worker.wfd) is not None
        except KeyError:
            registered = False
        if worker.outbuf and not registered:
            self.selector.register(worker.wfd, selectors.EVENT_WRITE, worker)
        elif not worker.outbuf and registered:
            self.selector.unregister(worker.wfd)

    def _wait_and_read(self, block: bool = True) -> None:
        now = time.monotonic()
        wait = 0.5 if block else 0.0
        for worker in self.workers:
            if worker.pending:
                wait = min(wait, max(0.0, worker.busy_since + self._allowed(worker) - now))
        for key, _ in self.selector.select(timeout=wait):
            worker: _Worker = key.data
            if worker not in self.workers:
                continue  # retired earlier in this round
            if key.fd == worker.wfd:
                worker.flush()
                self._watch_writes(worker)
                continue
            try:
                data = os.read(worker.rfd, READ_SIZE)
            except OSError:
                data = b""
            if not data:
                self._retire(worker, Status.CRASHED, self._death_message(worker))
                continue
            self._receive(worker, worker.frames(data))

    def _receive(self, worker: _Worker, messages: list) -> None:
        now = time.monotonic()
        for message in messages:
            if message[0] == "ready":
                worker.ready = True
                self.startup_failures = 0
            elif message[0] == "opening":
                worker.opening = True
            elif message[0] == "alive":
                worker.opening = False
            elif message[0] == "unavailable":
                raise EvaluationUnavailable(message[2])
            else:
                index, outcome = message
                if worker.pending and worker.pending[0] == index:
                    worker.pending.popleft()
                elif index in worker.pending:
                    worker.pending.remove(index)
                else:
                    continue
                self._finish(index, outcome)
            worker.busy_since = now

    def _finish(self, index: int, outcome: Outcome) -> None:
        if self.results[index] is None:
            self.results[index] = outcome if self.keep is None else self.keep(index, outcome)
            self.remaining -= 1
            self.bar.update(1)

    def _limits_of(self, index: int) -> Limits:
        return self.jobs[index].limits or self.limits

    def _kill_after(self, index: int) -> float:
        """How long job ``index`` may run: its limit and :data:`KILL_GRACE_S`."""
        limits = self.jobs[index].limits
        return self.kill_after if limits is None else limits.timeout_s + KILL_GRACE_S

    def _allowed(self, worker: _Worker) -> float:
        """How long ``worker`` may go without a message before it is killed: its running
        query's limit and grace, or, while it opens a database, :data:`OPENING_WAIT_S` (opening
        is the evaluation's cost, never a query's, and a loaded machine slows it too)."""
        if worker.opening:
            return OPENING_WAIT_S
        return self._kill_after(worker.pending[0]) if worker.pending else self.kill_after

    def _watchdog(self) -> None:
        now = time.monotonic()
        for worker in list(self.workers):
            if worker.pending and now - worker.busy_since > self._allowed(worker):
                self._retire(
                    worker,
                    Status.TIMEOUT,
                    f"did not stop within {self._allowed(worker):g} s; worker process killed",
                )
