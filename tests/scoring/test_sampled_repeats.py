"""Another number of samples: a user's YAML that includes ``logiccat_mini_sc`` with
``repeats: 4`` runs through the real ``lm_eval`` CLI, and pass@k stops at k = 4."""

from __future__ import annotations

from collections import defaultdict

import pytest
from support import logiccat_answers
from support.lm_eval_run import run_lm_eval
from support.logiccat_answers import gold_answer_scores

from sqlbench_lmeval.logiccat.bundle import load_bundle
from sqlbench_lmeval.paths import tasks_dir

pytestmark = pytest.mark.slow


def test_a_yaml_including_ours_sets_the_number_of_samples(logiccat_cache, tmp_path):
    folder = tmp_path / "my_tasks"
    folder.mkdir()
    base = tasks_dir() / "logiccat" / "logiccat_mini_sc.yaml"
    (folder / "my_sc4.yaml").write_text(f"include: {base}\ntask: my_sc4\nrepeats: 4\n")
    records = load_bundle(logiccat_cache).records
    by_id = {record.id: record for record in records}
    asked = defaultdict(int)

    def respond(record):
        # Answers in order: gold, wrong, wrong, error. c = 1 of n = 4: pass@1 = 1/4,
        # pass@2 = 1 - C(3, 2) / C(4, 2) = 1 - 3/6, pass@4 = 1; the wrong pair outvotes gold.
        index = asked[record.id] % 4
        asked[record.id] += 1
        if index == 0:
            return f"```sql\n{record.gold_sql}\n```"
        return "SELECT 'not the answer' AS x" if index < 3 else "SELECT nope FROM nowhere"

    results, samples = run_lm_eval(
        "my_sc4",
        answer=logiccat_answers.scripted_model(records, respond),
        include_path=folder,
        workdir=tmp_path,
        extra_args=["--limit", "3"],
        env={"SQLBENCH_LMEVAL_CACHE": str(logiccat_cache)},
    )
    logged = samples["my_sc4"]
    assert all(len(sample["resps"][0]) == 4 for sample in logged)
    matchable = [s for s in logged if gold_answer_scores(by_id[s["doc"]["id"]]) == (1, 1)]
    assert matchable, "at least one item must have gold an answer can match"
    for sample in matchable:
        assert [sample[f"pass_at_{k}"] for k in (1, 2, 4)] == pytest.approx([0.25, 0.5, 1.0])
        assert sample["ex_maj"] == 0
    assert "pass_at_8" not in logged[0]
    assert "pass_at_8,score" not in results["results"]["my_sc4"]
