"""The metric registry: every number a score dict carries, declared once in :data:`METRICS`
(a :class:`Metric` says what the number is, which items carry it, how lm-eval aggregates it and
where it appears); scoring, sampled scoring, the lm-eval hooks, the report, the explorer and
``score``'s summary read it, and the task YAML ``metric_list``s are written from it. A
per-answer metric is a function of one :class:`Executed` answer, computed here in registry
order; the others are made elsewhere and only declared (``made_by``); how to add either, and
what the tests check: docs/adding-a-metric.md.

>>> metric("ex_maj").label, metric("ex_maj").made_by
('EX (vote)', 'scoring.sampled')
>>> after_retries("ex"), samples_mean("structural_similarity"), names(family=RETRY)
('ex@retry', 'structural_similarity_mean', ('ves@retry', 'ex@retry', 'retries_used'))
>>> metric("ex").used_by("tpcds", SAMPLED), metric("parsed").used_by("logiccat", SINGLE)
(True, False)
>>> metric("accuracy")
Traceback (most recent call last):
...
KeyError: "metric 'accuracy' is not registered in scoring.metrics"
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from types import MappingProxyType

from sqlbench_lmeval.execution import Outcome, engines
from sqlbench_lmeval.scoring.compare import Verdict, ves
from sqlbench_lmeval.scoring.cost import COST_NUMBERS
from sqlbench_lmeval.scoring.efficiency import r_ves
from sqlbench_lmeval.scoring.gold_ties import GoldTies
from sqlbench_lmeval.scoring.item import Item
from sqlbench_lmeval.scoring.retry_envelope import RETRY_METRICS
from sqlbench_lmeval.scoring.sampling import PASS_AT_K
from sqlbench_lmeval.sql.complexity import COMPLEXITY
from sqlbench_lmeval.sql.structure import FEATURES

#: The task kinds a metric appears in: single-answer tasks, sampled tasks (``repeats: k``).
SINGLE = "single"
SAMPLED = "sampled"

#: Metric families; the report and the explorer pick their columns by family.
EXECUTION = "execution"
SAMPLING = "sampling"
RETRY = "retry"
STRUCTURE = "structure"
FEATURE = "feature"  # the similarity of one SQL feature to gold's (TPC-DS, ``sim_<feature>``)
EFFICIENCY = "efficiency"  # BIRD's R-VES reward of a correct answer (``scoring.efficiency``)
COMPLEXITY_COUNT = "complexity"  # a complexity count of the prediction
GOLD_COMPLEXITY_COUNT = "gold_complexity"  # the same count of gold

# Names the code reads by role (the producers write them, the report and the CLI read them).
VES = "ves"
EX = "ex"
EX_STRICT = "ex_strict"
EX_SET = "ex_set"
EX_READS_DATA = "ex_reads_data"
#: EX on the items whose gold is healthy (``pipeline.healthy_gold``); only those carry it.
EX_ON_HEALTHY_GOLD = "ex_on_healthy_gold"
#: Sampled runs: EX of the voted answer, VES and EX averaged over the samples, pass@k by k.
VOTED_EX = "ex_maj"
MEAN_VES = "ves_mean"
MEAN_EX = "ex_mean"
PASS_AT = {k: f"pass_at_{k}" for k in PASS_AT_K}
#: Retried runs: the feedback turns used (the last attempt's numbers: :func:`after_retries`).
RETRIES_USED = "retries_used"
#: TPC-DS structure: the prediction parsed; the mean feature similarity; its count-based twin.
PARSED = "parsed"
STRUCTURAL_SIMILARITY = "structural_similarity"
COUNT_SIMILARITY = "structural_count_similarity"


def samples_mean(name: str) -> str:
    """The name of a voted metric's mean over the samples (``Metric.voted``)."""
    return f"{name}_mean"


#: What each family is, as the task YAML's comments say it.
FAMILIES = {
    EXECUTION: "Execution, per answer: VES, EX and its variants.",
    EFFICIENCY: (
        "Efficiency of a correct answer against gold: BIRD's R-VES buckets on the engine's "
        "deterministic work (not BIRD's time; not LogicCat's VES, valid execution syntax)."
    ),
    SAMPLING: "Sampled answers: EX of the voted answer, pass@k, means over the samples.",
    RETRY: (
        "Retry with error feedback (model sqlbench-repair): the last attempt's numbers and the "
        "feedback turns used; absent from runs of any other model."
    ),
    STRUCTURE: "Structural similarity to gold (the TPC-DS paper's Table 2).",
    FEATURE: "Similarity to gold per SQL feature.",
    COMPLEXITY_COUNT: "Complexity counts of the prediction (the paper's Table 1): not scores.",
    GOLD_COMPLEXITY_COUNT: "The same counts of gold: not scores.",
}


