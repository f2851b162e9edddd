"""One server for many machines: machine A prepares, machines B and C evaluate with the reader
alone, and nobody breaks anybody.

Machine A is the session's prepared server and cache (tests/conftest.py ``mysql_prepared``).
B and C are fresh caches holding only the public SQLite bundle (copied from A's cache: building
it again from the same upstream files gives the same bundle and costs a minute) and no admin
credentials: B is given the reader's URL with its password, C the reader's option file. While A
runs ``prepare`` again, B and C score the same predictions at the same time (real processes).
Every score file must equal A's own run byte for byte, and no credential may change.

The machines score one category task, ``logiccat_mathematical`` (1,012 items on all 44
databases), not all 4,036 items: each machine runs the gold of every item it scores, and what
is compared - the same results from every machine, while another prepares - is the same on a
quarter of the items that reaches every database. Scoring every item ran 3 x 4,036 gold
queries (the RAND() item 1440, 5-16 s, three times among them) for the same comparison.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import logiccat_source

pytest.importorskip("pymysql")

from sqlbench_lmeval.execution.mysql import open_connection, parse_url  # noqa: E402
from sqlbench_lmeval.logiccat import server  # noqa: E402
from sqlbench_lmeval.logiccat.bundle import load_bundle  # noqa: E402
from sqlbench_lmeval.logiccat.gold import RANDOM  # noqa: E402

pytestmark = [pytest.mark.mysql, pytest.mark.slow]

# Generous: no query may time out on one loaded machine and not on another (the task's
# slowest gold takes well under 1 s; item 1440, 5-16 s, is not in it); the comparison is about
# the machines, not the clock.
TIMEOUT = "60"
TASK, CATEGORY = "logiccat_mathematical", "mathematical"
# Every 11th item of the task answered (92 of 1,012, on 43 of the 44 databases): the machines
# are compared item by item, so a sample that holds each kind of answer on many databases
# checks what every item would; the kinds take turns along the sample.
SAMPLE_STEP = 11


def predictions(cache: Path, unstable: set[int], path: Path) -> Path:
    """Answers to every 11th item of the task, of four kinds in turn: gold's own query, a wrong
    one, prose, broken SQL. Items whose gold calls RAND() or whose two prepare runs differed are
    left out (their results differ between any two runs, on one machine too)."""
    lines = []
    task = [record for record in load_bundle(cache).records if record.category == CATEGORY]
    for position, record in enumerate(task[::SAMPLE_STEP]):
        if record.id in unstable or RANDOM in record.flags:
            continue
        kind = position % 4
        answer = (
            f"```sql\n{record.gold_sql_mysql}\n```",
            "SELECT 1",
            "I cannot answer that from the schema.",
            "SELECT FROM WHERE",
        )[kind]
        lines.append(json.dumps({"id": record.id, "prediction": answer}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def sqlbench(*argv: str) -> list[str]:
    return [sys.executable, "-m", "sqlbench_lmeval", *argv]


def score(predictions: Path, cache: Path, output: Path, *url: str) -> list[str]:
    return sqlbench(
        "score", TASK, str(predictions), "--engine", "mysql", "--dialect", "mysql",
        "--cache-dir", str(cache), "--output", str(output), "--timeout", TIMEOUT, "--no-progress",
        *url,
    )  # fmt: skip


def fresh_machine(folder: Path, bundle_root: Path, cache_a: Path) -> Path:
    """A cache with A's bundle folder and nothing else (no manifest, option file, gold)."""
    cache = folder / "cache"
    target = cache / bundle_root.relative_to(cache_a)
    shutil.copytree(bundle_root, target)
    return cache


def run(command: list[str]) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != server.URL_ENV}
    pipe = subprocess.PIPE
    return subprocess.Popen(command, stdout=pipe, stderr=pipe, env=env, text=True)


def same_run(other: dict, expected: dict) -> bool:
    """Equal in every field of the file and of every item, except the first rows of gold that
    calls RAND() (``gold_preview`` of items flagged ``random``; 2 items, none answered): those
    change whenever gold runs again, on one machine too (its gold cache hides that there)."""
    differ = [
        (mine["id"], key)
        for mine, theirs in zip(other["items"], expected["items"], strict=True)
        for key in mine.keys() | theirs.keys()
        if mine.get(key) != theirs.get(key)
    ]
    random = {item["id"] for item in expected["items"] if RANDOM in item["flags"]}
    assert all(key == "gold_preview" and item_id in random for item_id, key in differ), differ

    def header(scores: dict) -> dict:
        return {key: value for key, value in scores.items() if key != "items"}

    return header(other) == header(expected)


def logs_in(url: str) -> bool:
    try:
        open_connection(parse_url(url)).close()
    except Exception:
        return False
    return True


def test_b_and_c_score_with_the_reader_alone_while_a_prepares_again(mysql_prepared, tmp_path):
    a = mysql_prepared
    unstable = set(a.document["unstable_order"])
    answers = predictions(a.cache, unstable, tmp_path / "predictions.jsonl")
    option_file_before = a.option_file.read_bytes()

    # The single-machine run: A alone, under the reader its prepare created (no --url).
    alone = tmp_path / "a.json"
    subprocess.run(score(answers, a.cache, alone), check=True, capture_output=True)

    bundle_root = load_bundle(a.cache).root
    cache_b = fresh_machine(tmp_path / "b", bundle_root, a.cache)
    cache_c = fresh_machine(tmp_path / "c", bundle_root, a.cache)
    # B: the reader's URL with its password. C: the option file, copied to C's own place.
    url_b = a.reader_url_with_password()
    option_c = tmp_path / "c" / "reader.cnf"
    shutil.copy(a.option_file, option_c)
    os.chmod(option_c, 0o600)
    address = parse_url(a.admin_url)
    url_c = f"mysql://logiccat_reader@{address.host}:{address.port}?read_default_file={option_c}"

    prepare_again = run(
        sqlbench(
            "prepare", "logiccat", "--engine", "mysql", "--url", a.admin_url,
            "--source", str(logiccat_source()), "--cache-dir", str(a.cache),
        )
    )  # fmt: skip
    machine_b = run(score(answers, cache_b, tmp_path / "b.json", "--url", url_b))
    machine_c = run(score(answers, cache_c, tmp_path / "c.json", "--url", url_c))
    finished = {name: (p, *p.communicate(timeout=1200)) for name, p in
                (("A prepare", prepare_again), ("B", machine_b), ("C", machine_c))}  # fmt: skip
    for name, (process, out, err) in finished.items():
        assert process.returncode == 0, f"{name}: {out}\n{err}"

    scored = json.loads(alone.read_text("utf-8"))
    for machine in ("b", "c"):
        assert same_run(json.loads((tmp_path / f"{machine}.json").read_text("utf-8")), scored)
    assert scored["engine"] == "mysql"
    assert 0 < scored["metrics"]["ex"] < 1  # gold answers right, the rest wrong: a real run

    # A's prepare verified and changed nothing; every machine's credentials still work.
    said = finished["A prepare"][1]
    assert "reloaded nothing" in said and "credentials unchanged" in said
    assert a.option_file.read_bytes() == option_file_before
    assert logs_in(url_b) and logs_in(url_c) and logs_in(a.reader_url)

    # B and C hold no admin credentials and were never prepared: only what scoring keeps.
    admin_password = address.password
    for cache in (cache_b, cache_c):
        assert not (server.manifest_dir(cache) / server.MANIFEST_NAME).exists()
        for path in cache.rglob("*"):
            if path.is_file():
                assert admin_password.encode() not in path.read_bytes(), path
