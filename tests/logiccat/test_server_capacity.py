"""How many connections each command holds on a shared server, and machines that fit in it.

The bound (docs: "Connections to a shared server"): a scoring machine (``score``, ``gold``)
with W workers holds at most 3 W + 1 connections: per worker its one session for every
database of the server, the one that kills its queries, and one the server is still ending
after a kill (a ``KILL CONNECTION`` ends on the server a moment after the worker has opened its
next session: measured), plus the parent's checks before the run; ``prepare --engine mysql``
with W workers 3 W + 2 (its admin connection and the reader's login proof beside its gold
workers). Each command is measured alone on the session's server with ``FLUSH STATUS`` and
``Max_used_connections`` (the connections open at the flush are counted apart); then three
scoring machines (three caches) and a re-preparing one run at once on the same server with
``max_connections`` set to exactly what the bound says they need, and all finish with the same
results. Last, MariaDB's refusal at max_connections (1040) is told apart from a server that is
gone, and an account with no connection left (its MAX_USER_CONNECTIONS reached: unlike a slot
of max_connections, no connection ending elsewhere can free it while the test holds it) is
waited for, and says so, rather than stopping the run; one that stays full stops it (exit 3)
naming the cause.

Every machine scores a sample over many databases with a few answers that make the run use
its killer connection: ``SLEEP(30)`` under a 5 s limit (a timeout, ``KILL QUERY``) and a query
returning more rows than the cap (``KILL CONNECTION`` and a new session).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import logiccat_source

pymysql = pytest.importorskip("pymysql")

from sqlbench_lmeval import cli  # noqa: E402
from sqlbench_lmeval.execution import unavailable  # noqa: E402
from sqlbench_lmeval.execution.mysql import (  # noqa: E402
    connection_failure,
    is_busy,
    open_connection,
    parse_url,
)
from sqlbench_lmeval.execution.unavailable import ServerBusy  # noqa: E402
from sqlbench_lmeval.logiccat import server  # noqa: E402
from sqlbench_lmeval.logiccat.bundle import load_bundle  # noqa: E402
from sqlbench_lmeval.logiccat.gold import RANDOM  # noqa: E402

pytestmark = [pytest.mark.mysql, pytest.mark.slow]

WORKERS = 2
SCORING_BOUND = 3 * WORKERS + 1
PREPARE_BOUND = 3 * WORKERS + 2
# The machines score one category task, as in test_server_machines.py: every database, a
# quarter of the gold. Every 25th of its items is answered: 41 items on many databases.
TASK, CATEGORY = "logiccat_mathematical", "mathematical"
STRIDE = 25
# SLEEP(30) times out on any machine; no gold but RAND()'s (left out of the comparison) comes
# near it on a loaded one.
TIMEOUT = "5"
# Above every gold result (the most on MariaDB: item 1066, 2,002 rows, where its recursion
# stops at cte_max_recursion_depth): gold cut off by the limit would stop the run
# (docs/failures.md). MANY_ROWS returns 10,000 rows, past it, with a recursion only 100 deep.
MAX_ROWS = "4000"
SLEEPS = "SELECT SLEEP(30) AS slept"
MANY_ROWS = (
    "WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) "
    "SELECT a.i FROM n AS a CROSS JOIN n AS b"
)
UNAVAILABLE = 3


def predictions(cache: Path, unstable: set[int], path: Path) -> Path:
    """Gold's own query for every STRIDE-th item, but two that sleep and two that return more
    rows than the cap; RAND() gold and unstable orders left out (they differ between runs)."""
    lines = []
    task = [record for record in load_bundle(cache).records if record.category == CATEGORY]
    records = [
        record
        for record in task[::STRIDE]
        if record.id not in unstable and RANDOM not in record.flags
    ]
    for position, record in enumerate(records):
        answer = record.gold_sql_mysql
        if position in (3, 20):
            answer = SLEEPS
        elif position in (7, 30):
            answer = MANY_ROWS
        lines.append(json.dumps({"id": record.id, "prediction": f"```sql\n{answer}\n```"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def sqlbench(*argv: str) -> list[str]:
    return [sys.executable, "-m", "sqlbench_lmeval", *argv]


def score(answers: Path, cache: Path, output: Path, url: str) -> list[str]:
    return sqlbench(
        "score", TASK, str(answers), "--engine", "mysql", "--dialect", "mysql",
        "--cache-dir", str(cache), "--output", str(output), "--timeout", TIMEOUT,
        "--max-rows", MAX_ROWS, "--workers", str(WORKERS), "--no-progress", "--url", url,
    )  # fmt: skip


def prepare(prepared) -> list[str]:
    return sqlbench(
        "prepare", "logiccat", "--engine", "mysql", "--url", prepared.admin_url,
        "--source", str(logiccat_source()), "--cache-dir", str(prepared.cache),
        "--workers", str(WORKERS),
    )  # fmt: skip


def run(command: list[str]) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != server.URL_ENV}
    pipe = subprocess.PIPE
    return subprocess.Popen(command, stdout=pipe, stderr=pipe, env=env, text=True)


def finish(process: subprocess.Popen) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=1200)
    return process.returncode, out, err


class Admin:
    """An admin connection to the session's server, for its status and limit."""

    def __init__(self, url: str) -> None:
        self.conn = open_connection(parse_url(url))

    def value(self, sql: str) -> int:
        with self.conn.cursor() as cursor:
            cursor.execute(sql)
            return int(cursor.fetchone()[-1])

    def flush(self) -> int:
        """FLUSH STATUS; the connections open now (Max_used_connections starts from them)."""
        with self.conn.cursor() as cursor:
            cursor.execute("FLUSH STATUS")
        return self.value("SHOW GLOBAL STATUS LIKE 'Max_used_connections'")

    def max_used(self) -> int:
        return self.value("SHOW GLOBAL STATUS LIKE 'Max_used_connections'")

    def set_limit(self, limit: int) -> None:
        with self.conn.cursor() as cursor:
            cursor.execute(f"SET GLOBAL max_connections = {int(limit)}")

    def limit_reader(self, connections: int) -> None:
        """The reader account's MAX_USER_CONNECTIONS (0: no limit of its own)."""
        with self.conn.cursor() as cursor:
            cursor.execute("SELECT host FROM mysql.user WHERE user = 'logiccat_reader'")
            for (host,) in cursor.fetchall():
                cursor.execute(
                    f"ALTER USER 'logiccat_reader'@%s WITH MAX_USER_CONNECTIONS {int(connections)}",
                    (host,),
                )


