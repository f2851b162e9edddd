"""Cost: what a metered run (``--model sqlbench-metered``) says its answers cost, counted again
where it can be. Token counts a named tokenizer made are counted again from the logged prompt
and answer with that tokenizer (loaded from local files only); a count that differs is a
finding. What cannot be re-derived is said, never passed as checked: latency (one run's wall
clock), the server's ``usage`` (what the server says), counts of a tokenizer that does not load
here, and the attempts of a retried answer (their later prompts are not logged). The rule:
docs/cost.md#what-verify-checks."""

from __future__ import annotations

from collections.abc import Callable

from sqlbench_lmeval.scoring.cost import (
    COMPLETION_TOKENS,
    LATENCY_S,
    PROMPT_TOKENS,
    TOKENIZER,
    TOKENS_FROM,
    USAGE,
    Cost,
    unwrap,
)
from sqlbench_lmeval.scoring.scored import ScoredItem
from sqlbench_lmeval.submission.checks.base import FINDING, INFO, CheckedTask
from sqlbench_lmeval.submission.checks.chat_wrap import chat_messages

#: Whether the check reads the task's scores: no, the logged answers only (it runs before).
NEEDS_SCORES = False

#: Codes of the findings: counts that differ (a finding), and the facts of what was counted
#: again and what cannot be (the leaderboard marks figures of the latter as unverifiable).
DIFFER, CHECKED, UNVERIFIABLE = "cost_tokens_differ", "cost_checked", "cost_unverifiable"


def check(task: CheckedTask) -> None:
    counted = count_again(task.answers, _counter_loader())
    if counted is None:
        return  # not a metered run: nothing is claimed
    differ = sorted({i for ids in counted.differ.values() for i in ids})
    if differ:
        names = ", ".join(sorted(counted.differ))
        task.add(
            "cost",
            DIFFER,
            FINDING,
            f"{len(differ)} answer(s) claim token counts that their tokenizer ({names}) does not "
            "give for the logged prompt and answer: the counts were changed after the run, or "
            "made by another tokenizer of that name",
            differ,
        )
    task.add("cost", CHECKED, INFO, counted.checked_message(), sorted(counted.agreed))
    task.add("cost", UNVERIFIABLE, INFO, counted.unverifiable_message(), sorted(counted.unchecked))


def cost_fields(score: ScoredItem) -> dict:
    """A metered item's cost, for its row in the verification (the leaderboard's columns):
    tokens, latency and where the counts came from; nothing for an item not metered."""
    cost = score.cost
    if cost is None:
        return {}
    return {
        PROMPT_TOKENS: cost.prompt_tokens,
        COMPLETION_TOKENS: cost.completion_tokens,
        LATENCY_S: cost.latency_s,
        TOKENS_FROM: cost.tokens_from,
    }


class Counted:
    """What :func:`count_again` found over a task's metered answers (item ids per kind)."""

    def __init__(self) -> None:
        self.metered: set[int] = set()
        self.checked: set[int] = set()  # every count a tokenizer made, counted again and equal
        self.differ: dict[str, set[int]] = {}  # tokenizer -> items whose counts differ
        self.usage: set[int] = set()  # counts from the server's usage
        self.not_loaded: dict[str, set[int]] = {}  # tokenizer that does not load -> items
        self.retried: set[int] = set()  # retried answers: their later prompts are not logged
        self.not_counted: set[int] = set()

    @property
    def unchecked(self) -> set[int]:
        """Items with a count nobody could check here (server usage, a tokenizer that does not
        load, a retried answer's attempts)."""
        return (
            self.usage | self.retried | {i for ids in self.not_loaded.values() for i in ids}
        ) - {i for ids in self.differ.values() for i in ids}

    @property
    def agreed(self) -> set[int]:
        """Items every count of which was made again, the same (each sample of a sampled one)."""
        return self.checked - self.unchecked - {i for ids in self.differ.values() for i in ids}

    def checked_message(self) -> str:
        checked = len(self.agreed)
        return (
            f"{len(self.metered)} metered answer(s): the token counts of {checked} counted again "
            "with their tokenizer from the logged prompt and answer"
            + (f", {len(self.not_counted)} with no counts (nothing counted them)"
               if self.not_counted else "")
        )  # fmt: skip

    def unverifiable_message(self) -> str:
        """What cannot be checked: always the latency, and every count nothing here can make."""
        parts = []
        if self.usage:
            parts.append(f"the token counts of {len(self.usage)} answer(s) are the server's usage")
        for name, ids in sorted(self.not_loaded.items()):
            parts.append(f"{len(ids)} counted by tokenizer {name}, which does not load here")
        if self.retried:
            parts.append(
                f"{len(self.retried)} retried answer(s), whose attempts' prompts are not logged"
            )
        parts.append("the latency of every answer (a wall-clock measurement of the run)")
        return "Unverifiable, nothing here can count them again: " + "; ".join(parts)


def count_again(answers, load: Callable[[str], object | None]) -> Counted | None:
    """Every metered answer of ``answers`` (item id -> ``LoggedAnswer``) with its token counts
    made again where a tokenizer made them; ``load(name)`` gives a ``TokenCounter`` or None.
    None when no answer was metered."""
    counted = Counted()
    for item_id, answer in answers.items():
        for output in answer.outputs:  # a sampled answer: every sample
            text, cost = unwrap(output)
            if cost is None:
                continue
            counted.metered.add(item_id)
            if cost.prompt_tokens is None or cost.completion_tokens is None:
                counted.not_counted.add(item_id)
            elif text is output:  # a retried answer (its attempts carry the costs)
                counted.retried.add(item_id)
            elif cost.tokens_from == USAGE:
                counted.usage.add(item_id)
            elif cost.tokens_from == TOKENIZER and cost.tokenizer:
                _recount(counted, item_id, answer.prompt, text, cost, load)
            else:
                counted.not_loaded.setdefault(str(cost.tokenizer or cost.tokens_from), set()).add(
                    item_id
                )
    return counted if counted.metered else None


def _recount(counted: Counted, item_id: int, prompt, text: str, cost: Cost, load) -> None:
    counter = load(cost.tokenizer) if prompt is not None else None
    if counter is None:
        counted.not_loaded.setdefault(cost.tokenizer, set()).add(item_id)
        return
    chat = chat_messages(prompt) is not None  # a chat run logs its messages as JSON
    again = (counter.prompt_text(prompt, chat=chat), counter.completion(text))
    if again == (cost.prompt_tokens, cost.completion_tokens):
        counted.checked.add(item_id)
    else:
        counted.differ.setdefault(cost.tokenizer, set()).add(item_id)


def _counter_loader() -> Callable[[str], object | None]:
    """Loads each named tokenizer once, from local files only; None for one that does not load
    (not on this machine, transformers not installed)."""
    from sqlbench_lmeval.lmeval.metered import TokenCounter  # heavy: lm-eval, metered runs only

    loaded: dict[str, object | None] = {}

    def load(name: str):
        if name not in loaded:
            try:
                loaded[name] = TokenCounter.named(name, local_files_only=True)
            except Exception:  # noqa: BLE001 - any tokenizer that does not load is not checked
                loaded[name] = None
        return loaded[name]

    return load
