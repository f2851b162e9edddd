"""The test helpers themselves: the scripted server speaks the OpenAI shapes lm-eval reads, and
``run_lm_eval`` reports failures and reads lm-eval's outputs (bare NaN included)."""

from __future__ import annotations

import json
import math
import sys
import urllib.error
import urllib.request

import pytest
from support.lm_eval_run import read_outputs, run_lm_eval
from support.openai_server import RequestAnswer, ScriptedOpenAIServer


def post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_completions_batch_answers_each_prompt_and_cuts_at_stop():
    with ScriptedOpenAIServer(lambda p: f"{p.upper()}!\nmore") as server:
        assert server.completions_url.startswith("http://127.0.0.1:")
        status, reply = post(
            server.completions_url, {"model": "m", "prompt": ["ab", "cd"], "stop": ["\n"]}
        )
        seen = [r.prompt for r in server.requests]
    assert status == 200
    assert reply["object"] == "text_completion"
    assert [(c["index"], c["text"]) for c in reply["choices"]] == [(0, "AB!"), (1, "CD!")]
    assert seen == ["ab", "cd"]


def test_chat_answers_the_last_user_message():
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "second"}]},
    ]
    with ScriptedOpenAIServer(lambda p: f"got {p}") as server:
        status, reply = post(server.chat_url, {"model": "m", "messages": messages, "stop": []})
    assert status == 200
    assert reply["choices"][0]["message"] == {"role": "assistant", "content": "got second"}


def test_a_request_answer_also_reads_the_request_body():
    """Two requests with one prompt, told apart by their temperature."""

    def answer(prompt: str, body: dict) -> str:
        return f"{prompt} at {body['temperature']}"

    with ScriptedOpenAIServer(RequestAnswer(answer)) as server:
        replies = [
            post(server.completions_url, {"prompt": "q", "temperature": t})[1] for t in (0, 0.7)
        ]
    assert [r["choices"][0]["text"] for r in replies] == ["q at 0", "q at 0.7"]


def test_errors_are_http_codes_and_recorded():
    def answer(prompt: str) -> str:
        raise ValueError("scripted failure")

    with ScriptedOpenAIServer(answer, max_requests=1) as server:
        assert post(server.base_url + "/nothing", {})[0] == 404
        status, reply = post(server.completions_url, {"prompt": "x"})
        assert status == 500 and "scripted failure" in reply["error"]["message"]
        assert post(server.completions_url, {"prompt": "y"})[0] == 503  # over max_requests
        assert server.errors == ["answer() raised ValueError('scripted failure')"]


def test_server_stops_itself_after_its_lifetime():
    server = ScriptedOpenAIServer("x", lifetime_s=0.2).start()
    server._deadline.join(timeout=10)
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.port


def test_run_lm_eval_raises_with_command_and_output(tmp_path):
    fake_cli = [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"]
    with pytest.raises(AssertionError, match=r"(?s)exit 3.*boom"):
        run_lm_eval("t", answer="x", workdir=tmp_path, lm_eval=fake_cli)


def test_read_outputs_accepts_bare_nan(tmp_path):
    model_dir = tmp_path / "out" / "test"
    model_dir.mkdir(parents=True)
    results = {"results": {"t": {"ex,none": float("nan")}}, "configs": {"t": {}}}
    (model_dir / "results_2025.json").write_text(json.dumps(results))
    (model_dir / "samples_t_2025.jsonl").write_text('{"doc_id": 0, "ex": NaN}\n\n')

    parsed, samples = read_outputs(tmp_path / "out")

    assert math.isnan(parsed["results"]["t"]["ex,none"])
    assert math.isnan(samples["t"][0]["ex"])