@pytest.fixture
def admin(mysql_prepared):
    admin = Admin(mysql_prepared.admin_url)
    limit = admin.value("SELECT @@GLOBAL.max_connections")
    yield admin
    admin.set_limit(limit)
    admin.limit_reader(0)
    admin.conn.close()


def fresh_machine(folder: Path, prepared) -> Path:
    """A cache with the session's bundle and nothing else (no manifest, gold, option file)."""
    bundle_root = load_bundle(prepared.cache).root
    cache = folder / "cache"
    shutil.copytree(bundle_root, cache / bundle_root.relative_to(prepared.cache))
    return cache


@pytest.fixture
def answers(mysql_prepared, tmp_path) -> Path:
    unstable = set(mysql_prepared.document["unstable_order"])
    return predictions(mysql_prepared.cache, unstable, tmp_path / "predictions.jsonl")


def items_of_task(prepared) -> list:
    return [r for r in load_bundle(prepared.cache).records if r.category == CATEGORY]


def items_of(path: Path) -> list[dict]:
    return json.loads(path.read_text("utf-8"))["items"]


def same_items(one: list[dict], other: list[dict]) -> list:
    """The (id, field) pairs in which two runs differ, but for the items whose gold calls
    RAND() (they differ whenever gold runs again, on one machine too) and the work a stopped
    query had done when it was stopped (how far it got)."""

    def stopped(item: dict) -> bool:
        return item["status"] in ("timeout", "too_many_rows")

    return [
        (mine["id"], key)
        for mine, theirs in zip(one, other, strict=True)
        if RANDOM not in mine["flags"]
        for key in mine.keys() | theirs.keys()
        if mine.get(key) != theirs.get(key) and not (key == "work" and stopped(mine))
    ]


def test_each_command_holds_what_the_bound_says(mysql_prepared, admin, answers, tmp_path):
    url = mysql_prepared.reader_url_with_password()
    measured = {}
    scored = tmp_path / "s.json"
    commands = {
        "score": score(answers, fresh_machine(tmp_path / "s", mysql_prepared), scored, url),
        "gold": sqlbench(
            "gold", "logiccat", "--engine", "mysql", "--url", url, "--workers", str(WORKERS),
            "--cache-dir", str(fresh_machine(tmp_path / "g", mysql_prepared)),
            "--output", str(tmp_path / "gold.jsonl"), "--no-progress",
        ),
        "prepare": prepare(mysql_prepared),
    }  # fmt: skip
    for name, command in commands.items():
        before = admin.flush()
        code, out, err = finish(run(command))
        assert code == 0, f"{name}: {out}\n{err}"
        measured[name] = admin.max_used() - before
    print(f"\nconnections held (workers {WORKERS}): {measured}")
    statuses = {item["status"] for item in items_of(scored)}
    assert {"timeout", "too_many_rows", "ok"} <= statuses  # the killer connection was used
    assert measured["score"] <= SCORING_BOUND
    assert measured["gold"] <= SCORING_BOUND
    assert measured["prepare"] <= PREPARE_BOUND
    # Not one connection per database (there are 44): what the old sessions held.
    assert max(measured.values()) < 44


