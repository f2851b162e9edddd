"""Provenance: the task version, package, ``dataset_version``, ``comparison_version`` and
engine the run recorded against ours; each logged document's question and gold; each item's
prompt against the prompt the task builds now (sha256 of both; a chat template the run records
may put its own markers around ours, the same for every item and whatever the prompt says,
nothing else, in any turn)."""

from __future__ import annotations

from sqlbench_lmeval import __version__
from sqlbench_lmeval.lmeval.task_specs import TaskSpec
from sqlbench_lmeval.scoring.compare import COMPARISON_VERSION
from sqlbench_lmeval.submission.checks.base import (
    FINDING,
    INFO,
    REJECT,
    UNATTESTED_SEVERITY,
    CheckedTask,
    sha256,
)
from sqlbench_lmeval.submission.checks.chat_wrap import chat_run, prompt_states
from sqlbench_lmeval.submission.logged import LoggedTask

#: Whether the check reads the task's scores (it runs after the scoring).
NEEDS_SCORES = False


def check(task: CheckedTask) -> None:
    """Versions into ``task.facts``, prompt states into ``task.prompts``, and findings."""
    chat = chat_run(task.submission.settings)
    template = task.submission.settings.get("chat_template")
    task.prompts = _provenance(
        task.spec,
        task.logged,
        task.docs,
        task.answers,
        task.add,
        task.facts,
        chat,
        template or None,
    )


def _provenance(
    spec: TaskSpec,
    logged: LoggedTask,
    docs,
    answers,
    add,
    facts,
    chat: str | None,
    template: str | None,
) -> dict[int, dict]:
    """Versions as recorded against ours (into ``facts``), and each item's prompt against the
    one we build (per item: both hashes and ``same``/``wrapped``/``added_text``/``edited``/
    ``not_logged``; ``chat``: the chat template or chat model the run records, None: none;
    ``template``: the recorded template's text, when the run holds it)."""
    if logged.version is not None and spec.version is not None:
        if _as_version(logged.version) != _as_version(spec.version):
            add(
                "provenance",
                "task_version",
                REJECT,
                f"task version {logged.version}, ours is {spec.version}",
            )
    run_docs = [answer.doc for answer in answers.values() if answer.doc]
    ours = {doc["id"]: doc for doc in docs}
    for key, code in (("dataset_version", "dataset_version"), ("engine", "engine")):
        theirs = sorted({str(doc[key]) for doc in run_docs if doc.get(key)})
        mine = sorted({str(doc[key]) for doc in docs if doc.get(key)})
        if theirs and theirs != mine:
            add(
                "provenance",
                code,
                FINDING,
                f"{key} {', '.join(theirs)} in the run, {', '.join(mine)} here: the items the "
                "run answered are not the ones scored here",
            )
    # A run of one split of the data (logiccat_dev, logiccat_test) is never taken for another's.
    their_splits = sorted({str(doc.get("split")) for doc in run_docs})
    my_splits = sorted({str(doc.get("split")) for doc in docs})
    if run_docs and their_splits != my_splits:
        add(
            "provenance",
            "split",
            REJECT,
            f"the run's documents are of split {', '.join(their_splits)}, {spec.name}'s of "
            f"{', '.join(my_splits)}: a run of one split is not a run of another",
        )
    if my_splits != ["None"]:
        facts["split"] = ", ".join(my_splits)
    packages = sorted(
        {
            str(doc["sqlbench_lmeval_version"])
            for doc in run_docs
            if doc.get("sqlbench_lmeval_version")
        }
    )
    if packages and packages != [__version__]:
        add(
            "provenance",
            "package_version",
            INFO,
            f"run made with sqlbench-lmeval {', '.join(packages)}, verified with {__version__}",
        )
    versions = sorted(
        {
            str(version)
            for answer in answers.values()
            if (version := answer.claimed_fields(("comparison_version",)).get("comparison_version"))
        }
    )
    facts.update(
        {
            "task_version": f"{logged.version} (ours {spec.version})",
            "engine": ", ".join(sorted({str(d["engine"]) for d in docs if d.get("engine")})),
            "dataset_version (run)": ", ".join(
                sorted({str(d["dataset_version"]) for d in run_docs if d.get("dataset_version")})
            )
            or None,
            "sqlbench_lmeval_version (run)": ", ".join(packages) or None,
            "comparison_version (run)": ", ".join(versions) or None,
        }
    )
    if versions and versions != [COMPARISON_VERSION]:
        add(
            "provenance",
            "comparison_version",
            FINDING,
            f"the run was judged under comparison version {', '.join(versions)}; this "
            f"scorer's is {COMPARISON_VERSION}",
        )
    build = spec.prompt_function()
    prompts: dict[int, dict] = {}
    by_state: dict[str, list[int]] = {}
    edited_docs = []
    built = {item_id: build(ours[item_id]) for item_id in answers}
    states = prompt_states(
        {item_id: (answer.prompt, built[item_id]) for item_id, answer in answers.items()},
        chat,
        template,
    )
    for item_id, answer in answers.items():
        prompt, state = built[item_id], states[item_id]
        prompts[item_id] = {
            "prompt_sha256": sha256(prompt),
            "logged_prompt_sha256": None if answer.prompt is None else sha256(answer.prompt),
            "prompt": state,
        }
        by_state.setdefault(state, []).append(item_id)
        if any(
            key in answer.doc and answer.doc[key] != ours[item_id].get(key) for key in _ASKED_FIELDS
        ):
            edited_docs.append(item_id)
    if by_state.get("not_logged") and logged.samples is not None:
        add(
            "provenance",
            "prompt_not_logged",
            UNATTESTED_SEVERITY,
            f"{len(by_state['not_logged'])} line(s) of the samples log hold no prompt: nothing "
            "records what the model was asked there",
            by_state["not_logged"],
        )
    if by_state.get("edited"):
        add(
            "provenance",
            "edited_prompt",
            REJECT,
            f"{len(by_state['edited'])} logged prompt(s) differ from the prompt the task builds "
            "(an edited question, schema or instruction)",
            by_state["edited"],
        )
    if by_state.get("added_text"):
        how = (
            f"the run's chat template ({chat})"
            if chat
            else "a chat template (the run records none)"
        )
        add(
            "provenance",
            "added_prompt_text",
            REJECT,
            f"{len(by_state['added_text'])} logged prompt(s) hold the task's prompt with text "
            f"around it that {how} does not add alike to every prompt (a hint, an example, a "
            "system turn, text a template writes for some questions only): the model was not "
            "asked the benchmark's question alone",
            by_state["added_text"],
        )
    if edited_docs:
        add(
            "provenance",
            "edited_documents",
            FINDING,
            f"{len(edited_docs)} logged document(s) hold another question or gold than the "
            "task's (the log was edited, or made from other data)",
            edited_docs,
        )
    return prompts


#: Fields of a logged document that make the question asked; another value is another item.
_ASKED_FIELDS = ("question", "gold_sql")


def _as_version(value) -> str:
    try:
        return repr(float(value))
    except (TypeError, ValueError):
        return str(value)
