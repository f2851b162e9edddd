"""The report's cost section from score files: per run the median and total tokens per answer,
the median latency, the spend only where ``score --price`` gave one, where the counts came from;
a run without measurement is named as not measured, with no numbers and no point; no metered
run at all, no section."""

from __future__ import annotations

from sqlbench_lmeval.report import read_runs, write_report
from sqlbench_lmeval.report.sections.cost import cost_rows


def metered(score_item, item_id, ex, prompt, completion, latency, **extra):
    return score_item(
        item_id,
        ex,
        prompt_tokens=prompt,
        completion_tokens=completion,
        latency_s=latency,
        tokens_from="usage",
        requests=1,
        **extra,
    )


def test_the_cost_section_sums_and_medians_and_names_unmeasured_runs(
    score_item, write_score_file, tmp_path
):
    # Tokens per answer: 110, 220, 330 -> median 220, total 660; latencies 0.5, 1.5, 0.25.
    small = [
        metered(score_item, 1, 1, 100, 10, 0.5, spend=0.001),
        metered(score_item, 2, 0, 200, 20, 1.5, spend=0.002),
        metered(score_item, 3, 1, 300, 30, 0.25, spend=0.003),
    ]
    # One answer the tokenizer could not count: its latency counts, its tokens do not.
    large = [
        metered(score_item, 1, 1, 1000, 4000, 2.0),
        metered(score_item, 2, 1, 1000, 6000, 4.0),
        score_item(3, 1, latency_s=3.0, requests=1, prompt_tokens=None, completion_tokens=None),
    ]
    plain = [score_item(i, 1) for i in (1, 2, 3)]
    runs = read_runs(
        [
            f"small={write_score_file('small', small)}",
            f"large={write_score_file('large', large)}",
            f"plain={write_score_file('plain', plain)}",
        ]
    )
    rows = {row.run: row for row in cost_rows(runs)}
    assert (rows["small"].median_tokens, rows["small"].total_tokens) == (220.0, 660)
    assert rows["small"].median_latency_s == 0.5
    assert rows["small"].spend == 0.006 and rows["small"].sources == "usage 3"
    assert (rows["large"].metered, rows["large"].counted) == (3, 2)
    assert (rows["large"].median_tokens, rows["large"].total_tokens) == (6000.0, 12000)
    assert rows["large"].median_latency_s == 3.0 and rows["large"].spend is None
    assert rows["large"].sources == "not counted 1, usage 2"
    assert rows["plain"].metered == 0 and rows["plain"].median_tokens is None

    files = write_report(runs, tmp_path / "report", resamples=20)
    text = files.markdown.read_text("utf-8")
    section = text[text.index("## Cost: tokens and latency") :]
    assert "| small | 3 | 3 | 220.0 | 660 | 0.50 | 0.0060 | usage 3 |" in section
    large_row = "| large | 3 | 3 (2 counted) | 6,000.0 | 12,000 | 3.00 | – | not counted 1, usage 2"
    assert large_row in section
    assert "Not measured (not run with sqlbench-metered; no numbers, and no point in " in section
    assert "chart): plain." in section
    assert "| plain |" not in section  # no row of zeros for it
    assert (tmp_path / "report" / "cost-logiccat.png").exists()


def test_no_metered_run_no_cost_section(score_item, write_score_file, tmp_path):
    runs = read_runs([str(write_score_file("plain", [score_item(1, 1)]))])
    text = write_report(runs, tmp_path / "r", resamples=20).markdown.read_text("utf-8")
    assert "Cost: tokens and latency" not in text
    assert not (tmp_path / "r" / "cost-logiccat.png").exists()