def test_three_machines_and_a_prepare_fit_the_bound(mysql_prepared, admin, answers, tmp_path):
    url = mysql_prepared.reader_url_with_password()
    alone = tmp_path / "alone.json"
    code, out, err = finish(
        run(score(answers, fresh_machine(tmp_path / "a", mysql_prepared), alone, url))
    )
    assert code == 0, f"{out}\n{err}"
    held = admin.flush()  # the admin connection and whatever else the session holds open
    needed = 3 * SCORING_BOUND + PREPARE_BOUND
    admin.set_limit(held + needed)
    machines = {
        name: run(
            score(
                answers,
                fresh_machine(tmp_path / name, mysql_prepared),
                tmp_path / f"{name}.json",
                url,
            )
        )
        for name in ("b", "c", "d")
    }
    machines["prepare"] = run(prepare(mysql_prepared))
    finished = {name: finish(process) for name, process in machines.items()}
    for name, (code, out, err) in finished.items():
        assert code == 0, f"{name}: {out}\n{err}"
    print(f"\n{held} held, limit {held + needed}, at most {admin.max_used()} used at once")
    expected = items_of(alone)
    for name in ("b", "c", "d"):
        assert same_items(items_of(tmp_path / f"{name}.json"), expected) == [], name
    assert "reloaded nothing" in finished["prepare"][1]


def test_a_full_server_is_told_apart_from_one_that_is_gone(mysql_prepared, admin):
    """MariaDB's own refusal at max_connections is the busy server, not a server gone."""
    reader = parse_url(mysql_prepared.reader_url_with_password())
    admin.set_limit(10)  # MariaDB's smallest
    held = []
    try:
        with pytest.raises(pymysql.err.OperationalError) as refused:
            for _ in range(20):
                held.append(open_connection(reader, wait_busy=False))
    finally:
        for conn in held:
            conn.close()
    assert refused.value.args[0] == 1040 and is_busy(refused.value)
    failure = connection_failure(refused.value, reader)
    assert isinstance(failure, ServerBusy)
    assert "refuses new connections" in str(failure) and "max_connections" in str(failure)


@contextlib.contextmanager
def reader_full(admin: Admin, url: str):
    """The reader account with no connection left while the block runs: the account allowed
    one (``MAX_USER_CONNECTIONS``, MariaDB's error 1226), and one held. Unlike a slot of
    max_connections, no connection ending elsewhere on the server can free it meanwhile."""
    admin.limit_reader(1)  # counts the connections opened from now on: the holder
    holder = open_connection(parse_url(url), wait_busy=False)
    try:
        yield
    finally:
        holder.close()
        admin.limit_reader(0)


def test_a_full_server_is_waited_for_then_the_run_goes_on(mysql_prepared, admin, answers, tmp_path):
    url = mysql_prepared.reader_url_with_password()
    cache = fresh_machine(tmp_path / "w", mysql_prepared)
    with reader_full(admin, url):
        process = run(score(answers, cache, tmp_path / "w.json", url))
        # Blocks until it says so, or until it stops by itself (then the lines end).
        first = next((line for line in process.stderr if "free connection" in line), "")
    code, out, err = finish(process)
    assert "has no free connection" in first and "max_user_connections" in first, first + err
    assert f"waiting up to {unavailable.BUSY_WINDOW_S:g} s" in first
    assert code == 0, f"{out}\n{err}"
    assert len(items_of(tmp_path / "w.json")) == len(items_of_task(mysql_prepared))


def test_a_server_that_stays_full_stops_the_run(
    mysql_prepared, admin, answers, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(unavailable, "BUSY_WINDOW_S", 1.0)
    url = mysql_prepared.reader_url_with_password()
    cache = fresh_machine(tmp_path / "f", mysql_prepared)
    output = tmp_path / "f.json"
    with reader_full(admin, url):
        code = cli.main(score(answers, cache, output, url)[3:])
    err = capsys.readouterr().err
    assert code == UNAVAILABLE, err
    assert "refuses new connections" in err and "max_connections" in err
    assert "waiting up to 1 s" in err
    assert not output.exists()
