"""What differs between the lm-eval versions we support (docs/install.md#lm-eval-versions), in the
two ways that touch our tasks: how a version hands a task's filtered responses to
``process_results``, and whether it looks the names of a ``metric_list`` up in a registry.

lm-eval 0.4.13 passes ``process_results`` one value per request, as the filter returned it;
0.5 flattens each document's filtered responses with ``itertools.chain.from_iterable`` first (its
filters return a sequence of responses per document), so a score dict returned as it is would
arrive as its keys. :func:`filter_output` gives each version the shape that reaches
``process_results`` as ``[score]`` on both, and :func:`passed_results` says what a version made
of a logged ``filtered_resps``, for ``verify`` to tell a version's way of passing results from an
edit.

>>> score = {"id": 1, "status": "ok", "ex": 1}
>>> filter_output(score, "0.4.13"), filter_output(score, "0.5.0.dev2")
({'id': 1, 'status': 'ok', 'ex': 1}, [{'id': 1, 'status': 'ok', 'ex': 1}])
>>> passed_results([score], "0.5.0.dev2")  # a 0.4.13-shaped output on 0.5: the dict's keys
['id', 'status', 'ex']
>>> passed_results([[score]], "0.5.0.dev2") == passed_results([score], "0.4.13") == [score]
True
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterable, Mapping
from importlib import metadata

from packaging.version import InvalidVersion, Version

#: The first lm-eval version that flattens a document's filtered responses before
#: ``process_results`` and looks ``metric_list`` names up in its metric registry (next0.5's
#: first preview is 0.5.0.dev0).
FLATTENING_SINCE = Version("0.5.0.dev0")
#: How lm-eval's own distribution is named (importlib.metadata finds either spelling).
DISTRIBUTION = "lm_eval"
#: The lm-eval versions CI runs our tasks on and compares (``.ci/lm-eval-versions``): they give
#: the same numbers, and pyproject.toml's requirement admits no version beyond them.
TESTED = ("0.4.13", "0.5.0.dev2")


@functools.cache
def installed() -> str | None:
    """The installed lm-eval's version (None: lm-eval is not installed)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


def flattens_results(version: str | None) -> bool:
    """Whether lm-eval ``version`` flattens each document's filtered responses (a list per
    request) into the ``results`` it passes ``process_results``; False for a version that is
    not known or not a version."""
    try:
        return version is not None and Version(version) >= FLATTENING_SINCE
    except InvalidVersion:
        return False


def filter_output(score, version: str | None = None):
    """``score`` as our filter returns it for one document on lm-eval ``version`` (default: the
    installed one), so that ``process_results`` receives ``[score]``."""
    return [score] if flattens_results(installed() if version is None else version) else score


def passed_results(logged: Iterable, version: str | None) -> list:
    """The ``results`` lm-eval ``version`` passed ``process_results`` for a document whose
    requests' filtered responses were ``logged`` (one value per request, as the samples log's
    ``filtered_resps`` holds them once parsed)."""
    values = list(logged)
    if not flattens_results(version):
        return values
    return [element for value in values for element in value]


def register_metrics(directions: Mapping[str, bool | None]) -> None:
    """Make our metrics (name -> higher_is_better) known to an lm-eval that looks the names of
    a ``metric_list`` up in a registry (0.5: else it warns "not found in registry" and uses a
    placeholder). Their values come from ``process_results``, so the registered function only
    says so if called. Nothing happens on 0.4.13, whose tasks with ``process_results`` consult
    no registry, and a name lm-eval already has is left as it is."""
    if not flattens_results(installed()):
        return
    from lm_eval.api import registry  # heavy: lm-eval's registry, only where names are looked up

    # The registry imports lm-eval's own metrics only while it is empty: load them first, or
    # ours would be the only ones it ever has.
    importlib.import_module("lm_eval.api.metrics")
    for name, higher_is_better in directions.items():
        if name not in registry.metric_registry:
            registry.register_metric(
                name,
                higher_is_better=higher_is_better,
                aggregation="mean",
                output_type="generate_until",
            )(_made_by_process_results)


def _made_by_process_results(*_args, **_kwargs):
    raise RuntimeError(
        "sqlbench-lmeval's metrics are computed by its filter and returned by process_results; "
        "lm-eval called the metric function instead (a task without our process_results?)"
    )