@dataclass(frozen=True)
class Executed:
    """What a per-answer metric reads: one answer that ran (or failed to) and was compared.

    ``sql`` is the SQL that ran (in the engine's dialect; None when none did), ``predicted``
    and ``gold`` its and gold's outcomes (``rows``, ``status``, ``error``), ``ordered``
    whether gold's row order counts, ``verdict`` the comparison of the two,
    ``reads_no_table`` whether the answer does not read the data where gold does (it names no
    table, or its result is not gold's on a perturbed copy of the database where gold's
    changed: ``data_dependence``), ``values`` the
    metrics computed before this one. ``verdict`` is tie-aware: its ``ex`` accepts every right
    answer of gold's ties (reason ``tie_equivalent``); ``ex_strict`` and ``ex_set`` are
    literal. ``ties`` is gold's tie record (``gold_ties.GoldTies``: status, how many answers
    are right, the answers; None when gold could not be judged), a per-item gold artefact.
    """

    item: Item
    sql: str | None
    predicted: Outcome
    gold: Outcome
    ordered: bool
    verdict: Verdict
    reads_no_table: bool
    values: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    ties: GoldTies | None = None


@dataclass(frozen=True)
class Metric:
    """One number of a score dict (docs/adding-a-metric.md)."""

    name: str
    label: str  # column title in the report and the explorer
    description: str
    defined_on: str  # which items carry it
    family: str
    #: lm-eval's direction of the number (its table's arrow); None for a number that is no
    #: score at all (a complexity count, gold's own count): lm-eval 0.4.13 takes ``null`` and
    #: shows no arrow.
    higher_is_better: bool | None = True
    aggregation: str = "mean"  # lm-eval's aggregation of the per-item values
    benchmarks: tuple[str, ...] | None = None  # whose tasks report it; None: every benchmark
    kinds: frozenset[str] = frozenset({SINGLE, SAMPLED})
    compute: Callable[[Executed], float] | None = None
    made_by: str = "scoring.stages.measure"
    in_group: bool = False  # averaged over a benchmark's lm-eval group (weighted by size)
    in_summary: bool = False  # printed by ``sqlbench-lmeval score``
    in_scores_table: bool = False  # a column of the report's Scores table (when items have it)
    voted: bool = False  # sampled scoring reports the voted answer's value and ``<name>_mean``
    after_retries_of: str | None = None  # the last retry's value of this metric
    gold_of: str | None = None  # gold's value of this metric of the prediction
    #: Defined only on engines that count work (``Engine.work_unit``): left out of the scores
    #: of items on any other engine, so that no table shows a 0 that was never measured.
    needs_work: bool = False
    #: A row of lm-eval's table (the task YAML ``metric_list``, ``process_results``). False for
    #: a number the score dicts log and ``score`` averages but that says nothing of the model
    #: (gold's own complexity counts, the same for every run): see :data:`NOT_IN_LM_EVAL_TABLE`.
    in_lm_eval_table: bool = True

    def used_by(self, benchmark: str, kind: str) -> bool:
        """Whether tasks of ``benchmark`` of this ``kind`` report the metric."""
        return kind in self.kinds and (self.benchmarks is None or benchmark in self.benchmarks)


# --- per-answer metrics from execution -------------------------------------------------------


def valid_execution(executed: Executed) -> int:
    """VES: 1 iff the prediction ran to completion."""
    return ves(executed.predicted)


def execution_accuracy(executed: Executed) -> int:
    """EX: the result equals gold's under our comparison rule (``compare``), or is another of
    gold's right answers under its ties (``gold_ties``)."""
    return int(executed.verdict.ex)


def strict_execution_accuracy(executed: Executed) -> int:
    """EX strict: identical ordered rows."""
    return int(executed.verdict.ex_strict)


def set_execution_accuracy(executed: Executed) -> int:
    """EX set: the same set of rows (BIRD's rule)."""
    return int(executed.verdict.ex_set)


