"""Sampled scoring on a real SQLite database: voting, pass@k, means, deduplicated execution;
and the report's section on such runs.

Every expected number is worked out by hand from the planned samples (comments say how).
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from sqlbench_lmeval.execution import GoldCache, Job, execute
from sqlbench_lmeval.execution import cache as cache_module
from sqlbench_lmeval.execution.perturbed import perturbed_databases
from sqlbench_lmeval.report.build import write_report
from sqlbench_lmeval.report.runs import read_runs
from sqlbench_lmeval.report.sections.sampling import sampling_rows
from sqlbench_lmeval.scoring import data_dependence
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION, same_result
from sqlbench_lmeval.scoring.gold_ties import plan_gold
from sqlbench_lmeval.scoring.hooks import Hooks
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.scorer import Scorer
from sqlbench_lmeval.scoring.verdicts import aggregate

# The ``database`` fixture (conftest.py) is the pumps database: A (flow 10, head 2.5), B (20, 1.0),
# C (5, 4.0).


def item(database, id, gold_sql):
    return Item(id, f"question {id}", database, gold_sql, "sqlite", category="physical")


# Item 1, gold {A, B} unordered. Samples: correct, the same query with other whitespace,
# wrong rows {A, B, C}, an unknown column. n=4, c=2.
ITEM1 = (
    "SELECT name FROM pump WHERE flow > 6",
    [
        "```sql\nSELECT name FROM pump WHERE flow > 6\n```",
        "SELECT  name FROM pump\nWHERE flow > 6",
        "SELECT name FROM pump",
        "SELECT nme FROM pump",
    ],
)
# Item 2, gold (C, A, B) ordered. Samples 0 and 1 both give (B, A, C): ORDER BY head is
# B 1.0, A 2.5, C 4.0; ORDER BY flow DESC is B 20, A 10, C 5. Sample 2 is gold, 3 is prose.
# n=4, c=1; group {0, 1} (2 samples) beats the gold group {2}.
ITEM2 = (
    "SELECT name FROM pump ORDER BY flow",
    [
        "SELECT name FROM pump ORDER BY head",
        "SELECT name FROM pump ORDER BY flow DESC",
        "SELECT name FROM pump ORDER BY flow",
        "I do not know.",
    ],
)
# Item 3, gold (3). Samples 0 and 2 give 4, 1 and 3 give 3 (correct): a 2-2 tie, won by the
# group whose first sample came first, {0, 2}. n=4, c=2.
ITEM3 = (
    "SELECT COUNT(*) FROM pump",
    ["SELECT 4", "SELECT COUNT(*) FROM pump", "SELECT 2 + 2", "SELECT 3"],
)


def score(database, tmp_path, cases=(ITEM1, ITEM2, ITEM3), item_metrics=None):
    items = [item(database, i + 1, gold) for i, (gold, _) in enumerate(cases)]
    outputs = [samples for _, samples in cases]
    scorer = Scorer(
        gold_cache=GoldCache(tmp_path), progress=False, workers=1, hooks=Hooks(item_metrics)
    )
    return scorer.score_samples(items, outputs)


def test_voting_pass_at_k_and_means_are_the_hand_computed_ones(database, tmp_path):
    one, two, three = score(database, tmp_path)
    # pass@2 = 1 - C(n-c, 2) / C(4, 2): c=2 -> 1 - 1/6; c=1 -> 1 - 3/6.
    assert one["ex_maj"] == 1
    assert (one["pass_at_1"], one["pass_at_2"], one["pass_at_4"]) == pytest.approx((0.5, 5 / 6, 1))
    assert (one["ves_mean"], one["ex_mean"]) == (0.75, 0.5)
    assert one["vote"]["winner"] == 0 and one["vote"]["group_sizes"] == [2, 1]

    assert two["ex_maj"] == 0
    assert (two["pass_at_1"], two["pass_at_2"], two["pass_at_4"]) == pytest.approx((0.25, 0.5, 1))
    assert (two["ves_mean"], two["ex_mean"]) == (0.75, 0.25)
    assert [s["group"] for s in two["samples"]] == [0, 0, 1, None]
    assert two["vote"]["winner"] == 0

    assert three["ex_maj"] == 0  # the tie goes to {0, 2}, which is wrong
    assert [s["group"] for s in three["samples"]] == [0, 1, 0, 1]
    assert three["pass_at_1"] == 0.5
    # ves/ex are the first sample's: 1/1, 1/0, 1/0.
    assert [(s["ves"], s["ex"]) for s in (one, two, three)] == [(1, 1), (1, 0), (1, 0)]
    assert "pass_at_8" not in one  # 4 samples allow k = 1, 2, 4 only


def test_the_sample_log_shows_each_sample(database, tmp_path):
    one = score(database, tmp_path)[0]
    samples = one["samples"]
    assert [s["extracted_sql"] for s in samples[:2]] == [
        "SELECT name FROM pump WHERE flow > 6",
        "SELECT  name FROM pump\nWHERE flow > 6",  # its own text, though run as sample 0's
    ]
    assert [s["duplicate_of"] for s in samples] == [None, 0, None, None]
    assert [s["status"] for s in samples] == ["ok", "ok", "ok", "error"]
    assert [s["ex"] for s in samples] == [1, 1, 0, 0]
    assert [s["group"] for s in samples] == [0, 0, 1, None]
    assert "no such column" in samples[3]["error"]
    assert one["vote"]["n_distinct"] == 3


def test_each_distinct_query_and_each_gold_runs_once(database, tmp_path, monkeypatch):
    ran = []
    real = cache_module.execute_many

    def recording(jobs, *args, **kwargs):
        jobs = list(jobs)  # the prediction jobs come lazily, made while earlier ones run
        ran.extend((job.database, job.sql) for job in jobs)
        return real(jobs, *args, **kwargs)

    monkeypatch.setattr(cache_module, "execute_many", recording)
    monkeypatch.setattr(data_dependence, "execute_many", recording)  # answers on the copy
    scores = score(database, tmp_path)
    # Each gold once (3), then each item's distinct queries once: item 1 drops its sample 1
    # (sample 0 with other whitespace); item 2's prose has no SQL to run. A sample whose text
    # is gold's runs too (predictions are never read from the gold cache). Gold ordered by a
    # column it does not return also runs its tie probe (``gold_ties``), once.
    want = Counter(
        [ITEM1[0], ITEM2[0], ITEM3[0]]
        + tie_probes()
        + ["SELECT name FROM pump WHERE flow > 6", "SELECT name FROM pump", "SELECT nme FROM pump"]
        + ITEM2[1][:3]
        + ITEM3[1]
    )
    assert Counter(s for db, s in ran if s is not None and db == database) == want
    # On each perturbed copy (``data_dependence``): the gold of each item with a sample that
    # matched gold and names a table once (item 3's ``SELECT 3`` is flagged without a run),
    # with its tie probe where a sample other than gold's own text matched (gold's text takes
    # gold's outcome there, without a run, and matches it before any tie rule); then each such
    # distinct sample once, where its gold's result moved.
    matched = {
        (score["id"], sample["executed_sql"])
        for score in scores
        for sample in score["samples"]
        if sample["ex"] and sample["duplicate_of"] is None and "FROM" in sample["executed_sql"]
    }
    gold = {1: ITEM1[0], 2: ITEM2[0], 3: ITEM3[0]}
    asked = {n for n, _ in matched}
    want = Counter()
    for copy in perturbed_databases(database):
        want.update((copy, gold[number]) for number in asked)
        if any(number == 2 and sql != gold[2] for number, sql in matched):
            want.update((copy, probe) for probe in tie_probes())  # item 2's
        for number, sql in matched:
            here, there = (execute(Job(db, gold[number])) for db in (database, copy))
            if sql != gold[number] and not same_result(there, here, ordered=number == 2):
                want[copy, sql] += 1
    assert Counter((db, s) for db, s in ran if db != database) == want


def tie_probes() -> list[str]:
    """The tie probes of the three items' gold (one: item 2 orders by a column it hides)."""
    plans = [plan_gold(gold, "sqlite", 10_000) for gold in (ITEM1[0], ITEM2[0], ITEM3[0])]
    probes = [plan.probe_sql for plan in plans if plan is not None and plan.probe_sql]
    assert len(probes) == 1
    return probes


