"""LogicCat's official split of 2026 as the package ships it and as the tasks load it: the same
ids as the transcription in ../shared/logiccat/splits-2026.json, the test split on databases
of its own, and prompts that never hold a dev or test item but their own."""

from __future__ import annotations

import json
import re

import pytest
from conftest import logiccat_source

from sqlbench_lmeval.lmeval.task_specs import task_groups, task_spec
from sqlbench_lmeval.logiccat.split import (
    SPLITS,
    ids_checksum,
    official_split,
    split_of_version,
)
from sqlbench_lmeval.logiccat.task import documents
from sqlbench_lmeval.offline import task_documents

GROUPS = {"dev": "logiccat_dev", "test": "logiccat_test"}
TYPES = {"1": "physical", "2": "mathematical", "3": "commonsense", "4": "hypothetical"}
# Upstream's split puts three dev questions in train as well, word for word (read off
# records-4036.json by hand; docs/which-number.md, "The official split"): dev id -> train id.
TRAIN_TWINS = {179: 187, 2051: 2029, 2683: 2743}


@pytest.fixture(scope="module")
def transcribed() -> dict:
    """The split as transcribed from upstream (../shared/logiccat/splits-2026.json)."""
    return json.loads((logiccat_source() / "splits-2026.json").read_text("utf-8"))


def test_the_shipped_split_is_the_transcribed_one_with_its_commits_and_checksum(transcribed):
    split = official_split()
    for name in SPLITS:
        assert split.ids[name] == set(transcribed[name]), name
    assert (len(split.ids["train"]), len(split.ids["dev"]), len(split.ids["test"])) == (
        2218,
        800,
        800,
    )
    assert split.sha256 == ids_checksum(transcribed)
    # The source line of the transcription names the commits of the split files.
    assert split.commits["dev"] in transcribed["source"]
    assert split.commits["train"] in transcribed["source"]
    assert split.commits["dev"].startswith("aa2e332")
    assert split.commits["train"].startswith("bc4bf08")
    assert set(split.test_databases) == set(transcribed["test_databases"])
    assert not (split.ids["dev"] & split.ids["test"] or split.ids["train"] & split.ids["test"])
    assert not split.ids["train"] & split.ids["dev"]


def test_a_changed_split_file_is_refused(tmp_path, monkeypatch):
    from sqlbench_lmeval.errors import UserError
    from sqlbench_lmeval.logiccat import split as split_module

    data = json.loads(
        (split_module.resources.files(split_module.__package__) / "split_2026.json").read_text()
    )
    data["test"] = data["test"][1:]  # one id dropped, checksum kept
    (tmp_path / split_module.SPLIT_FILE).write_text(json.dumps(data))
    monkeypatch.setattr(split_module.resources, "files", lambda package: tmp_path)
    split_module.official_split.cache_clear()
    try:
        with pytest.raises(UserError, match="reinstall"):
            split_module.official_split()
    finally:
        monkeypatch.undo()
        split_module.official_split.cache_clear()


def test_the_split_tasks_ask_for_mysql_and_take_examples_from_train():
    for split, group in GROUPS.items():
        members = task_groups()[group]
        assert [task_spec(m).dataset_kwargs["subset"] for m in members] == [
            "physical",
            "mathematical",
            "commonsense",
            "hypothetical",
        ]
        for member in members:
            spec = task_spec(member)
            assert spec.dataset_kwargs["split"] == split
            assert spec.data_options() == {"dialect": "mysql"}
            assert spec.version == task_spec("logiccat_physical").version