def execution_accuracy_reading_data(executed: Executed) -> int:
    """EX with an answer that does not read the data (where gold does) counted wrong."""
    return 0 if executed.reads_no_table else executed.values[EX]


_TPCDS = ("tpcds",)

#: BIRD's R-VES on deterministic work (every run), and on time (``score --r-ves-time`` only).
R_VES = "r_ves"
R_VES_TIME = "r_ves_time"
#: Per-item numbers logged beside the metrics and never averaged (``aggregate`` and lm-eval's
#: ``process_results`` leave them out): the work the engine counted for the prediction and
#: for gold (``Outcome.work``; None when the engine counts none or the query did not finish).
WORK = "work"
GOLD_WORK = "gold_work"
#: ... and what a metered answer cost (tokens, latency: ``scoring.cost``), which a run sums.
LOGGED_NUMBERS = frozenset({WORK, GOLD_WORK}) | COST_NUMBERS
#: Per-item fields of tie-aware EX, logged and never averaged (``gold_ties``): gold's tie
#: status, and how many distinct answers are right (a decimal string: it reaches 1e140, past
#: what a JSON reader's float or a JavaScript number holds exactly).
TIE_STATUS = "tie_status"
ACCEPTABLE = "acceptable"


def efficiency_on_work(executed: Executed) -> float:
    """r_ves: sqrt of BIRD's R-VES reward on gold work / prediction work, 0 unless ``ex``;
    0 too, like ``ex_reads_data``, for an answer that does not read the data where gold does
    (a constant does no work, so it would beat gold)."""
    if executed.reads_no_table:
        return 0.0
    return r_ves(executed.gold.work, executed.predicted.work, bool(executed.values[EX]))


def _efficiency() -> list[Metric]:
    return [
        Metric(
            R_VES,
            "R-VES (work)",
            "efficiency of a correct answer: the square root of BIRD's R-VES reward (1.25, 1, "
            "0.75, 0.5, 0.25) on the ratio gold work / prediction work, work being a count the "
            "engine reports identically on every machine; 0 when EX is 0; not defined on an "
            "engine that counts no work (PostgreSQL); 0 for an answer flagged as not reading the "
            "data where gold does (as for ex_reads_data); gold as the answer scores 1",
            "every item on an engine that counts work (0 when the answer is not correct); "
            "absent from items on an engine that counts none (PostgreSQL)",
            EFFICIENCY,
            compute=efficiency_on_work,
            needs_work=True,
            in_group=True,
            in_summary=True,
            in_scores_table=True,
        ),
        Metric(
            R_VES_TIME,
            "R-VES (time)",
            "BIRD's R-VES procedure on time (repeated timed runs of the answer and gold, ratios "
            "beyond 3 standard deviations dropped): not reproducible across machines; only "
            "when asked for (`sqlbench-lmeval score --r-ves-time N`)",
            "every item of a `score --r-ves-time` run (0 when the answer is not correct)",
            EFFICIENCY,
            benchmarks=(),  # no task reports it: the lm-eval filter never times
            kinds=frozenset({SINGLE}),
            made_by="scoring.efficiency.timed_r_ves",
            in_summary=True,
        ),
    ]


def _execution() -> list[Metric]:
    every = "every item (0 when the answer was refused, failed or missing)"
    return [
        Metric(
            VES,
            "VES",
            "valid execution syntax: the prediction ran without error, in the time limit and "
            "under the row cap",
            every,
            EXECUTION,
            compute=valid_execution,
            in_group=True,
            in_summary=True,
            in_scores_table=True,
        ),
        Metric(
            EX,
            "EX",
            "same result as gold: rows as a multiset, in order when gold's outermost ORDER BY "
            "defines one, numbers with a small tolerance; any tie resolution gold's ORDER BY "
            "and LIMIT allow counts (tie-aware)",
            every,
            EXECUTION,
            compute=execution_accuracy,
            in_group=True,
            in_summary=True,
            in_scores_table=True,
        ),
        Metric(
            EX_STRICT,
            "EX strict",
            "identical ordered rows",
            every,
            EXECUTION,
            compute=strict_execution_accuracy,
            in_group=True,
            in_summary=True,
            in_scores_table=True,
        ),
        Metric(
            EX_SET,
            "EX set",
            "the same set of rows (BIRD's rule)",
            every,
            EXECUTION,
            compute=set_execution_accuracy,
            in_group=True,
            in_summary=True,
            in_scores_table=True,
        ),
    ]