def test_without_a_gold_cache_gold_still_runs_once_per_item(database, tmp_path, monkeypatch):
    import sqlbench_lmeval.scoring.stages.execute as scoring_module

    ran = []
    real = scoring_module.execute_many

    def recording(jobs, *args, **kwargs):
        jobs = list(jobs)
        ran.extend(job.sql for job in jobs)
        return real(jobs, *args, **kwargs)

    monkeypatch.setattr(scoring_module, "execute_many", recording)
    items = [item(database, i + 1, gold) for i, (gold, _) in enumerate((ITEM1, ITEM2, ITEM3))]
    uncached = Scorer(gold_cache=None, progress=False, workers=1).score_samples(
        items, [ITEM1[1], ITEM2[1], ITEM3[1]]
    )
    # Item 3's gold text is also its sample 1: two runs of it, one as gold and one as answer.
    golds = Counter(s for s in ran if s in (ITEM1[0], ITEM2[0], ITEM3[0]))
    assert golds == Counter({ITEM1[0]: 2, ITEM2[0]: 2, ITEM3[0]: 2})
    # Gold per item and its tie probes, then the distinct queries of items 1, 2 and 3 (item
    # 2's prose is a job without SQL, status no_sql: left out).
    assert len([s for s in ran if s is not None]) == 3 + len(tie_probes()) + 3 + 3 + 4
    assert uncached == score(database, tmp_path)  # the gold cache changes nothing