@pytest.mark.slow
def test_the_tasks_load_exactly_the_split_ids_and_test_has_databases_of_its_own(
    logiccat_cache, transcribed
):
    databases = {}
    for split, group in GROUPS.items():
        docs = [
            doc
            for member in task_groups()[group]
            for doc in task_documents(task_spec(member), cache_dir=logiccat_cache)
        ]
        ids = [doc["id"] for doc in docs]
        assert len(ids) == len(set(ids)) == 800
        assert set(ids) == set(transcribed[split]), split
        assert {doc["split"] for doc in docs} == {split}
        assert {doc["prediction_dialect"] for doc in docs} == {"mysql"}
        assert {split_of_version(doc["dataset_version"]) for doc in docs} == {split}
        databases[split] = {doc["db_id"] for doc in docs}
    train = documents("all", cache_dir=logiccat_cache, split="train")
    assert {doc["id"] for doc in train} == set(transcribed["train"])
    databases["train"] = {doc["db_id"] for doc in train}
    assert databases["test"] == set(transcribed["test_databases"])
    assert not databases["test"] & (databases["dev"] | databases["train"])
    assert databases["dev"] <= databases["train"]


@pytest.mark.slow
def test_few_shot_prompts_of_dev_and_test_hold_train_items_only(
    logiccat_cache, monkeypatch, transcribed
):
    """lm-eval's own sampler, as ``--num_fewshot 3`` uses it: every example it puts in a dev or
    test prompt is a train item, and no prompt holds another dev or test question."""
    monkeypatch.setenv("SQLBENCH_LMEVAL_CACHE", str(logiccat_cache))
    from lm_eval.tasks import TaskManager

    upstream = json.loads((logiccat_source() / "records-4036.json").read_text("utf-8"))
    names = ["logiccat_dev_physical", "logiccat_test_hypothetical"]
    tasks = TaskManager().load(names)["tasks"]
    split = official_split()
    question = re.compile(r"Question: (.*?)\n\n", re.S)
    for name in names:
        task = tasks[name]
        task.set_config(key="num_fewshot", value=3)
        # lm-eval's own task holds exactly the transcribed split's items of its category.
        split_name, category = name.split("_")[1], name.rsplit("_", 1)[1]
        assert {doc["id"] for doc in task.eval_docs} == {
            record["idx"]
            for record in upstream
            if record["idx"] in transcribed[split_name]
            and TYPES[str(record["type"]).strip()] == category
        }
        examples = list(task.fewshot_docs())
        assert examples and {doc["split"] for doc in examples} == {"train"}
        assert {doc["id"] for doc in examples} == split.ids["train"]
        # The seed lm-eval's evaluator gives the sampler by default; unseeded, it draws anew.
        task.set_fewshot_seed(1234)
        train_questions = {doc["question"].strip() for doc in examples}
        held_out = {
            doc["question"].strip()
            for doc in (*task.eval_docs, *tasks[names[1 - names.index(name)]].eval_docs)
            if doc["id"] not in TRAIN_TWINS
        }
        for doc in list(task.eval_docs)[:20]:
            prompt = task.fewshot_context(doc, num_fewshot=3)
            asked = [q.strip() for q in question.findall(prompt)]
            assert len(asked) == 4, prompt[:300]  # three examples, then the item's own question
            assert asked[-1] == doc["question"].strip()
            assert set(asked[:-1]) <= train_questions, doc["id"]
            assert not set(asked[:-1]) & held_out, doc["id"]


def test_the_only_questions_both_held_out_and_in_train_are_the_three_twins(transcribed):
    """Upstream's split keeps no dev or test question out of train but three dev questions,
    which train repeats word for word; a few-shot prompt can hold those, and only those."""
    upstream = json.loads((logiccat_source() / "records-4036.json").read_text("utf-8"))
    question = {record["idx"]: record["question"].strip() for record in upstream}
    train = {question[idx]: idx for idx in transcribed["train"]}
    held_out = [idx for name in ("dev", "test") for idx in transcribed[name]]
    twins = {idx: train[question[idx]] for idx in held_out if question[idx] in train}
    assert twins == TRAIN_TWINS
    assert set(TRAIN_TWINS) <= set(transcribed["dev"])