def _execution_guards() -> list[Metric]:
    """EX with the answers that cannot count for a model taken out: those that do not read the
    data, and the items whose gold says nothing."""
    every = "every item (0 when the answer was refused, failed or missing)"
    return [
        Metric(
            EX_READS_DATA,
            "EX reads data",
            "EX with answers that do not read the data counted wrong, unless gold reads none "
            "either: answers that name no table (constants), and answers that matched gold but "
            "whose result is not gold's on a perturbed copy of the database where gold's "
            "changes (SQLite and DuckDB; the name test only on MySQL and PostgreSQL)",
            every,
            EXECUTION,
            compute=execution_accuracy_reading_data,
            in_group=True,
        ),
        Metric(
            EX_ON_HEALTHY_GOLD,
            "EX (healthy gold)",
            "EX on the items whose gold returned a non-empty result with a non-NULL value and "
            "can be repeated (no RAND()): an empty answer cannot score there, whatever share "
            "of the task's gold is empty",
            "the items with healthy gold only (absent from the others, so a mean over a run "
            "is over those items)",
            EXECUTION,
            kinds=frozenset({SINGLE}),
            made_by="scoring.answer.healthy_gold",  # the EX of the items it says
            in_summary=True,
            in_scores_table=True,
        ),
    ]


def _sampling() -> list[Metric]:
    sampled = "every item of a sampled run"
    made_by = "scoring.sampled"
    return [
        Metric(
            VOTED_EX,
            "EX (vote)",
            "EX of the answer chosen by execution-result voting (0 when no sample ran)",
            sampled,
            SAMPLING,
            kinds=frozenset({SAMPLED}),
            made_by=made_by,
            in_summary=True,
        ),
        *(
            Metric(
                name,
                f"pass@{k}",
                f"unbiased pass@{k} (Chen et al. 2021) over the samples",
                f"every item of a run with at least {k} samples per item",
                SAMPLING,
                kinds=frozenset({SAMPLED}),
                made_by=made_by,
                in_summary=k == 1,
            )
            for k, name in PASS_AT.items()
        ),
        Metric(
            MEAN_VES,
            "VES (mean)",
            "VES averaged over the samples",
            sampled,
            SAMPLING,
            kinds=frozenset({SAMPLED}),
            made_by=made_by,
        ),
        Metric(
            MEAN_EX,
            "EX (mean)",
            "EX averaged over the samples",
            sampled,
            SAMPLING,
            kinds=frozenset({SAMPLED}),
            made_by=made_by,
        ),
    ]


def _retry(execution: list[Metric]) -> list[Metric]:
    """The retry envelope's numbers (``retry_envelope.RETRY_METRICS`` names the last attempt's
    value of each execution metric it reports; that module stays free of heavy imports, as the
    repair model loads it)."""
    retried = "every item of a run of the sqlbench-repair model (absent from other runs)"
    made_by = "scoring.retry_envelope"
    single = frozenset({SINGLE})
    by_name = {m.name: m for m in execution}
    return [
        *(
            Metric(
                retry_name,
                f"{by_name[name].label} after retries",
                f"{by_name[name].label} of the last attempt, after up to `retries` "
                "error-feedback turns",
                retried,
                RETRY,
                kinds=single,
                made_by=made_by,
                in_summary=True,
                after_retries_of=name,
            )
            for name, retry_name in RETRY_METRICS.items()
        ),
        Metric(
            RETRIES_USED,
            "Retries used",
            "error-feedback turns the repair model used",
            retried,
            RETRY,
            higher_is_better=False,
            kinds=single,
            made_by=made_by,
        ),
    ]


