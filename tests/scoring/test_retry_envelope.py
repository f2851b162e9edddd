"""The repair model's envelope and the filter's first/last-attempt scoring (no engine needed:
a stand-in ``score`` gives each text's numbers, so the expected values are read off the plan)."""

from __future__ import annotations

from sqlbench_lmeval.scoring.retry_envelope import attempts_of, score_with_retries, wrap


def fake_score(items, texts):
    # "good" answers score 1/1, everything else 0/0; the item is echoed to check alignment.
    return [
        {"id": item, "status": "ok" if t == "good" else "error", "ves": int(t == "good"),
         "ex": int(t == "good")}
        for item, t in zip(items, texts, strict=True)
    ]  # fmt: skip


def test_wrap_round_trips_and_other_texts_are_not_envelopes():
    attempts = [{"output": "bad", "status": "error", "error": "x"}, {"output": "good"}]
    assert attempts_of(wrap(attempts)) == attempts
    for text in ("SELECT 1", '{"a": 1}', "{not json", '{"sqlbench_repair": 1, "attempts": []}',
                 '{"sqlbench_repair": 2, "attempts": [{"output": "x"}]}', None):  # fmt: skip
        assert attempts_of(text) is None


def test_first_attempt_is_ves_ex_and_last_is_the_retry_metric():
    outputs = [
        wrap([{"output": "bad"}, {"output": "good"}]),  # fixed on the 2nd attempt
        wrap([{"output": "bad"}] * 4),  # never fixed
        wrap([{"output": "good"}]),  # right at once
        "good",  # a plain answer (another model): no retry keys
    ]
    calls = []

    def score(items, texts):
        calls.append(list(texts))
        return fake_score(items, texts)

    scores = score_with_retries(["a", "b", "c", "d"], outputs, score)
    numbers = [
        (s["id"], s["ves"], s["ex"], s.get("ves@retry"), s.get("ex@retry"), s.get("retries_used"))
        for s in scores
    ]
    assert numbers == [
        ("a", 0, 0, 1, 1, 1),
        ("b", 0, 0, 0, 0, 3),
        ("c", 1, 1, 1, 1, 0),
        ("d", 1, 1, None, None, None),
    ]
    # First attempts scored together, then only the last attempts of retried items.
    assert calls == [["bad", "bad", "good", "good"], ["good", "bad"]]
    assert scores[0]["final_status"] == "ok" and scores[1]["final_status"] == "error"
    assert "attempts" not in scores[3]
