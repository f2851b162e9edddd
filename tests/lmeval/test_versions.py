"""The result shapes of the lm-eval versions we support, on real score dicts (the filter's, on a
real SQLite file and real workers): what each version hands ``process_results``, written as its
own code does it, and what our numbers are then. lm-eval 0.4.13 passes one value per request
(``evaluator.py``: ``[req.filtered_resps[key] for req in requests]``); 0.5 flattens them first
(``api/task/_task.py``: ``list(chain.from_iterable(...))``). The real runs of both versions are
compared in CI (``.ci/lm-eval-versions``)."""

from __future__ import annotations

import sqlite3
from itertools import chain
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from sqlbench_lmeval.execution import Database
from sqlbench_lmeval.lmeval import versions
from sqlbench_lmeval.lmeval.hooks import ExecuteAndScore, process_results
from sqlbench_lmeval.report.runs import score_dict_of
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.metrics import execution_metrics

REPO = Path(__file__).resolve().parents[2]
GOLD = "SELECT name FROM pump ORDER BY name"
WRONG = "SELECT 'Z' AS name"
OLD, NEW = versions.TESTED


def passed_by_0_4(per_request: list) -> list:
    """lm-eval 0.4.13's ``results`` for one document: a value per request, as filtered."""
    return list(per_request)


def passed_by_0_5(per_request: list) -> list:
    """lm-eval 0.5's: the requests' filtered responses flattened into one list."""
    return list(chain.from_iterable(per_request))


PASSING = {OLD: passed_by_0_4, NEW: passed_by_0_5}


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """Two documents and their real score dicts: the first answered with gold, the second
    wrongly (so EX is 1, then 0, whatever the scorer's code)."""
    folder = tmp_path_factory.mktemp("versions")
    path = folder / "pumps.sqlite"
    with sqlite3.connect(path) as conn:
        conn.executescript("CREATE TABLE pump (name TEXT); INSERT INTO pump VALUES ('A'), ('B');")
    conn.close()
    database = Database("sqlite", str(path))
    docs = [
        Item(i, f"question {i}", database, GOLD, "sqlite", "physical", "ok").to_doc()
        for i in (1, 2)
    ]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SQLBENCH_LMEVAL_CACHE", str(folder / "cache"))
        scores = ExecuteAndScore("logiccat").apply([[GOLD], [WRONG]], docs)
    return docs, [score_dict_of(score) or score for score in scores]


def test_the_score_dicts_are_real(scored):
    _, scores = scored
    assert [(s["id"], s["status"], s["ex"]) for s in scores] == [(1, "ok", 1), (2, "ok", 0)]


@pytest.mark.parametrize("version", versions.TESTED)
def test_every_version_hands_process_results_the_score_dict(scored, version):
    docs, scores = scored
    for doc, score in zip(docs, scores, strict=True):
        output = versions.filter_output(score, version)
        results = PASSING[version]([output])  # one request per document
        assert results == [score]
        assert versions.passed_results([output], version) == results
        numbers = process_results(doc, results)
        assert numbers["ex"] == (1 if score["id"] == 1 else 0)
        assert numbers == process_results(doc, [score])


def test_the_0_4_shape_on_0_5_is_the_dicts_keys_and_zeros(scored):
    # The bug lm-eval 0.5 showed with a filter that returned the score dict as it is.
    docs, scores = scored
    doc, score = docs[0], scores[0]
    results = passed_by_0_5([score])
    assert results == list(score) and versions.passed_results([score], NEW) == results
    zeros = dict.fromkeys(execution_metrics(doc["engine"]), 0)
    assert process_results(doc, results) == zeros
    assert process_results(doc, passed_by_0_4([score]))["ex"] == 1


def test_filter_returns_the_installed_versions_shape(scored):
    _, scores = scored
    installed = versions.installed()
    wrapped = versions.flattens_results(installed)
    assert [versions.filter_output(s) for s in scores] == [[s] if wrapped else s for s in scores]


@pytest.mark.parametrize(
    ("version", "flattens"),
    [
        ("0.4.13", False),
        ("0.4.14", False),
        ("0.5.0.dev0", True),
        ("0.5.0.dev2", True),
        ("0.5.1", True),
        (None, False),
        ("not a version", False),
    ],
)
def test_which_versions_flatten(version, flattens):
    assert versions.flattens_results(version) is flattens


def test_the_requirement_admits_the_tested_versions_and_none_beyond():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = chain(project["dependencies"], *project["optional-dependencies"].values())
    specifiers = {
        requirement.specifier
        for requirement in map(Requirement, declared)
        if requirement.name.replace("_", "-") == "lm-eval"
    }
    assert len(specifiers) == 1, specifiers  # the core and every extra ask for the same range
    (specifier,) = specifiers
    assert all(specifier.contains(version) for version in versions.TESTED)
    # 0.5.0.dev1 is on the package index: a range that named 0.5.0.dev2 as its bound alone let
    # pip choose that untested preview for every install (a pre-release in a specifier admits
    # pre-releases).
    beyond = ("0.5.0.dev0", "0.5.0.dev1", "0.5.0.dev3", "0.5.0", "0.5.1", "0.6.0", "0.4.12")
    assert [v for v in beyond if specifier.contains(v, prereleases=True)] == []