def _structure() -> list[Metric]:
    made_by = "tpcds.benchmark.item_metrics"
    on = "every TPC-DS item (0 when the prediction does not parse)"
    single = frozenset({SINGLE})
    similarity = Metric(
        STRUCTURAL_SIMILARITY,
        "Struct. sim.",
        "the mean of the seven feature similarities (the TPC-DS paper's Table 2 average)",
        on,
        STRUCTURE,
        benchmarks=_TPCDS,
        made_by=made_by,
        in_summary=True,  # TPC-DS's primary metric
        in_scores_table=True,
        voted=True,
    )
    return [
        Metric(
            PARSED,
            "Parsed",
            "1 when the prediction parsed as one statement",
            "every TPC-DS item",
            STRUCTURE,
            benchmarks=_TPCDS,
            kinds=single,
            made_by=made_by,
        ),
        similarity,
        *_voted_means([similarity]),
        Metric(
            COUNT_SIMILARITY,
            "Count sim.",
            "the mean over the features of min/max of the feature bags' sizes",
            on,
            STRUCTURE,
            benchmarks=_TPCDS,
            kinds=single,
            made_by=made_by,
        ),
        *(
            Metric(
                f"sim_{feature}",
                feature.replace("_", " ").capitalize(),
                f"Jaccard similarity of the prediction's {feature.replace('_', ' ')} to gold's",
                on,
                FEATURE,
                benchmarks=_TPCDS,
                kinds=single,
                made_by=made_by,
            )
            for feature in FEATURES
        ),
        *_complexity_counts(on),
    ]


def _complexity_counts(on: str) -> list[Metric]:
    """The six complexity counts of the prediction and of gold (the paper's Table 1)."""
    made_by = "tpcds.benchmark.item_metrics"
    single = frozenset({SINGLE})
    return [
        *(
            Metric(
                count,
                _count_label(count),
                f"the prediction's {count.replace('_', ' ')} (the TPC-DS paper's Table 1): not "
                "a score",
                on,
                COMPLEXITY_COUNT,
                higher_is_better=None,
                benchmarks=_TPCDS,
                kinds=single,
                made_by=made_by,
            )
            for count in COMPLEXITY
        ),
        *(
            Metric(
                f"gold_{count}",
                f"Gold {_count_label(count, first_word=False)}",
                f"gold's {count.replace('_', ' ')}: not a score",
                "every TPC-DS item",
                GOLD_COMPLEXITY_COUNT,
                higher_is_better=None,
                benchmarks=_TPCDS,
                kinds=single,
                made_by=made_by,
                gold_of=count,
                in_lm_eval_table=False,
            )
            for count in COMPLEXITY
        ),
    ]


def _count_label(count: str, first_word: bool = True) -> str:
    """``cte_count`` -> ``CTE count``, ``join_count`` -> ``Join count`` (``join count`` when
    not the first word)."""
    words = ["CTE" if word == "cte" else word for word in count.split("_")]
    if first_word:
        words[0] = words[0][0].upper() + words[0][1:]
    return " ".join(words)


def _voted_means(voted: Iterable[Metric]) -> list[Metric]:
    """``<name>_mean`` of each voted metric: its mean over the samples (sampled runs)."""
    return [
        Metric(
            samples_mean(metric.name),
            f"{metric.label} (mean)",
            f"{metric.name} averaged over the samples",
            metric.defined_on,
            metric.family,
            higher_is_better=metric.higher_is_better,
            benchmarks=metric.benchmarks,
            kinds=frozenset({SAMPLED}),
            made_by="scoring.sampled",
        )
        for metric in voted
    ]


#: Every metric, in the order of the task YAML ``metric_list``s and of the score dicts.
METRICS: tuple[Metric, ...] = (
    *_execution(),
    *_execution_guards(),
    *_efficiency(),
    *_sampling(),
    *_retry(_execution() + _execution_guards()),
    *_structure(),
)

_BY_NAME: dict[str, Metric] = {metric.name: metric for metric in METRICS}


def after_retries(name: str) -> str:
    """The name of metric ``name``'s value after retries (``ves`` -> ``ves@retry``)."""
    (retried,) = (m.name for m in METRICS if m.after_retries_of == name)
    return retried


def labels() -> dict[str, str]:
    """Every metric's label by name."""
    return {m.name: m.label for m in METRICS}


