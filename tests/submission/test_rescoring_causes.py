"""Why a claimed item number differs from ours: a difference on an item whose gold calls RAND()
is benign (its gold gives another result on every run), the same difference elsewhere is not;
numbers exactly as another lm-eval version's way of passing results made them are named as that
cause, any other difference beside a score dict as an edit."""

from __future__ import annotations

import pytest

from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.submission.checks.rescoring import (
    BENIGN_CAUSES,
    RANDOM_GOLD_CAUSE,
    VERSION_CAUSE,
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


# --- another lm-eval version's way of passing results ------------------------------------------

# A score dict as lm-eval 0.5 passed it to a sqlbench-lmeval filter that returned it unwrapped:
# process_results received its keys and gave zeros, which the samples log carries beside it.
SCORE = {"id": 7, "status": "ok", "gold_status": "ok", "ves": 1, "ex": 1, "ex_strict": 1}
SCORE.update(ex_set=1, ex_reads_data=1, r_ves=1.0, ex_on_healthy_gold=1)
ZEROS = dict.fromkeys(("ves", "ex", "ex_strict", "ex_set", "ex_reads_data", "r_ves"), 0)


def logged(filtered_resps, beside) -> LoggedAnswer:
    return LoggedAnswer(
        where="samples.jsonl:1",
        item_id=7,
        doc={"id": 7, "engine": "sqlite"},
        prompt=None,
        generation=None,
        outputs=("SELECT 1",),
        claimed_raw=filtered_resps,
        claimed_numbers=beside,
    )


def test_zeros_made_by_0_5_passing_an_unwrapped_dict_are_named_as_that():
    answer = logged([repr(SCORE)], ZEROS)
    ours = ScoredItem.from_score(SCORE)
    cause = _likely_cause(answer, ZEROS, ours, ["ex"], beside=True, lm_eval="0.5.0.dev2")
    assert cause.startswith(VERSION_CAUSE)
    assert "lm-eval 0.5.0.dev2" in cause and "the score dict's keys" in cause
    assert not cause.startswith(BENIGN_CAUSES) and "edited" not in cause


@pytest.mark.parametrize(
    ("lm_eval", "filtered_resps", "beside"),
    [
        ("0.4.13", [repr(SCORE)], ZEROS),  # 0.4.13 passes the dict itself: the zeros are edits
        (None, [repr(SCORE)], ZEROS),  # no version recorded
        ("0.5.0.dev2", [repr(SCORE)], {**ZEROS, "ves": 1}),  # not what the keys give
        ("0.5.0.dev2", [repr(SCORE)], {"ex": 0}),  # only some of what they give
        ("0.5.0.dev2", [[repr(SCORE)]], ZEROS),  # wrapped: 0.5 passed the dict itself
    ],
)
def test_numbers_no_version_explains_are_edits(lm_eval, filtered_resps, beside):
    answer = logged(filtered_resps, beside)
    ours = ScoredItem.from_score(SCORE)
    cause = _likely_cause(answer, beside, ours, ["ex"], beside=True, lm_eval=lm_eval)
    assert cause == "the sample's metrics differ from its own score dict: edited after scoring"
