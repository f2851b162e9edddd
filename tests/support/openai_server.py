"""A scripted OpenAI-compatible server on 127.0.0.1 for end-to-end tests of the real lm_eval CLI.

It answers ``POST /v1/completions`` (lm-eval's ``local-completions``) and
``POST /v1/chat/completions`` (``local-chat-completions``) with text chosen by the test::

    with ScriptedOpenAIServer(lambda prompt: "SELECT 1") as server:
        server.completions_url   # http://127.0.0.1:<port>/v1/completions
        server.chat_url          # http://127.0.0.1:<port>/v1/chat/completions
        ...                      # run lm_eval against it
        server.requests          # every request seen, in order

``answer`` receives the prompt text: the ``prompt`` string of a completions request, or the
content of the last ``user`` message of a chat request. Wrapped in ``RequestAnswer`` it also
receives the request's JSON body, ``answer(prompt, body)``: tasks of one run that send the same
prompt with other sampling settings (``temperature``) can then be told apart. Like a real
server, the reply is cut at the first of the request's ``stop`` strings. An exception in
``answer`` becomes an HTTP 500 and is kept in ``server.errors``.

Each reply carries an OpenAI ``usage`` of zeros by default. ``usage=None`` sends none (a
server that does not count); ``usage=callable(prompt, text) -> (prompt_tokens,
completion_tokens)`` sends those numbers (summed over a batched request's prompts), and
``server.usages`` keeps every ``(prompt, text, usage, body)`` sent, in order. ``delay_s`` holds each
reply back that long (at most ``MAX_DELAY_S``), so a client's latency is at least that.

Its life is bounded: it listens only on the loopback address, on a port the OS picks, serves at
most ``max_requests`` requests (then answers 503) and shuts itself down after ``lifetime_s``
seconds even if the test forgets to.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Answer = Callable[[str], str]
#: Counts ``usage`` sends for a prompt and the reply's text: (prompt_tokens, completion_tokens).
Usage = Callable[[str, str], tuple[int, int]]
#: A reply's delay is capped: a test must stay short.
MAX_DELAY_S = 2.0
#: ``usage`` default: every reply says it counted nothing (as before ``usage`` was a choice).
ZERO_USAGE: Usage = lambda _prompt, _text: (0, 0)  # noqa: E731

COMPLETIONS_PATH = "/v1/completions"
CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class RequestAnswer:
    """An ``answer`` that is called with the prompt and the request's JSON body."""

    answer: Callable[[str, dict], str]


@dataclass(frozen=True)
class SeenRequest:
    """One request as the server received it."""

    path: str
    prompt: str  # what ``answer`` was called with
    body: dict = field(repr=False)


def prompt_of(path: str, body: dict) -> list[str]:
    """The prompt texts of one request: several for a batched completions request."""
    if path == CHAT_PATH:
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        return [_content_text(users[-1].get("content")) if users else ""]
    prompt = body.get("prompt", "")
    return [str(p) for p in prompt] if isinstance(prompt, list) else [str(prompt)]


def cut_at_stop(text: str, stop) -> str:
    """``text`` up to the first occurrence of any stop string, as OpenAI servers do."""
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    cut = len(text)
    for s in stops:
        if s and s in text:
            cut = min(cut, text.index(s))
    return text[:cut]


def completion_reply(
    path: str, model: str, texts: list[str], usage: tuple[int, int] | None = (0, 0)
) -> dict:
    """The JSON body lm-eval's ``parse_generations`` reads, for completions or chat; ``usage``
    (prompt, completion tokens) None leaves the ``usage`` field out."""
    if path == CHAT_PATH:
        choices = [
            {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
            for i, t in enumerate(texts)
        ]
        kind = "chat.completion"
    else:
        choices = [
            {"index": i, "text": t, "logprobs": None, "finish_reason": "stop"}
            for i, t in enumerate(texts)
        ]
        kind = "text_completion"
    reply = {
        "id": "scripted",
        "object": kind,
        "created": int(time.time()),
        "model": model,
        "choices": choices,
    }
    if usage is not None:
        prompt_tokens, completion_tokens = usage
        reply["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
    return reply


class ScriptedOpenAIServer:
    """Context manager running the server in a daemon thread (see module docstring)."""

    def __init__(
        self,
        answer: Answer | RequestAnswer | str,
        *,
        max_requests: int = 10_000,
        lifetime_s: float = 900.0,
        usage: Usage | None = ZERO_USAGE,
        delay_s: float = 0.0,
    ) -> None:
        if not 0 <= delay_s <= MAX_DELAY_S:
            raise ValueError(f"delay_s must be within 0..{MAX_DELAY_S}, got {delay_s}")
        self.usage = usage
        self.delay_s = delay_s
        self.usages: list[tuple[str, str, tuple[int, int] | None, dict]] = []
        if isinstance(answer, RequestAnswer):
            self._answer = answer.answer
        elif callable(answer):
            self._answer = lambda prompt, _body: answer(prompt)
        else:
            self._answer = lambda _prompt, _body, text=answer: text
        self.max_requests = max_requests
        self.lifetime_s = lifetime_s
        self.requests: list[SeenRequest] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._deadline: threading.Timer | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> ScriptedOpenAIServer:
        handler = _handler_for(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        self._deadline = threading.Timer(self.lifetime_s, self.stop)
        self._deadline.daemon = True
        self._deadline.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if self._deadline is not None and self._deadline is not threading.current_thread():
            self._deadline.cancel()
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- addresses ---------------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server is not running")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def completions_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{COMPLETIONS_PATH}"

    @property
    def chat_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{CHAT_PATH}"

    # -- request handling (called from handler threads) --------------------------------------
    def _reply(self, path: str, body: dict) -> tuple[int, dict]:
        with self._lock:
            if len(self.requests) >= self.max_requests:
                return 503, {"error": {"message": f"over max_requests={self.max_requests}"}}
            prompts = prompt_of(path, body)
            self.requests.extend(SeenRequest(path, p, body) for p in prompts)
        try:
            texts = [cut_at_stop(str(self._answer(p, body)), body.get("stop")) for p in prompts]
        except Exception as error:  # noqa: BLE001 - reported to the test, not raised in a thread
            message = f"answer() raised {error!r}"
            self.errors.append(message)
            return 500, {"error": {"message": message}}
        usage = None
        if self.usage is not None:
            counts = [self.usage(p, t) for p, t in zip(prompts, texts, strict=True)]
            usage = (sum(c[0] for c in counts), sum(c[1] for c in counts))
        with self._lock:
            self.usages.extend((p, t, usage, body) for p, t in zip(prompts, texts, strict=True))
        if self.delay_s:
            time.sleep(self.delay_s)  # in the handler's own thread: other requests go on
        return 200, completion_reply(path, str(body.get("model", "test")), texts, usage)


def _content_text(content) -> str:
    # Chat content may be a string or a list of typed parts.
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _handler_for(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            path = self.path.split("?", 1)[0].rstrip("/")
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if path not in (COMPLETIONS_PATH, CHAT_PATH):
                self._send(404, {"error": {"message": f"no route {path}"}})
                return
            try:
                body = json.loads(raw or b"{}")
            except ValueError as error:
                self._send(400, {"error": {"message": f"bad JSON: {error}"}})
                return
            self._send(*server._reply(path, body))

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": "test", "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format, *args) -> None:  # noqa: A002 - keep test output quiet
            pass

    return Handler