def metric(name: str) -> Metric:
    """The metric ``name``; a KeyError naming it when it is not registered."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"metric {name!r} is not registered in scoring.metrics") from None


def is_metric(name: str) -> bool:
    return name in _BY_NAME


def names(*, family: str | None = None, **flags: bool) -> tuple[str, ...]:
    """Names of the metrics of ``family`` (any when None) whose boolean fields equal
    ``flags`` (e.g. ``in_summary=True``), in registry order."""
    return tuple(
        m.name
        for m in METRICS
        if (family is None or m.family == family)
        and all(getattr(m, flag) == value for flag, value in flags.items())
    )


#: The per-answer metrics computed from execution, in the order scoring computes them.
COMPUTED: tuple[Metric, ...] = tuple(m for m in METRICS if m.compute is not None)
#: Their names: every score dict has each (0 for an answer that was not compared).
EXECUTION_METRICS: tuple[str, ...] = tuple(m.name for m in COMPUTED)


def engine_counts_work(engine: str | None) -> bool | None:
    """Whether ``engine`` counts work (``Engine.work_unit``); None when that is not known here
    (no engine named, an unknown name, or its driver is not installed in this environment)."""
    if not engine:
        return None
    try:
        return engines.get(engine).work_unit is not None
    except (ImportError, ValueError):
        return None


def carried_on(entry: Metric, engine: str | None) -> bool:
    """Whether items scored on ``engine`` carry metric ``entry`` (an engine not known here is
    taken to count work, as every engine but PostgreSQL does)."""
    return not entry.needs_work or engine_counts_work(engine) is not False


def not_defined(name: str, engine: str | None) -> str | None:
    """Why items on ``engine`` do not carry metric ``name`` (``"not defined on postgres: it
    counts no work"``); None when they do, or when it is not known here."""
    if carried_on(metric(name), engine):
        return None
    return f"not defined on {engine}: it counts no work"


@cache
def execution_metrics(engine: str | None) -> tuple[str, ...]:
    """The names of :data:`EXECUTION_METRICS` that items scored on ``engine`` carry (every
    item has each of them: 0 for an answer that was not compared)."""
    return tuple(m.name for m in COMPUTED if carried_on(m, engine))


def compute_metrics(executed: Executed) -> dict[str, float]:
    """The values of :data:`COMPUTED` for one compared answer, in registry order (each metric
    sees the values of those before it in ``executed.values``); a metric not defined on the
    item's engine (:func:`carried_on`) is left out."""
    values: dict[str, float] = {}
    seen = replace(executed, values=values)
    defined = execution_metrics(executed.item.database.engine)
    for entry in COMPUTED:
        if entry.name in defined:
            values[entry.name] = entry.compute(seen)
    return values


#: The numbers of a score dict that are no row of lm-eval's table (``process_results`` leaves
#: them out, no task YAML lists them): the logged work counts and the metrics with
#: ``in_lm_eval_table`` False. The score dicts (lm-eval's samples log) and ``score`` keep them.
NOT_IN_LM_EVAL_TABLE: frozenset[str] = LOGGED_NUMBERS | frozenset(names(in_lm_eval_table=False))


def task_metrics(benchmark: str, kind: str) -> tuple[Metric, ...]:
    """The metrics a task of ``benchmark`` and ``kind`` reports in lm-eval's table (its YAML
    ``metric_list``)."""
    return tuple(m for m in METRICS if m.used_by(benchmark, kind) and m.in_lm_eval_table)


def group_metrics(benchmark: str) -> tuple[Metric, ...]:
    """The metrics ``benchmark``'s lm-eval group averages over its tasks, weighted by size
    (its ``aggregate_metric_list``)."""
    return tuple(m for m in METRICS if m.in_group and m.used_by(benchmark, SINGLE))


__all__ = [
    "COUNT_SIMILARITY",
    "EX",
    "EX_ON_HEALTHY_GOLD",
    "EX_READS_DATA",
    "EX_SET",
    "EX_STRICT",
    "MEAN_EX",
    "MEAN_VES",
    "PARSED",
    "PASS_AT",
    "RETRIES_USED",
    "STRUCTURAL_SIMILARITY",
    "VES",
    "VOTED_EX",
    "after_retries",
    "samples_mean",
    "labels",
    "COMPUTED",
    "EXECUTION_METRICS",
    "METRICS",
    "SAMPLED",
    "SINGLE",
    "Executed",
    "Metric",
    "compute_metrics",
    "carried_on",
    "engine_counts_work",
    "execution_metrics",
    "not_defined",
    "FAMILIES",
    "group_metrics",
    "is_metric",
    "metric",
    "task_metrics",
    "names",
    "EFFICIENCY",
    "GOLD_WORK",
    "LOGGED_NUMBERS",
    "NOT_IN_LM_EVAL_TABLE",
    "R_VES",
    "R_VES_TIME",
    "WORK",
    "TIE_STATUS",
    "ACCEPTABLE",
]
