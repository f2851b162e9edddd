"""``sqlbench-lmeval fidelity logiccat`` on a private MariaDB, through the real CLI.

Expected numbers come from the inputs, not from the command: which items are comparable is
read off the reference file, the prepare manifest and the upstream records with their own
parsing here; the verdict rules follow from fidelity.py's definitions (not ok -> our_error,
Spider-derived databases never compared).
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from conftest import logiccat_source

pytest.importorskip("pymysql")

from sqlbench_lmeval.cli import main  # noqa: E402
from sqlbench_lmeval.logiccat import cross_engine, fidelity  # noqa: E402

pytestmark = [pytest.mark.mysql, pytest.mark.slow]

SPIDER_DERIVED = {"Population", "concert", "contract", "exerciseclub", "hospital", "school"}
# Gold that ran on the server: gold_health of an ok outcome (non-empty, empty, all NULL).
SERVER_RAN = {"ok", "empty", "all_null"}


@pytest.fixture(scope="module")
def listing(mysql_prepared, logiccat_cache, tmp_path_factory):
    reference = logiccat_source() / "reference" / "mariadb-10.11-gold-results.json"
    if not reference.is_file():
        pytest.skip(f"no MariaDB reference at {reference}")
    cache = ["--cache-dir", str(logiccat_cache)]
    output = tmp_path_factory.mktemp("fidelity") / "fidelity.jsonl"
    # What is compared is results, not speed: item 1440 takes 5-16 s on a loaded machine and
    # would otherwise count as gold that fails on the server.
    timeout = ["--timeout", "60"]
    argv = ["fidelity", "logiccat", "--reference", str(reference), "-o", str(output)]
    code = main([*argv, *cache, *timeout])
    assert code == 0
    lines = [json.loads(line) for line in output.read_text("utf-8").splitlines()]
    records = json.loads((logiccat_source() / "records-4036.json").read_text("utf-8"))
    return {
        "lines": {line["id"]: line for line in lines},
        "records": {r["idx"]: r for r in records},
        "reference": json.loads(reference.read_text("utf-8"))["results"],
        "manifest": mysql_prepared.document,
    }


def test_one_line_per_item_and_spider_derived_items_are_never_compared(listing):
    lines, records = listing["lines"], listing["records"]
    assert sorted(lines) == sorted(records)
    pairs = (
        cross_engine.SQLITE_VS_SERVER,
        cross_engine.SERVER_VS_REFERENCE,
        cross_engine.SQLITE_VS_REFERENCE,
    )
    for item_id, line in lines.items():
        assert line["db_id"] == records[item_id]["db_id"]
        if line["db_id"] in SPIDER_DERIVED:
            assert all(line[pair] is None for pair in pairs), item_id


def test_comparable_items_are_those_the_other_side_ran(listing, capsys):
    lines, records = listing["lines"], listing["records"]
    # Against the reference: its status "ok", outside the Spider-derived six (3,531 items).
    ran_on_reference = {
        item["idx"]
        for item in listing["reference"]
        if item["status"] == "ok" and records[item["idx"]]["db_id"] not in SPIDER_DERIVED
    }
    for pair in (cross_engine.SERVER_VS_REFERENCE, cross_engine.SQLITE_VS_REFERENCE):
        assert {i for i, line in lines.items() if line[pair] is not None} == ran_on_reference
    # SQLite against the server: the server ran the gold (as prepare judged it), outside the
    # six. A RAND() item may be slow enough to time out in one run and not the other.
    statuses = listing["manifest"]["gold_status"]
    ran_on_server = {
        i
        for i, r in records.items()
        if statuses[str(i)] in SERVER_RAN and r["db_id"] not in SPIDER_DERIVED
    }
    compared = {i for i, line in lines.items() if line[cross_engine.SQLITE_VS_SERVER] is not None}
    calls_rand = {i for i, r in records.items() if "RAND(" in r["query"].upper()}
    assert compared ^ ran_on_server <= calls_rand


def test_verdicts_follow_the_definitions(listing):
    for item_id, line in listing["lines"].items():
        verdict = line[cross_engine.SQLITE_VS_SERVER]
        if verdict is None:
            continue
        assert verdict in (cross_engine.AGREE, *fidelity.CLASSES)
        # Gold that fails on SQLite but ran on the server is our error, by definition.
        assert (verdict == "our_error") == (not line["sqlite_ok"]), item_id
        assert line["server_ok"], item_id
    # The server against the reference: same engine family, so every gold that ran there runs
    # here (no our_error), and most items agree.
    verdicts = Counter(line[cross_engine.SERVER_VS_REFERENCE] for line in listing["lines"].values())
    assert verdicts["our_error"] <= 1  # at most a RAND() item that timed out (see above)
    assert verdicts[cross_engine.AGREE] / (sum(verdicts.values()) - verdicts[None]) >= 0.98


# Gold whose result depends on the order of tied rows inside a window (NTILE / a moving AVG
# over ``ORDER BY month`` with many rows per month): SQL leaves it open, the health judge does
# not flag window ties, and MariaDB picked other tie orders than in the reference run.
WINDOW_TIE_ITEMS = {1370, 1436}
# Measured literally, 3319/3364 = 98.66% agreed on MariaDB 10.11.19: every disagreement was a
# choice among tied rows (the reference's came from in-memory temporary tables, where they
# change from run to run). Tie-aware, such choices agree; the two window items above and ties
# inside subqueries (flagged nondeterministic_order) stay choices.
CLOCK_RANDOM_FREE_AGREEMENT = 0.995


def test_gold_on_the_server_matches_the_mariadb_reference(listing, logiccat_cache):
    """The server's gold against the reference run, at the reference's clock, tie-aware (each
    side's right answers under its gold's ties, from the server's own probes): the command's
    ``server_vs_reference`` verdicts, judged against the upstream flags read here."""
    from sqlbench_lmeval.logiccat import gold
    from sqlbench_lmeval.logiccat.bundle import load_bundle

    records = load_bundle(logiccat_cache).records
    reference = {int(item["idx"]): item for item in listing["reference"]}
    ids = set(fidelity.comparable_ids(records, reference))
    verdicts = {i: listing["lines"][i][cross_engine.SERVER_VS_REFERENCE] for i in ids}
    assert None not in verdicts.values()  # every comparable item was compared
    disagree = {i for i, verdict in verdicts.items() if verdict != cross_engine.AGREE}
    flagged = {
        r.id
        for r in records
        if set(r.flags) & {gold.CLOCK_DEPENDENT, gold.RANDOM, gold.NONDETERMINISTIC_ORDER}
    }
    determinate = ids - flagged
    # Same engine family, same dumps: every determinate item agrees except, at most, the
    # window ties (their tie order may or may not match the reference's on a given run).
    assert disagree & determinate <= WINDOW_TIE_ITEMS
    assert len(determinate - disagree) / len(determinate) >= 0.995
    # Clock- and RAND()-free items: every disagreement is a tie choice the tie-aware comparison
    # leaves open (inside a subquery, flagged, or a window tie).
    clock_random = {r.id for r in records if set(r.flags) & {gold.CLOCK_DEPENDENT, gold.RANDOM}}
    free = ids - clock_random
    tie_dependent = {r.id for r in records if gold.NONDETERMINISTIC_ORDER in r.flags}
    assert disagree & free <= tie_dependent | WINDOW_TIE_ITEMS
    assert len(free - disagree) / len(free) >= CLOCK_RANDOM_FREE_AGREEMENT
    # No gold fails on the server where it ran on the reference's MariaDB.
    assert "our_error" not in verdicts.values()


def test_markdown_listing_shows_the_items_some_pair_disagrees_on():
    lines = [
        {"id": 1, "db_id": "a", "sqlite_ok": True, "server_ok": True, "sqlite_vs_server": "agree"},
        {
            "id": 2,
            "db_id": "b",
            "sqlite_ok": False,
            "server_ok": True,
            "sqlite_vs_server": "our_error",
        },
        {
            "id": 3,
            "db_id": "school",
            "sqlite_ok": True,
            "server_ok": False,
            "sqlite_vs_server": None,
        },
    ]
    # Header, separator, and item 2 only: 1 agrees, 3 is not comparable.
    assert cross_engine.markdown_listing(lines).splitlines() == [
        "| id | db_id | sqlite_ok | server_ok | sqlite_vs_server |",
        "|---|---|---|---|---|",
        "| 2 | b | False | True | our_error |",
    ]


def test_the_railway_station_ties_agree_whatever_rows_each_server_picked(listing):
    # 3229, 3233, 3237, 3241 order 97 rows by a one-row CTE's column (a constant at run time)
    # and keep 10: which 10 is the engine's choice, and the reference run (default settings)
    # and this server each made their own. Tie-aware, any 10 of the 97 agree.
    for item_id in (3229, 3233, 3237, 3241):
        line = listing["lines"][item_id]
        assert line[cross_engine.SQLITE_VS_SERVER] == cross_engine.AGREE, item_id
        assert line[cross_engine.SQLITE_VS_REFERENCE] == cross_engine.AGREE, item_id


# The tie items that tie-aware EX leaves disagreeing (SQLite's gold against the server's), each
# with its cause. The rest of the tie items agree as tie resolutions or differ for a cause that
# was already theirs without ties (clock, a table of another database, ...).
TIE_ITEMS_LEFT = {
    # An ORDER BY ... LIMIT inside a subquery or CTE cuts through ties, and which rows it keeps
    # reaches the result: flagged nondeterministic_order, not resolved by design.
    979: fidelity.SUBQUERY_TIES,
    3897: fidelity.SUBQUERY_TIES,
    3898: fidelity.SUBQUERY_TIES,
    # The same tie groups on both engines, but MySQL shows the DECIMAL quotient rounded
    # (0.0667 for 1/15, 0.000313 for 0.0003125): beyond fidelity's 1e-4, and a tie resolution
    # of our gold once the values are read at MySQL's scale.
    2684: fidelity.DECIMAL_SCALE,
    2737: fidelity.DECIMAL_SCALE,
    3705: fidelity.DECIMAL_SCALE,
    # The sort key itself differs (below): a value difference, not a tie.
    3253: "other",
}


def test_the_tie_items_left_disagree_for_their_stated_cause(listing, logiccat_cache):
    from sqlbench_lmeval.execution import Database, Job, Limits, execute
    from sqlbench_lmeval.logiccat import gold, server
    from sqlbench_lmeval.logiccat.bundle import load_bundle
    from sqlbench_lmeval.scoring.tie_probe import plan_ties

    for item_id, verdict in TIE_ITEMS_LEFT.items():
        assert listing["lines"][item_id][cross_engine.SQLITE_VS_SERVER] == verdict, item_id
    bundle = load_bundle(logiccat_cache)
    records = {record.id: record for record in bundle.records}
    for item_id in (979, 3897, 3898):
        assert gold.NONDETERMINISTIC_ORDER in records[item_id].flags
        assert plan_ties(records[item_id].gold_sql, "sqlite").inner_cuts
    # 3253 orders by a distance computed from RADIANS(SUBSTRING_INDEX(Address, ',', 1)): every
    # address is a place name, which MySQL reads as the number 0 and SQLite's RADIANS as no
    # number (NULL), so every SQLite distance is NULL.
    query = "SELECT RADIANS(SUBSTRING_INDEX(Address, ',', 1)) FROM Passenger"
    path = str(bundle.database_path("railway_station"))
    ours = execute(Job(Database("sqlite", path, gold.CONNECTION_SETUP), query), Limits())
    reader = server.server_run(cache_dir=logiccat_cache).url
    theirs = execute(Job(server.server_database(reader, "railway_station"), query), Limits())
    assert ours.rows and {row[0] for row in ours.rows} == {None}
    assert len(theirs.rows) == len(ours.rows) and {row[0] for row in theirs.rows} == {0.0}
