"""The report counts outputs cut off by the generation limit per run and says how to raise it."""

from sqlbench_lmeval.report import read_runs, write_report
from sqlbench_lmeval.report.sections.outcomes import failure_rows


def test_truncated_outputs_are_counted_per_run_with_the_fix(score_item, write_score_file, tmp_path):
    # Run "short": items 1-3 truncated (two of them ended inside <think>: no SQL, reason
    # "truncated"; one cut inside a fence that still matched gold, flag only); run "long": none.
    short = [
        score_item(1, 0, "no_sql", reason="truncated", truncated=True),
        score_item(2, 0, "no_sql", reason="truncated", truncated=True),
        score_item(3, 1, truncated=True),
        score_item(4, 1, truncated=False),
    ]
    long = [score_item(i, 1) for i in range(1, 5)]
    runs = read_runs(
        [
            f"short={write_score_file('short', short)}",
            f"long={write_score_file('long', long)}",
        ]
    )
    rows = {row.run: row for row in failure_rows(runs)}
    assert (rows["short"].truncated, rows["long"].truncated) == (3, 0)
    files = write_report(runs, tmp_path / "report", resamples=100)
    text = files.markdown.read_text(encoding="utf-8")
    assert "short: 3 of 4 outputs were truncated" in text
    assert "long: 0 of" not in text and "--gen_kwargs max_gen_toks=N" in text
    assert "--gen_kwargs max_gen_toks=N" in files.html.read_text(encoding="utf-8")


def test_outputs_truncated_in_a_repetition_loop_get_their_own_note(
    score_item, write_score_file, tmp_path
):
    # Items 1-2 cut off at the limit, item 3 cut off while repeating itself: raising the limit
    # is the advice for two of them only.
    items = [
        score_item(1, 0, "no_sql", reason="truncated", truncated=True),
        score_item(2, 0, "no_sql", reason="truncated", truncated=True),
        score_item(3, 0, "no_sql", reason="truncated", truncated=True, repetition_loop=True),
        score_item(4, 1),
    ]
    runs = read_runs([f"loopy={write_score_file('loopy', items)}"])
    (row,) = failure_rows(runs)
    assert (row.truncated, row.looping) == (3, 1)
    text = write_report(runs, tmp_path / "report", resamples=100).markdown.read_text("utf-8")
    assert "loopy: 2 of 4 outputs were truncated: " in text
    assert "loopy: 1 of 4 outputs were truncated in a repetition loop: " in text
    assert "would not end the loop" in text
