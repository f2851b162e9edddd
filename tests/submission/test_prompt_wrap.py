"""Which logged prompts ``verify`` takes for the task's prompt inside a chat template.

The prompts are rendered by jinja2's sandbox, as ``transformers`` renders chat templates, from
two real templates: the ChatML one the tiny test model carries (``support.tiny_hf_model``) and
one in the shape of Llama 3.1's, whose default system turn writes the day's date. A template's
own markers and text stand; a hint, gold or an example anywhere around the prompt does not, nor
do markers when the run records no chat template.
"""

from __future__ import annotations

import json

import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment
from support.tiny_hf_model import CHAT_TEMPLATE

from sqlbench_lmeval.submission.checks.chat_wrap import chat_run, prompt_states

#: Llama 3.1's default system turn, cut to what matters here: a date it renders itself.
DATED_TEMPLATE = (
    "{{- bos_token }}"
    '{%- set date_string = strftime_now("%d %b %Y") %}'
    '{{- "<|start_header_id|>system<|end_header_id|>\\n\\n" }}'
    '{{- "Cutting Knowledge Date: December 2023\\n" }}'
    '{{- "Today Date: " + date_string + "\\n\\n" }}'
    '{{- "<|eot_id|>" }}'
    "{%- for message in messages %}"
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content']"
    " + '<|eot_id|>' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{%- endif %}"
)

OURS = "CREATE TABLE t (a INT);\n\nQuestion: How many rows?\n\nReply with one SQL query.\n"
GOLD = "SELECT COUNT(*) FROM t"


def render(template: str, messages: list[dict]) -> str:
    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    environment.globals["strftime_now"] = lambda form: "26 Jul 2024"
    return environment.from_string(template).render(
        messages=messages, add_generation_prompt=True, bos_token="<|begin_of_text|>"
    )


def user(content: str) -> dict:
    return {"role": "user", "content": content}


def prompt_state(logged: str | None, ours: str, chat: str | None, template: str | None) -> str:
    """verify's state of one item's logged prompt: :func:`prompt_states` of a task of one."""
    return prompt_states({1: (logged, ours)}, chat, template)[1]


@pytest.mark.parametrize("template", [CHAT_TEMPLATE, DATED_TEMPLATE], ids=["chatml", "dated"])
def test_a_template_wrap_stands_and_added_text_does_not(template):
    chat = chat_run({"chat_template": template, "chat_template_sha": "ab" * 32})
    assert chat == "template sha256 abababababab"
    assert prompt_state(render(template, [user(OURS)]), OURS, chat, template) == "wrapped"
    hinted = [user(f"{OURS}\nHint (from the reference solution): {GOLD}")]
    assert prompt_state(render(template, hinted), OURS, chat, template) == "added_text"
    system = [{"role": "system", "content": f"The answer is {GOLD}"}, user(OURS)]
    assert prompt_state(render(template, system), OURS, chat, template) == "added_text"
    shot = [user("Question: How many tables?"), {"role": "assistant", "content": GOLD}, user(OURS)]
    assert prompt_state(render(template, shot), OURS, chat, template) == "added_text"
    # No recorded template: the same markers are text the benchmark does not give.
    assert prompt_state(render(template, [user(OURS)]), OURS, None, None) == "added_text"


def test_what_a_run_records_as_its_chat_setting():
    assert chat_run({"chat_template": None, "config": {"model": "local-completions"}}) is None
    assert chat_run({"chat_template": ""}) == "chat model unnamed"
    api = {"chat_template": "", "config": {"model": "local-chat-completions"}}
    assert chat_run(api) == "chat model local-chat-completions"
    assert chat_run({"chat_template": "chatml"}) == "template 'chatml'"
    assert prompt_state(OURS, OURS, None, None) == "same"
    assert prompt_state(None, OURS, None, None) == "not_logged"
    assert prompt_state(OURS.replace("rows", "tables"), OURS, None, None) == "edited"


def test_an_api_chat_run_logs_messages_and_a_rendered_wrap_is_not_its_own():
    # lm-eval records "" when no tokenizer renders a template here (the provider formats the
    # messages) and logs each request as its JSON messages; a string with a template's markers
    # around our prompt is then nothing the run's own formatting wrote.
    chat = chat_run({"chat_template": "", "config": {"model": "local-chat-completions"}})
    assert prompt_state(json.dumps([user(OURS)]), OURS, chat, None) == "wrapped"
    assert prompt_state(render(CHAT_TEMPLATE, [user(OURS)]), OURS, chat, None) == "added_text"