def test_a_sample_scores_as_it_would_alone(database, tmp_path):
    sampled = score(database, tmp_path)
    for (gold, outputs), scored in zip((ITEM1, ITEM2, ITEM3), sampled, strict=True):
        alone = Scorer(progress=False).score(
            [item(database, scored["id"], gold)] * len(outputs), outputs
        )
        for sample, single in zip(scored["samples"], alone, strict=True):
            assert (sample["status"], sample["ves"], sample["ex"], sample["reason"]) == (
                single["status"],
                single["ves"],
                single["ex"],
                single["reason"],
            )


def test_aggregate_takes_the_sampled_numbers(database, tmp_path):
    metrics = aggregate(score(database, tmp_path))
    assert metrics["ex_maj"] == pytest.approx(1 / 3)
    assert metrics["pass_at_1"] == pytest.approx((0.5 + 0.25 + 0.5) / 3)
    assert metrics["ex"] == pytest.approx(1 / 3)


def test_no_sample_that_runs_scores_zero_with_no_winner(database, tmp_path):
    (scored,) = score(database, tmp_path, cases=[("SELECT 1", ["prose", "SELECT nope"])])
    assert scored["ex_maj"] == 0 and scored["vote"]["winner"] is None
    assert scored["pass_at_1"] == 0 and scored["pass_at_2"] == 0


def test_item_metrics_of_the_voted_answer_and_their_mean(database, tmp_path):
    def length(item, sql):
        return {"structural_similarity": float(len(sql or ""))}

    one = score(database, tmp_path, cases=[ITEM1], item_metrics=length)[0]
    # Voted answer: sample 0, "SELECT name FROM pump WHERE flow > 6" (36 characters). Samples
    # score 36, 36 (run as sample 0), 21 ("SELECT name FROM pump"), 20 ("SELECT nme FROM pump").
    assert one["structural_similarity"] == 36
    assert one["structural_similarity_mean"] == pytest.approx((36 + 36 + 21 + 20) / 4)


# --- the report's section on sampled runs ---


def write_scores(path, items):
    path.write_text(
        json.dumps(
            {
                "task": "pumps",
                "comparison_version": COMPARISON_VERSION,
                "dataset_version": "pumps-1",
                "items": items,
            },
            default=str,
        )
    )
    return path


def test_sampled_runs_get_voting_and_pass_at_k(database, tmp_path):
    scores = write_scores(tmp_path / "sampled.json", score(database, tmp_path))
    (row,) = sampling_rows(read_runs([f"sampled={scores}"]))
    # Per item (test_sampled_scoring): first-sample EX 1, 0, 0; ex_maj 1, 0, 0;
    # ex_mean 2/4, 1/4, 2/4; pass@2 5/6, 1/2, 5/6 (c = 2, 1, 2 of n = 4); pass@4 1.
    assert row.n == 3
    assert row.ex_first == pytest.approx(1 / 3)
    assert row.ex_maj == pytest.approx(1 / 3)
    assert row.ex_mean == pytest.approx((0.5 + 0.25 + 0.5) / 3)
    assert row.pass_at[1] == pytest.approx((0.5 + 0.25 + 0.5) / 3)
    assert row.pass_at[2] == pytest.approx((5 / 6 + 0.5 + 5 / 6) / 3)
    assert row.pass_at[4] == pytest.approx(1.0)
    assert sorted(row.pass_at) == [1, 2, 4]

    files = write_report(read_runs([f"sampled={scores}"]), tmp_path / "report", resamples=50)
    markdown = files.markdown.read_text()
    assert "Sampled runs: voting and pass@k" in markdown
    assert "pass@4" in markdown
    assert any(image.name == "pass_at_k-pumps.png" for image in files.images)
    assert (tmp_path / "report" / "pass_at_k-pumps.png").stat().st_size > 0


def test_a_run_of_single_answers_has_no_sampling_section(database, tmp_path):
    single = [
        {k: v for k, v in item.items() if k not in ("ex_maj", "vote", "samples")}
        for item in score(database, tmp_path, cases=[ITEM1, ITEM2, ITEM3])
    ]
    scores = write_scores(tmp_path / "single.json", single)
    runs = read_runs([f"single={scores}"])
    assert sampling_rows(runs) == []
    markdown = write_report(runs, tmp_path / "report", resamples=50).markdown.read_text()
    assert "Sampled runs" not in markdown
