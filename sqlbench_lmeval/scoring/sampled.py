"""Score several sampled answers per item, for the sampled lm-eval tasks (through
:class:`sqlbench_lmeval.lmeval.sampling.ExecuteAndScoreSamples`) and ``sqlbench-lmeval score
--samples`` alike: each distinct prediction runs once through ``Scorer.run``, the samples that
ran are voted on (:func:`sampling.vote`), and each item's score dict holds the first sample's
numbers, ``ex_maj``, pass@k and the means over samples, with the ``vote`` and ``samples``
records lm-eval's sample log shows (the steps and every number:
docs/sampling.md#how-the-samples-are-scored)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from statistics import fmean

from sqlbench_lmeval.execution import Status
from sqlbench_lmeval.scoring.answer import READS_NO_TABLE, Failure
from sqlbench_lmeval.scoring.batch import Incoming
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION, compare
from sqlbench_lmeval.scoring.data_dependence import DATA_DEPENDENCE
from sqlbench_lmeval.scoring.item import EXCLUDED, Item
from sqlbench_lmeval.scoring.metrics import (
    ACCEPTABLE,
    EX,
    EXECUTION_METRICS,
    GOLD_WORK,
    MEAN_EX,
    MEAN_VES,
    PASS_AT,
    TIE_STATUS,
    VES,
    VOTED_EX,
    WORK,
    names,
    samples_mean,
)
from sqlbench_lmeval.scoring.sampling import normalized_sql, pass_at_k, reported_ks, vote
from sqlbench_lmeval.scoring.stages.extract import extract_answer
from sqlbench_lmeval.sql.extract import Extraction

#: Per-item numbers of a benchmark (``item_metrics``) reported for the voted answer and as a
#: mean over samples (``Metric.voted`` in the registry); the others stay in each sample's record.
VOTED_ITEM_METRICS = names(voted=True)

#: The fields of a sample's score dict its sample-log record keeps.
_SAMPLE_FIELDS = (
    "status",
    "reason",
    "error",
    *EXECUTION_METRICS,
    "truncated",
    "repetition_loop",
    READS_NO_TABLE,
    "extraction",
    "executed_sql",
    *VOTED_ITEM_METRICS,
    WORK,
)


@dataclass(frozen=True)
class VoteRecord:
    """The vote record of a sampled item's score (``vote``): how many samples, how many correct
    and distinct, the winning sample and its group (None: no sample ran) and every group's size
    (the groups: :func:`sampling.vote`)."""

    n_samples: int
    n_correct: int
    n_distinct: int
    winner: int | None
    winner_group: int | None
    group_sizes: list[int]

    def to_json(self) -> dict:
        return {
            "n_samples": self.n_samples,
            "n_correct": self.n_correct,
            "n_distinct": self.n_distinct,
            "winner": self.winner,
            "winner_group": self.winner_group,
            "group_sizes": self.group_sizes,
        }


@dataclass(frozen=True)
class SampleRecord:
    """One sample's record in its item's score (``samples``): its place in sampling order, the
    SQL extracted from it, the earlier sample it repeats (scored once, as that one), its vote
    group and the ``_SAMPLE_FIELDS`` of its own score dict (``fields``, in that order)."""

    sample: int
    extracted_sql: str | None
    duplicate_of: int | None
    group: int | None
    fields: dict

    def to_json(self) -> dict:
        return {
            "sample": self.sample,
            "extracted_sql": self.extracted_sql,
            "duplicate_of": self.duplicate_of,
            "group": self.group,
            **self.fields,
        }


def dedup_key(output: str | None, extraction: Extraction | None, failure: Failure | None) -> tuple:
    """What two outputs of one item must share to be scored as one prediction
    (``extraction``, ``failure``: :func:`scoring.extract_answer` of ``output``)."""
    if extraction is None or (failure is not None and extraction.sql is None):
        return ("raw", output)  # never submitted, or the extractor failed: its own prediction
    if extraction.sql is None:  # nothing to run: alike when found alike
        return ("no_sql", extraction.method, extraction.truncated, extraction.repetition_loop)
    return (
        "sql",
        normalized_sql(extraction.sql),
        extraction.problem,
        extraction.truncated,
        extraction.repetition_loop,
    )


def score_samples(scorer, items: Sequence[Item], outputs: Sequence[Sequence[str | None]]) -> list:
    """One score dict per item (docs/sampling.md); ``outputs[i]`` are the samples of
    ``items[i]`` in sampling order (at least one; None: never submitted), scored by ``scorer``
    (``scoring.scorer.Scorer``)."""
    if len(items) != len(outputs):
        raise ValueError(f"{len(items)} items but {len(outputs)} sample lists")
    for item, samples in zip(items, outputs, strict=True):
        if not samples:
            raise ValueError(f"item {item.id} has no samples")
    # Per item: for each sample, the index of its distinct prediction among the answers
    # scored, and the first sample with the same prediction; filled as the answers are made.
    slots: list[list[int]] = []
    firsts: list[list[int]] = []
    sqls: list[list[str | None]] = []  # each sample's own extracted SQL, for the sample log
    dialects = [item.prompted_dialect for item in items]
    tail = scorer.hooks.prompt_tail
    answers = _distinct_answers(outputs, dialects, tail, slots, firsts, sqls)
    # About how many answers there will be (for the progress bar): distinct texts per item.
    expected = sum(len(set(samples)) for samples in outputs)
    answers = scorer.run(items, answers, expected).answers
    scores = [answer.to_json() for answer in answers]
    return [
        _item_score(item, item_sql, item_slots, item_firsts, answers, scores)
        for item, item_sql, item_slots, item_firsts in zip(items, sqls, slots, firsts, strict=True)
    ]


def _distinct_answers(outputs, dialects, prompt_tail, slots, firsts, sqls) -> Iterator[Incoming]:
    """The distinct predictions of every item, as ``Scorer.run`` takes them, extracted
    one item at a time as they are consumed; appends each item's ``slots``, ``firsts`` and
    ``sqls`` (see :func:`score_samples`)."""
    count = 0
    for index, (samples, dialect) in enumerate(zip(outputs, dialects, strict=True)):
        seen: dict[tuple, tuple[int, int]] = {}
        by_text: dict[str | None, tuple] = {}  # identical outputs are extracted once
        item_slots, item_firsts, item_sql = [], [], []
        for sample, output in enumerate(samples):
            if output not in by_text:
                by_text[output] = extract_answer(output, prompt_tail, dialect)
            extraction, failure = by_text[output]
            item_sql.append(None if extraction is None else extraction.sql)
            key = dedup_key(output, extraction, failure)
            if key not in seen:
                seen[key] = (count, sample)
                count += 1
                yield index, output, by_text[output]
            item_slots.append(seen[key][0])
            item_firsts.append(seen[key][1])
        slots.append(item_slots)
        firsts.append(item_firsts)
        sqls.append(item_sql)


def _item_score(item, item_sql, item_slots, item_firsts, answers, all_scores) -> dict:
    scores = [all_scores[slot] for slot in item_slots]
    if scores[0]["status"] == EXCLUDED:  # gold did not finish: no sample is judged, none voted
        return dict(scores[0], vote=None, samples=[])
    outcomes = [answers[slot].outcome for slot in item_slots]
    ordered = answers[item_slots[0]].ordered
    ran = [o is not None and o.status is Status.OK for o in outcomes]
    correct = [bool(s[EX]) for s in scores]

    def same_result(i: int, j: int) -> bool:
        if item_slots[i] == item_slots[j]:  # one query: one result
            return True
        return compare(outcomes[i], outcomes[j], ordered=ordered).ex

    voted = vote(ran, correct, same_result)
    result = _numbers(item, scores, voted, len(item_sql), sum(correct))
    result.update(
        _first_sample(scores[0], ordered),
        vote=VoteRecord(
            n_samples=len(item_sql),
            n_correct=sum(correct),
            n_distinct=len(set(item_slots)),
            winner=voted.winner,
            winner_group=None if voted.winner is None else voted.groups[voted.winner],
            group_sizes=voted.sizes,
        ).to_json(),
        samples=[
            SampleRecord(
                sample=index,
                extracted_sql=sql if sql is not None else score["extracted_sql"],
                duplicate_of=None if item_firsts[index] == index else item_firsts[index],
                group=voted.groups[index],
                fields={name: score[name] for name in _SAMPLE_FIELDS if name in score},
            ).to_json()
            for index, (sql, score) in enumerate(zip(item_sql, scores, strict=True))
        ],
    )
    return result


def _numbers(item, scores: list[dict], voted, n: int, c: int) -> dict:
    """The item's numbers: the first sample's, the voted answer's, pass@k and the means."""
    chosen = scores[voted.winner if voted.winner is not None else 0]
    first = scores[0]
    result = {
        "id": item.id,
        "category": item.category,
        # The first sample's verdict: what one answer gets (aggregate() counts these).
        # (those defined on the item's engine: r_ves is not where the engine counts no work)
        **{name: first[name] for name in EXECUTION_METRICS if name in first},
        VOTED_EX: chosen[EX] if voted.winner is not None else 0,
        **{PASS_AT[k]: pass_at_k(n, c, k) for k in reported_ks(n)},
        MEAN_VES: fmean(s[VES] for s in scores),
        MEAN_EX: fmean(s[EX] for s in scores),
    }
    for name in VOTED_ITEM_METRICS:
        if name in first:
            result[name] = chosen[name]
            result[samples_mean(name)] = fmean(s[name] for s in scores)
    return result


def _first_sample(first: dict, ordered: bool) -> dict:
    """The first sample's status, reason, flags and work, and gold's, as the item's."""
    return {
        "status": first["status"],
        "reason": first["reason"],
        "truncated": first["truncated"],
        "repetition_loop": first["repetition_loop"],
        READS_NO_TABLE: first[READS_NO_TABLE],
        DATA_DEPENDENCE: first[DATA_DEPENDENCE],
        "gold_status": first["gold_status"],
        "gold_error": first["gold_error"],
        "flags": first["flags"],
        "ordered": ordered,
        "comparison_version": COMPARISON_VERSION,
        # The first sample's work and gold's, as its r_ves above (each sample keeps its own).
        WORK: first.get(WORK),
        GOLD_WORK: first.get(GOLD_WORK),
        TIE_STATUS: first.get(TIE_STATUS),
        ACCEPTABLE: first.get(ACCEPTABLE),
    }
