"""Why a claimed item number differs from ours: a difference on an item whose gold calls RAND()
is benign (its gold gives another result on every run), the same difference elsewhere is not."""

from __future__ import annotations

import pytest

from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.submission.checks.rescoring import (
    BENIGN_CAUSES,
    RANDOM_GOLD_CAUSE,
    _likely_cause,
)
from sqlbench_lmeval.submission.logged import LoggedAnswer


def claimed_and_ours(flags: list[str]) -> tuple[LoggedAnswer, ScoredItem]:
    # LogicCat 1440's shape: gold ran, the answer ran; the run judged it correct, we do not.
    claimed = {
        **{"id": 1440, "status": "ok", "gold_status": "ok", "flags": flags},
        **{"ves": 1, "ex": 1, "ex_strict": 1, "ex_set": 1},
    }
    answer = LoggedAnswer(
        where="samples.jsonl:1",
        item_id=1440,
        doc={"id": 1440},
        prompt=None,
        generation=None,
        outputs=("SELECT 1",),
        claimed_raw=repr(claimed),
    )
    return answer, ScoredItem.from_score(dict(claimed, ves=0, ex=0, ex_strict=0, ex_set=0))


@pytest.mark.parametrize(
    ("flags", "benign"),
    [
        (["clock_dependent", "random"], True),
        (["random"], True),
        (["clock_dependent"], False),
        ([], False),
    ],
)
def test_only_random_gold_explains_another_verdict(flags, benign):
    answer, ours = claimed_and_ours(flags)
    cause = _likely_cause(answer, answer.claimed, ours, ["ex"], beside=False)
    assert (cause == RANDOM_GOLD_CAUSE) is benign
    assert cause.startswith(BENIGN_CAUSES) is benign


def test_an_edited_sample_is_edited_even_where_gold_is_random():
    answer, ours = claimed_and_ours(["random"])
    beside = {"ex": 0}  # the numbers logged beside the score dict disagree with it
    cause = _likely_cause(answer, beside, ours, ["ex"], beside=True)
    assert cause == "the sample's metrics differ from its own score dict: edited after scoring"
