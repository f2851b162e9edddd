"""Workload complexity summaries and charts (paper Fig. 2 radar, Fig. 4-style histograms)."""

import math

import pytest
from PIL import Image

from sqlbench_lmeval.cli import main
from sqlbench_lmeval.errors import UserError
from sqlbench_lmeval.report.complexity import (
    count_names,
    format_means,
    from_workload_complexity,
    histogram,
    normalised_means,
    plot_radar,
    read_sql_workload,
    tail_cap,
    workload_means,
    write_complexity_plots,
)
from sqlbench_lmeval.sql.complexity import COMPLEXITY, workload_complexity


def _query(columns, joins, predicates, ctes, functions, subqueries):
    values = (columns, joins, predicates, ctes, functions, subqueries)
    return dict(zip(COMPLEXITY, values, strict=True))


WORKLOADS = {
    "big": [_query(4, 2, 2, 1, 2, 0), _query(8, 4, 6, 0, 4, 2)],
    "small": [_query(2, 1, 1, 0, 1, 0), _query(2, 1, 2, 0, 1, 1), _query(2, 1, 3, 0, 1, 2)],
}


def test_means_and_ratios_to_the_first_workload():
    means = workload_means(WORKLOADS)
    assert means["big"] == _query(6.0, 3.0, 4.0, 0.5, 3.0, 1.0)
    assert means["small"] == _query(2.0, 1.0, 2.0, 0.0, 1.0, 1.0)
    ratios = normalised_means(WORKLOADS)
    assert set(ratios["big"].values()) == {1.0}  # the first workload is the unit
    assert ratios["small"] == _query(1 / 3, 1 / 3, 0.5, 0.0, 1 / 3, 1.0)


def test_zero_reference_means_one_when_equal_and_nan_otherwise():
    ratios = normalised_means({"a": [{"x": 0}], "b": [{"x": 0}], "c": [{"x": 2}]})
    assert ratios["b"]["x"] == 1.0
    assert math.isnan(ratios["c"]["x"])


def test_counts_follow_the_paper_order_and_only_shared_names():
    assert count_names(WORKLOADS) == list(COMPLEXITY)
    assert count_names({"a": [{"z": 1, "join_count": 1}], "b": [{"join_count": 2}]}) == [
        "join_count"
    ]


def test_histogram_shares_pool_the_tail():
    assert histogram([0, 0, 1, 3]) == {0: 0.5, 1: 0.25, 2: 0.0, 3: 0.25}
    assert histogram([0, 50, math.nan], cap=2) == {0: 0.5, 1: 0.0, 2: 0.5}
    assert histogram([]) == {}
    # the last bar starts at the 95th percentile: 1..100 -> 95
    assert tail_cap(list(range(1, 101))) == 95
    assert tail_cap([0, 0, 0]) == 1 and tail_cap([]) == 1


def test_format_means_prints_one_row_per_workload():
    lines = format_means(WORKLOADS).splitlines()
    assert lines[0].split()[:3] == ["workload", "queries", "distinct_column_count"]
    assert lines[1].split()[:3] == ["big", "2", "6.00"]
    assert lines[2].split()[:3] == ["small", "3", "2.00"]


def test_charts_are_real_images(tmp_path):
    paths = write_complexity_plots(WORKLOADS, tmp_path / "charts")
    assert [path.name for path in paths] == ["complexity-radar.png", "complexity-histograms.png"]
    for path in paths:
        with Image.open(path) as image:
            assert image.format == "PNG" and image.width > 300 and image.height > 300
            assert len(image.convert("RGB").getcolors(maxcolors=1 << 20)) > 20


def test_a_radar_needs_three_counts(tmp_path):
    with pytest.raises(UserError, match="three"):
        plot_radar({"a": [{"x": 1, "y": 2}]}, tmp_path / "r.png")


def test_structure_workloads_feed_the_charts():
    workload = workload_complexity(
        "mini",
        [
            (1, "SELECT a FROM t WHERE b = 1"),
            (2, "WITH c AS (SELECT a FROM t) SELECT COUNT(*) FROM c JOIN u ON c.a = u.a"),
            (3, "not sql at all ((("),
        ],
        "duckdb",
    )
    workloads = from_workload_complexity([workload])
    assert len(workloads["mini"]) == 2  # the unparseable query is left out
    means = workload_means(workloads)["mini"]
    assert means["cte_count"] == 0.5 and means["join_count"] == 0.5


# --- SQL files as workloads, and the CLI ---------------------------------------------------


def test_a_sql_file_holds_one_query_per_line(tmp_path):
    path = tmp_path / "queries.sql"
    path.write_text("SELECT 1\n\n-- a comment\nSELECT a FROM t\n")
    assert read_sql_workload(str(path)) == ("queries", [(1, "SELECT 1"), (4, "SELECT a FROM t")])
    assert read_sql_workload(f"mine={path}")[0] == "mine"


def test_a_jsonl_workload_reads_sql_and_ids(tmp_path):
    path = tmp_path / "w.jsonl"
    path.write_text('{"id": 7, "sql": "SELECT 1"}\n{"sql": "SELECT 2", "other": 1}\n')
    assert read_sql_workload(str(path)) == ("w", [(7, "SELECT 1"), (2, "SELECT 2")])


def test_an_unknown_workload_says_what_a_workload_is(tmp_path):
    with pytest.raises(UserError, match="a workload is a benchmark name or a file"):
        read_sql_workload(str(tmp_path / "tpcsd"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"sql": "SELECT 1"}\n{broken\n', "w.jsonl:2: not valid JSON"),
        ('{"query": "SELECT 1"}\n', 'w.jsonl:1: expected an object with a "sql" string'),
        ('{"id": "x", "sql": "SELECT 1"}\n', "w.jsonl:1: id must be an integer"),
        ("\n-- nothing\n", "no SQL queries"),
    ],
)
def test_bad_workload_files_name_the_line(tmp_path, text, message):
    path = tmp_path / "w.jsonl"
    path.write_text(text)
    with pytest.raises(UserError, match=message):
        read_sql_workload(str(path))


def test_complexity_cli_prints_means_and_writes_charts(tmp_path, capsys):
    first = tmp_path / "first.sql"
    first.write_text(
        "SELECT a, b FROM t JOIN u ON t.id = u.id WHERE t.x > 1 AND u.y < 2\n"
        "WITH c AS (SELECT a FROM t) SELECT COUNT(*) FROM c WHERE a IN (SELECT a FROM u)\n"
    )
    second = tmp_path / "second.jsonl"
    second.write_text('{"sql": "SELECT a FROM t"}\n{"sql": "SELECT MAX(b) FROM t"}\n')
    out = tmp_path / "charts"
    code = main(
        ["complexity", f"wide={first}", str(second), "--dialect", "duckdb", "--output", str(out)]
    )
    assert code == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split()[:2] == ["workload", "queries"]
    assert [line.split()[0] for line in printed[1:3]] == ["wide", "second"]
    assert printed[3:] == [
        f"wrote {out / 'complexity-radar.png'}",
        f"wrote {out / 'complexity-histograms.png'}",
    ]
