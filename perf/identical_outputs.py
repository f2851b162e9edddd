"""Byte-identical outputs of two source trees of the package on fixed inputs, file by file.

Runs a fixed matrix of ``python -m sqlbench_lmeval ...`` commands once with ``PYTHONPATH=A`` and
once with ``PYTHONPATH=B`` (worker processes inherit it), on the same cache
(``$SQLBENCH_LMEVAL_CACHE``), writes each side's outputs under ``WORK/a`` and ``WORK/b`` and
compares every output file, and what the command printed (``stdout.txt``, ``stderr.txt``, the output
folder's path written ``{out}``), byte for byte (``filecmp.cmp(shallow=False)``, what ``cmp`` does);
prints one line per case (``same``, or ``DIFFERENT`` with the file and its first differing byte) and
exits 1 if any case differs. ``--twice`` also runs A a second time into ``WORK/a2``: a case whose A
and A differ is not a refactor difference and is reported as ``UNSTABLE``. The inputs are written
once to ``WORK/inputs`` from the benchmarks' own items (``gold logiccat``/``gold tpcds`` of tree A)
and kept, so later runs compare on the same files: LogicCat on SQLite (gold as every answer; a mix
of gold, wrong, refused, prose and cut-off answers; 8 samples per item of ``logiccat_mini`` with
``--samples``; retried answers as ``attempts``), on MariaDB (``--mysql-url``, an admin URL: gold mix
and 8 samples, gold in its MySQL text), TPC-DS sf 0.01 on DuckDB (gold, a mix, gold rewritten to
PostgreSQL's dialect and scored with ``--dialect postgres``) and on PostgreSQL (``--postgres-url``),
and ``verify`` and ``leaderboard`` reports of fixed runs (three LogicCat and two TPC-DS predictions
files above, read with ``--task``, and two lm-eval ``--tasks logiccat`` model folders written
without a model by lm-eval's own tracker through tree A's ``perf/_lmeval_runs.py``). LogicCat's 4
gold queries flagged ``random`` (``RAND()``, items 865, 1423, 1425, 1440) are left out of every
predictions file: their results differ between any two runs of them (the lm-eval runs hold all 4,036
items, as a complete run must; an answer that runs RAND() practically never equals gold's result, so
its verdict stays the same). A score JSON still lists them (as ``missing``) with their gold's
``gold_preview``, which comes from the gold cache; when the two trees key that cache differently
(its key holds the sha256 of the database's setup module, ``logiccat/mysql_functions.py`` on SQLite,
``logiccat/server.py`` on MariaDB: any edit of that file, even of a docstring, runs all gold again)
the random gold ran afresh and its preview differs. That one field of those items is the only thing
left out, and only after the bytes differed: the case then reads ``same but random gold``. What
differs between two runs of one tree shows as ``UNSTABLE``. ``--compare-only`` compares the outputs
already in ``WORK`` again.

    git archive main | tar -x -C /tmp/tree-a
    git archive HEAD | tar -x -C /tmp/tree-b
    python perf/identical_outputs.py --a /tmp/tree-a --b /tmp/tree-b --work /tmp/identical \\
        --twice --mysql-url mysql://root:pw@127.0.0.1:3306 \\
        --postgres-url postgresql://postgres:pw@127.0.0.1:5432/postgres
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
from pathlib import Path

import sqlglot

WRONG = "```sql\nSELECT 'not the answer' AS x, 42 AS y\n```"
REFUSED = "I cannot answer this question from the schema given."
PROSE = "The answer is the largest value in the table, which I estimate to be about 42."
TPCDS_SF = "0.01"


def fenced(sql: str) -> str:
    return f"```sql\n{sql}\n```"


def cut_off(sql: str) -> str:
    """An answer that stopped mid-query: an open fence and the first half of the SQL."""
    return f"```sql\n{sql[: max(1, len(sql) // 2)]}"


def mixed(sql: str, index: int) -> str:
    """Gold, wrong, refused, prose or cut off, by the item's position."""
    return (fenced(sql), WRONG, REFUSED, PROSE, cut_off(sql))[index % 5]


def eight_samples(sql: str, index: int) -> list[str]:
    """Eight outputs of one item (gold three ways, wrong, prose, refused, cut off, an error),
    rotated by the item's position so the first sample (ves/ex) varies."""
    outputs = [
        fenced(sql),
        WRONG,
        PROSE,
        fenced(sql.rstrip().rstrip(";") + ";"),
        cut_off(sql),
        fenced("SELECT no_such_column FROM no_such_table"),
        sql,
        REFUSED,
    ]
    return outputs[index % 8 :] + outputs[: index % 8]


