"""How a logged prompt stands against the prompt the task builds: the same, wrapped by the
chat template or chat model the run records (its markers only), ours with text added around it,
or edited. Used by the provenance and settings checks (the rule: docs/verify.md#chat-templates).

>>> ours = "Question: how many stores?"
>>> chatml = "<|im_start|>user\\n" + ours + "<|im_end|>\\n<|im_start|>assistant\\n"
>>> template = "{% for m in messages %}<|im_start|>{{ m.role }}..."
>>> prompt_state(chatml, ours, chat="template sha256 0c1f", template=template)
'wrapped'
>>> prompt_state(chatml, ours, chat=None, template=None)  # no template recorded
'added_text'
>>> prompt_state("Question: how many rows?", ours, None, None), prompt_state(None, ours, None, None)
('edited', 'not_logged')
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

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


def prompt_state(logged: str | None, ours: str, chat: str | None, template: str | None) -> str:
    """``same``, ``wrapped`` (inside the run's recorded chat template: its markers only),
    ``added_text`` (our prompt, with other text around it), ``edited`` or ``not_logged``."""
    if logged is None:
        return "not_logged"
    if logged == ours:
        return "same"
    messages = _chat_messages(logged)
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


def _chat_messages(text: str) -> list[dict] | None:
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
