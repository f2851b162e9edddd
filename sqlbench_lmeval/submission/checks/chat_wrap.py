"""How a logged prompt stands against the prompt the task builds: the same, wrapped by the
chat template or chat model the run records (its markers only), ours with text added around it,
or edited. Used by the provenance and settings checks (the rule: docs/verify.md#chat-templates).
:func:`prompt_states` judges a task's items, each ``(logged, ours)``:

>>> ours = "Question: how many stores?"
>>> chatml = "<|im_start|>user\\n" + ours + "<|im_end|>\\n<|im_start|>assistant\\n"
>>> template = "{% for m in messages %}<|im_start|>{{ m.role }}..."
>>> prompt_states({1: (chatml, ours)}, chat="template sha256 0c1f", template=template)
{1: 'wrapped'}
>>> prompt_states({1: (chatml, ours)}, chat=None, template=None)  # no template recorded
{1: 'added_text'}
>>> prompt_states({1: ("Question: how many rows?", ours), 2: (None, ours)}, None, None)
{1: 'edited', 2: 'not_logged'}

A template's wrap is the text it writes around our prompt whatever the prompt says: the
recorded template is rendered (jinja2's sandbox, as ``transformers`` renders it) with our
prompt and with a stand-in, and the two wraps must agree; across a task's items the logged
wraps must be one and the same. A template that writes a hint only for some question is caught
by both:

>>> lookup = "<|im_start|>user\\n{{ messages[-1]['content'] }}{% if 'stores' in "
>>> lookup += "messages[-1]['content'] %} Reference solution: SELECT 12{% endif %}<|im_end|>"
>>> rendered = chatml.replace("<|im_end|>", " Reference solution: SELECT 12<|im_end|>", 1)
>>> prompt_states({1: (rendered, ours)}, chat="template sha256 0c1f", template=lookup)
{1: 'added_text'}
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache

from jinja2.sandbox import ImmutableSandboxedEnvironment

#: What chat templates put around a message: special tokens (``<|im_start|>``, ``<s>``,
#: ``<start_of_turn>``, ``[INST]``, ``<<SYS>>``) and the role names they introduce.
_TEMPLATE_MARKER = re.compile(
    r"<\|[^<>|\s]{1,40}\|>|</?[A-Za-z_][\w-]{0,30}>|\[/?INST\]|<</?SYS>>|<｜[^<>｜]{1,40}｜>"
)


_ROLE_WORDS = frozenset({"system", "user", "assistant", "model", "human", "gpt", "bot"})


#: A date a template writes when it renders (Llama 3.1's "Today Date: 26 Jul 2024"): the
#: template holds the text around it, never the date itself.
_RENDERED_DATE = re.compile(
    r"\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4}\b"
    r"|\b\d{4}-\d{2}-\d{2}\b"
)


def chat_run(settings: Mapping) -> str | None:
    """The chat template or chat model a run records (lm-eval's results file), as a short text;
    None when it records neither (a completions model without ``--apply_chat_template``).

    lm-eval writes ``chat_template`` null without ``--apply_chat_template``, the template's text
    (or name) with it, and ``""`` for an API chat model, which formats the messages itself."""
    template = settings.get("chat_template")
    model = str((settings.get("config") or {}).get("model") or settings.get("model_source") or "")
    if isinstance(template, str) and template:
        sha = settings.get("chat_template_sha")
        return f"template sha256 {str(sha)[:12]}" if sha else f"template {template[:40]!r}"
    if isinstance(template, str) or model.endswith("chat-completions"):
        return f"chat model {model or 'unnamed'}"
    return None


def _marker_state(logged: str | None, ours: str, chat: str | None, template: str | None) -> str:
    """One item's state before the template is rendered: ``same``, ``wrapped`` when the text
    around our prompt holds only the recorded template's markers, role names and text,
    ``added_text`` (our prompt, with other text around it), ``edited`` or ``not_logged``."""
    if logged is None:
        return "not_logged"
    if logged == ours:
        return "same"
    messages = chat_messages(logged)
    if messages is not None:
        # An API chat request: exactly one user turn holding our prompt, nothing else (a system
        # turn or an earlier exchange is text the benchmark does not give).
        contents = [m.get("content") for m in messages]
        if chat and len(messages) == 1 and messages[0].get("role") == "user":
            if contents[0] in (ours, ours.strip()):
                return "wrapped"
        return "added_text" if any(ours.strip() in str(c) for c in contents) else "edited"
    # A template adds markers around the text; lm-eval's chat formatting may strip its ends.
    core = ours if ours in logged else ours.strip()
    if not core or core not in logged:
        return "edited"
    before, _, after = logged.partition(core)
    # Only a template the run records renders a string: where lm-eval records "" (no tokenizer
    # here; the provider formats the messages) it logs the messages themselves, as above.
    if chat and template and _template_only(before, template) and _template_only(after, template):
        return "wrapped"
    return "added_text"


def prompt_states(
    prompts: Mapping[int, tuple[str | None, str]], chat: str | None, template: str | None
) -> dict[int, str]:
    """The state of each item's ``(logged, ours)``: ``same``, ``wrapped`` (inside the run's
    recorded chat template: its markers only, which it writes around any prompt alike),
    ``added_text`` (our prompt, with other text around it), ``edited`` or ``not_logged``.
    A template's wrap stands only as the one wrap of every item: the text a logged prompt
    holds around ours (dates aside) must be the text most items hold, and that by more than
    one item when there are several. A template that adds a hint for some questions writes
    another wrap there. The wrap that stands is rendered once (one of its items against the
    stand-in), not per item: a template of one lookup per question takes seconds to render."""
    states = {
        item_id: _marker_state(logged, ours, chat, template)
        for item_id, (logged, ours) in prompts.items()
    }
    wraps = {
        item_id: _logged_wrap(*prompts[item_id])
        for item_id, state in states.items()
        if state == "wrapped" and chat_messages(prompts[item_id][0]) is None
    }
    if not wraps:
        return states
    (usual, count), *_ = Counter(wraps.values()).most_common(1)
    stands = (count > 1 or len(wraps) == 1) and _same_for_any_prompt(
        template or "", prompts[next(i for i, wrap in wraps.items() if wrap == usual)][1]
    )
    for item_id, wrap in wraps.items():
        if not stands or wrap != usual:
            states[item_id] = "added_text"
    return states


#: What the check renders in our prompt's place (around it: our prompt's own leading and
#: trailing whitespace, which a template may strip): text no question holds.
_STAND_IN = "\u2063sqlbench-lmeval stand-in prompt\u2063"


def _logged_wrap(logged: str, ours: str) -> tuple[str, str]:
    """The text around our prompt in a logged one, its rendered dates masked."""
    core = ours if ours in logged else ours.strip()
    before, _, after = logged.partition(core)
    return _RENDERED_DATE.sub("<date>", before), _RENDERED_DATE.sub("<date>", after)


def _same_for_any_prompt(template: str, ours: str) -> bool:
    """Whether the recorded template writes the same text around our prompt as around a
    stand-in (True when it does not render here: a name such as ``chatml``, a syntax of
    another engine, tokens only the model's tokenizer knows; the wraps across items decide)."""
    stand_in = ours[: len(ours) - len(ours.lstrip())] + _STAND_IN + ours[len(ours.rstrip()) :]
    mine, theirs = _rendered_wrap(template, ours), _rendered_wrap(template, stand_in)
    if mine is None or theirs is None:
        return mine is None and theirs is None
    return mine == theirs


@lru_cache(maxsize=8)  # the stand-in's wrap is the same for every item of a task
def _rendered_wrap(template: str, content: str) -> tuple[str, str] | None:
    """The text ``template`` writes around one user turn of ``content`` (with the generation
    prompt), as jinja2's sandbox renders it; None when it does not render or holds no
    ``content``."""
    try:
        text = _compiled(template).render(
            messages=[{"role": "user", "content": content}], add_generation_prompt=True
        )
    except Exception:  # a template is the submitter's text: any failure means "not rendered"
        return None
    core = content if content in text else content.strip()
    if not core or core not in text:
        return None
    before, _, after = text.partition(core)
    return before, after


@lru_cache(maxsize=4)
def _compiled(template: str):
    """``template`` compiled as ``transformers`` compiles chat templates: a sandbox that
    cannot reach Python's internals, ``trim_blocks``, ``lstrip_blocks``, loop controls, and
    its helpers (``raise_exception``; ``strftime_now`` writing one fixed date)."""
    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
    )
    environment.globals["raise_exception"] = _raise
    environment.globals["strftime_now"] = lambda form: "26 Jul 2024"
    return environment.from_string(template)


def _raise(message):
    raise ValueError(message)


def _template_only(text: str, template: str | None) -> bool:
    """Whether ``text`` holds nothing but a chat template's markers, role names and text the
    recorded template itself writes (a default system message)."""
    for piece in _TEMPLATE_MARKER.sub("\n", text).split("\n"):
        piece = piece.strip()
        if not piece or piece.casefold() in _ROLE_WORDS:
            continue
        if template and all(
            part.strip() in template for part in _RENDERED_DATE.split(piece) if part.strip()
        ):
            continue
        return False
    return True


def chat_messages(text: str) -> list[dict] | None:
    """The messages of a prompt logged as a JSON chat (API chat models), else None."""
    if not text.startswith("["):
        return None
    try:
        messages = json.loads(text)
    except ValueError:
        return None
    if isinstance(messages, list) and all(isinstance(m, dict) for m in messages):
        return messages
    return None