def retried(sql: str, index: int) -> dict:
    """A retried answer: one to three attempts, the last gold or not."""
    attempts = [
        [fenced(sql)],
        [fenced("SELECT no_such_column FROM no_such_table"), fenced(sql)],
        [WRONG, PROSE],
        [cut_off(sql), fenced("SELECT no_such_column FROM no_such_table"), fenced(sql)],
    ][index % 4]
    return {"attempts": attempts}


def write_jsonl(path: Path, lines: list[dict]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return path


def run(tree: str, args: list[str], ok=(0,)) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
    done = subprocess.run(
        [sys.executable, "-m", "sqlbench_lmeval", *args], env=env, capture_output=True, text=True
    )
    if done.returncode not in ok:
        raise SystemExit(
            f"{' '.join(args)} (PYTHONPATH={tree}) exited {done.returncode}:\n{done.stderr[-3000:]}"
        )
    return done


def python_in(tree: str, code: str) -> str:
    """What ``python -c code`` prints with ``PYTHONPATH=tree``."""
    env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout


def read_gold(tree: str, benchmark: str, path: Path, extra: list[str]) -> list[dict]:
    if not path.exists():
        run(tree, ["gold", benchmark, "--no-progress", "--output", str(path), *extra])
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def mysql_gold(tree: str, inputs: Path) -> dict[int, str]:
    """LogicCat's gold as written upstream (MySQL), by id, from tree A's bundle."""
    path = inputs / "logiccat-gold-mysql-text.json"
    if not path.exists():
        code = (
            "import json, sys\n"
            "from sqlbench_lmeval.logiccat.bundle import ensure_bundle\n"
            "b = ensure_bundle(progress=False)\n"
            "json.dump({r.id: r.gold_sql_mysql for r in b.records}, sys.stdout)\n"
        )
        path.write_text(python_in(tree, code), encoding="utf-8")
    return {int(k): v for k, v in json.loads(path.read_text(encoding="utf-8")).items()}


def make_inputs(args, inputs: Path) -> dict[str, Path]:
    """The predictions files of every case (written once, then reused as they are)."""
    inputs.mkdir(parents=True, exist_ok=True)
    files = {}
    logiccat = read_gold(args.a, "logiccat", inputs / "logiccat-gold.jsonl", [])
    kept = [g for g in logiccat if "random" not in g["flags"]]
    mini_ids = mini_item_ids(args.a, inputs)
    mini = [g for g in kept if g["id"] in mini_ids]

    def write(name, lines):
        path = inputs / f"{name}.jsonl"
        files[name] = path if path.exists() else write_jsonl(path, lines)

    write("lc-gold", [{"id": g["id"], "prediction": fenced(g["gold_sql"])} for g in kept])
    write(
        "lc-mix",
        [{"id": g["id"], "prediction": mixed(g["gold_sql"], i)} for i, g in enumerate(kept)],
    )
    write(
        "lc-mini-samples",
        [
            {"id": g["id"], "prediction": eight_samples(g["gold_sql"], i)}
            for i, g in enumerate(mini)
        ],
    )
    write(
        "lc-retried",
        [{"id": g["id"], **retried(g["gold_sql"], i)} for i, g in enumerate(kept)],
    )
    if args.mysql_url:
        text = mysql_gold(args.a, inputs)
        write(
            "lc-mysql-mix",
            [{"id": g["id"], "prediction": mixed(text[g["id"]], i)} for i, g in enumerate(kept)],
        )
        write(
            "lc-mysql-mini-samples",
            [
                {"id": g["id"], "prediction": eight_samples(text[g["id"]], i)}
                for i, g in enumerate(mini)
            ],
        )
    tpcds = read_gold(args.a, "tpcds", inputs / "tpcds-gold.jsonl", ["--scale-factor", TPCDS_SF])
    write("ds-gold", [{"id": g["id"], "prediction": fenced(g["gold_sql"])} for g in tpcds])
    write(
        "ds-mix",
        [{"id": g["id"], "prediction": mixed(g["gold_sql"], i)} for i, g in enumerate(tpcds)],
    )
    write(
        "ds-gold-as-postgres",
        [{"id": g["id"], "prediction": fenced(to_postgres(g["gold_sql"]))} for g in tpcds],
    )
    write(
        "ds-mix-as-postgres",
        [
            {"id": g["id"], "prediction": mixed(to_postgres(g["gold_sql"]), i)}
            for i, g in enumerate(tpcds)
        ],
    )
    files["lmeval-runs"] = lmeval_runs(args.a, inputs / "lmeval-runs", args.workers)
    return files


def random_gold_ids(inputs: Path) -> set[int]:
    """LogicCat's items whose gold calls RAND() (flagged ``random``)."""
    lines = (inputs / "logiccat-gold.jsonl").read_text(encoding="utf-8").splitlines()
    return {g["id"] for g in map(json.loads, lines) if "random" in g["flags"]}


def lmeval_runs(tree: str, folder: Path, workers: int) -> list[Path]:
    """Two model folders of a ``--tasks logiccat`` lm-eval run, no model needed: written by
    lm-eval's own tracker through tree A's ``perf/_lmeval_runs.py`` (each item answered with
    its gold, a wrong query or prose)."""
    if not folder.exists():
        code = (
            "import sys\n"
            "from pathlib import Path\n"
            f"sys.path.insert(0, {str(Path(tree).resolve() / 'perf')!r})\n"
            "from _lmeval_runs import write_logiccat_runs\n"
            "from sqlbench_lmeval.paths import cache_dir\n"
            f"write_logiccat_runs(Path({str(folder)!r}), cache_dir(), 2, workers={workers})\n"
        )
        python_in(tree, code)
    return sorted(model for name in sorted(folder.iterdir()) for model in name.iterdir())


def to_postgres(sql: str) -> str:
    return ";\n".join(sqlglot.transpile(sql, read="duckdb", write="postgres"))


def mini_item_ids(tree: str, inputs: Path) -> set[int]:
    path = inputs / "logiccat-mini-ids.json"
    if not path.exists():
        code = (
            "import json, sys\n"
            "from sqlbench_lmeval.lmeval.task_specs import task_spec\n"
            "from sqlbench_lmeval.offline import task_documents\n"
            "docs = task_documents(task_spec('logiccat_mini'))\n"
            "json.dump(sorted(d['id'] for d in docs), sys.stdout)\n"
        )
        path.write_text(python_in(tree, code), encoding="utf-8")
    return set(json.loads(path.read_text(encoding="utf-8")))


def cases(args, files: dict[str, Path]) -> list[tuple[str, list[str], tuple[int, ...]]]:
    """(name, command with {out} for the output path, accepted exit codes)."""
    workers = ["--workers", str(args.workers), "--no-progress"]
    ds = ["--scale-factor", TPCDS_SF]
    matrix = [
        ("logiccat-sqlite-gold", ["score", "logiccat", files["lc-gold"]]),
        ("logiccat-sqlite-mix", ["score", "logiccat", files["lc-mix"]]),
        (
            "logiccat-sqlite-8-samples",
            ["score", "logiccat_mini", files["lc-mini-samples"], "--samples"],
        ),
        ("logiccat-sqlite-retried", ["score", "logiccat", files["lc-retried"]]),
    ]
    if args.mysql_url:
        mysql = ["--engine", "mysql", "--dialect", "mysql"]
        matrix += [
            ("logiccat-mariadb-mix", ["score", "logiccat", files["lc-mysql-mix"], *mysql]),
            (
                "logiccat-mariadb-8-samples",
                ["score", "logiccat_mini", files["lc-mysql-mini-samples"], "--samples", *mysql],
            ),
        ]
    matrix += [
        ("tpcds-duckdb-gold", ["score", "tpcds", files["ds-gold"], *ds]),
        ("tpcds-duckdb-mix", ["score", "tpcds", files["ds-mix"], *ds]),
        (
            "tpcds-duckdb-gold-from-postgres",
            ["score", "tpcds", files["ds-gold-as-postgres"], "--dialect", "postgres", *ds],
        ),
        (
            "tpcds-duckdb-mix-from-postgres",
            ["score", "tpcds", files["ds-mix-as-postgres"], "--dialect", "postgres", *ds],
        ),
    ]
    if args.postgres_url:
        pg = ["--engine", "postgres", "--dialect", "postgres", *ds]
        matrix += [
            ("tpcds-postgres-gold", ["score", "tpcds", files["ds-gold-as-postgres"], *pg]),
            ("tpcds-postgres-mix", ["score", "tpcds", files["ds-mix-as-postgres"], *pg]),
        ]
    out = [
        (name, [*map(str, command), "-o", "{out}/scores.json", *workers], (0,))
        for name, command in matrix
    ]
    # verify exits 4 (verified with findings: gold verbatim, constants) or 5 (unattested: a
    # predictions file carries no provenance); the reports are what is compared.
    lc_runs = [
        f"gold={files['lc-gold']}",
        f"mix={files['lc-mix']}",
        f"retried={files['lc-retried']}",
    ]
    ds_runs = [f"gold={files['ds-gold']}", f"mix={files['ds-mix']}"]
    lmeval_runs = [f"model-{n}={path}" for n, path in enumerate(files["lmeval-runs"])]
    reports = [
        ("logiccat-predictions", [*lc_runs, "--task", "logiccat"]),
        ("tpcds-predictions", [*ds_runs, "--task", "tpcds", *ds]),
        ("logiccat-lmeval-runs", lmeval_runs),
    ]
    out += [
        (f"{command}-{name}", [command, *given, "-o", "{out}", *workers], (0, 1, 4, 5))
        for name, given in reports
        for command in ("verify", "leaderboard")
    ]
    return out


def first_difference(one: Path, other: Path) -> str:
    a, b = one.read_bytes(), other.read_bytes()
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return (
        f"byte {at + 1} (sizes {len(a)} and {len(b)}): {a[at : at + 60]!r} vs {b[at : at + 60]!r}"
    )


def without_random_gold(path: Path, random_ids: set[int]) -> object | None:
    """A score JSON with the random gold's ``gold_preview`` dropped (None: not a score JSON)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        return None
    for item in data["items"]:
        if item.get("id") in random_ids:
            item.pop("gold_preview", None)
    return data


def compare(one: Path, other: Path, random_ids: set[int]) -> list[str]:
    """One line per file that differs or exists on one side only; a score JSON that differs
    only in the ``gold_preview`` of ``random_ids`` gets a line that says so, prefixed ``~``."""
    names = sorted(
        {p.relative_to(one) for p in one.rglob("*") if p.is_file()}
        | {p.relative_to(other) for p in other.rglob("*") if p.is_file()}
    )
    problems = []
    for name in names:
        x, y = one / name, other / name
        if not (x.exists() and y.exists()):
            problems.append(f"{name}: only in {'one' if x.exists() else 'other'} side")
        elif not filecmp.cmp(x, y, shallow=False):
            kept = without_random_gold(x, random_ids)
            if kept is not None and kept == without_random_gold(y, random_ids):
                problems.append(f"~{name}: only the gold_preview of random gold differs")
            else:
                problems.append(f"{name}: {first_difference(x, y)}")
    return problems


def prepare_servers(args) -> None:
    """Load the servers once (tree A; a prepared server is only verified again)."""
    if args.mysql_url:
        run(
            args.a,
            [
                "prepare",
                "logiccat",
                "--engine",
                "mysql",
                "--url",
                args.mysql_url,
                "--workers",
                str(args.workers),
            ],
        )
    run(args.a, ["prepare", "tpcds", "--scale-factor", TPCDS_SF, "--workers", str(args.workers)])
    if args.postgres_url:
        run(
            args.a,
            [
                "prepare",
                "tpcds",
                "--engine",
                "postgres",
                "--url",
                args.postgres_url,
                "--scale-factor",
                TPCDS_SF,
                "--workers",
                str(args.workers),
            ],
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, help="source tree A (holds sqlbench_lmeval/)")
    parser.add_argument("--b", required=True, help="source tree B")
    parser.add_argument("--work", required=True, type=Path, help="inputs/, a/, b/ (and a2/)")
    parser.add_argument("--mysql-url", help="admin URL of a MySQL-protocol server")
    parser.add_argument("--postgres-url", help="admin URL of a PostgreSQL server")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--twice", action="store_true", help="also A again: UNSTABLE cases")
    parser.add_argument("--compare-only", action="store_true", help="compare WORK's outputs")
    parser.add_argument("--only", help="run only the cases whose name contains this")
    args = parser.parse_args()
    if not os.environ.get("SQLBENCH_LMEVAL_CACHE"):
        parser.error("set $SQLBENCH_LMEVAL_CACHE: both trees score on that one cache")
    if not args.compare_only:
        prepare_servers(args)
    files = make_inputs(args, args.work / "inputs")
    random_ids = random_gold_ids(args.work / "inputs")
    sides = {"a": args.a, "b": args.b, **({"a2": args.a} if args.twice else {})}
    differing = 0
    for name, command, ok in cases(args, files):
        if args.only and args.only not in name:
            continue
        for side, tree in sides.items():
            out = args.work / side / name
            if args.compare_only:
                continue
            out.mkdir(parents=True, exist_ok=True)
            for old in out.rglob("*"):
                if old.is_file():
                    old.unlink()
            done = run(tree, [part.replace("{out}", str(out)) for part in command], ok=ok)
            # What the command printed is output too (its summary); the side's folder is not.
            for stream in ("stdout", "stderr"):
                text = getattr(done, stream).replace(str(out), "{out}")
                (out / f"{stream}.txt").write_text(text, encoding="utf-8")
        problems = compare(args.work / "a" / name, args.work / "b" / name, random_ids)
        unstable = (
            compare(args.work / "a" / name, args.work / "a2" / name, random_ids)
            if args.twice
            else []
        )
        real = [line for line in problems if not line.startswith("~")]
        verdict = "DIFFERENT" if real else "same" if not problems else "same but random gold"
        if unstable:
            verdict += ", UNSTABLE (A vs A differs too)"
        print(f"{name}: {verdict}", flush=True)
        for line in problems[:5]:
            print(f"    A vs B {line}", flush=True)
        for line in unstable[:5]:
            print(f"    A vs A {line}", flush=True)
        differing += bool(real)
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
