"""Provenance across runs: the verifications of runs given together to ``verify`` or
``leaderboard`` compared item by item; a task whose raw outputs equal another run's
(``identical_outputs``), or that shares a large share of its answers with another run
(``shared_outputs``, naming both; answers compared normalised, ``integrity.output_key``, so a
byte added to a copied answer does not hide it). A step after ``verify`` (it reads its
:class:`~sqlbench_lmeval.submission.verify.Verification`), not one of its per-task checks."""

from __future__ import annotations

from collections.abc import Sequence

from sqlbench_lmeval.submission.checks.base import FINDING, Finding
from sqlbench_lmeval.submission.verify import Verification
from sqlbench_lmeval.vocabulary import VerdictClass

#: Share of a run's answered items whose output is another run's (given in the same verify or
#: leaderboard call; compared by ``integrity.output_key``) from which that is a finding naming both
#: runs, and the leaderboard lists the run apart. Two models that write SQL independently
#: rarely agree token for token on a quarter of the items.
SHARED_OUTPUTS_SHARE = 0.25


def cross_run_findings(verifications: Sequence[Verification]) -> list[Verification]:
    """``verifications`` with a finding on each task whose raw outputs equal another run's
    (``identical_outputs``), or share at least :data:`SHARED_OUTPUTS_SHARE` of its answers
    with another run's, item by item (``shared_outputs``, naming both). Runs are told apart by
    position, so two runs of one name are compared too."""
    labels = [_label(v, verifications) for v in verifications]
    by_print: dict[tuple[str, str], list[int]] = {}
    for index, verification in enumerate(verifications):
        for task in verification.tasks:
            if task.items and any(item["verdict"] != VerdictClass.MISSING for item in task.items):
                by_print.setdefault((task.task, task.outputs_sha256), []).append(index)
    outputs = {
        (index, task.task): {
            item["id"]: item["output_key"] for item in task.items if item.get("output_key")
        }
        for index, verification in enumerate(verifications)
        for task in verification.tasks
    }
    updated = []
    for index, verification in enumerate(verifications):
        extra = []
        for task in verification.tasks:
            twins = [
                other
                for other in by_print.get((task.task, task.outputs_sha256), [])
                if other != index
            ]
            if twins:
                extra.append(
                    Finding(
                        "integrity",
                        "identical_outputs",
                        FINDING,
                        f"raw outputs identical, item by item, to run(s) "
                        f"{', '.join(labels[i] for i in twins)}: the same model run twice, or a "
                        "copy",
                        task=task.task,
                    )
                )
            mine = outputs[(index, task.task)]
            for other in range(len(verifications)):
                theirs = outputs.get((other, task.task))
                if other == index or theirs is None or other in twins or not mine:
                    continue
                shared = sorted(i for i, sha in mine.items() if theirs.get(i) == sha)
                if len(shared) >= SHARED_OUTPUTS_SHARE * len(mine):
                    extra.append(
                        Finding(
                            "integrity",
                            "shared_outputs",
                            FINDING,
                            f"run {labels[index]} shares {len(shared)} of its {len(mine)} "
                            f"answers ({len(shared) / len(mine):.0%}) with run "
                            f"{labels[other]}: outputs copied from it, the same model, or a run "
                            "assembled from several",
                            tuple(shared),
                            task.task,
                        )
                    )
        updated.append(verification.with_findings(extra) if extra else verification)
    return updated


def _label(verification: Verification, verifications: Sequence[Verification]) -> str:
    """A run's name, with its source when another run given with it has the same name."""
    same = sum(1 for other in verifications if other.run == verification.run)
    return verification.run if same == 1 else f"{verification.run} ({verification.source})"
