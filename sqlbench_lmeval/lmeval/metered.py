"""``sqlbench-metered``: any lm-eval model, with what each answer cost measured: ``lm_eval --model
sqlbench-metered --model_args "base=<model>,tokenizer=<folder>,..."`` answers each request of our
tasks with a ``scoring.cost`` envelope holding the base model's output, its prompt and
completion tokens (the server's ``usage``, else a tokenizer) and its wall latency; the scoring
filter unwraps it (what is measured and how: docs/cost.md).

API models (lm-eval's ``TemplateAPI``: ``local-chat-completions``, ``local-completions``, ...) keep
their batching and concurrency: :class:`ApiCalls` records each HTTP call as it is made. Every
other model is asked one request at a time, so that each request's latency is its own."""

from __future__ import annotations

import contextvars
import json
import time
from dataclasses import dataclass

from lm_eval.api.registry import get_model

from sqlbench_lmeval.lmeval.wrapped import WrappedModel, is_ours
from sqlbench_lmeval.scoring.cost import TOKENIZER, USAGE, Cost, wrap


def context_text(context) -> str:
    """A request's context as text (a chat context is lm-eval's ``JsonChatStr``)."""
    return context if isinstance(context, str) else str(getattr(context, "prompt", context))


@dataclass
class Call:
    """One HTTP call of an API model: the contexts it sent, the texts it got back, the
    server's ``usage`` (None: the reply had none) and the time from sending to the reply."""

    contexts: list[str]
    texts: list
    usage: dict | None
    latency_s: float | None
    used: int = 0  # how many of its requests were matched to one of ours


class ApiCalls:
    """Records every call of a ``TemplateAPI`` model (``lm_eval/models/api_models.py``) by
    wrapping three of its methods on the instance: ``model_call`` (the sync path: one call at a
    time, timed around the POST), ``amodel_call`` (the concurrent path: timed from the moment
    the semaphore lets the call go, so waiting for a free slot is not latency) and
    ``parse_generations``, which both paths call with the server's reply (where ``usage`` is
    read). A context variable ties a reply to its call, so concurrent calls never mix."""

    def __init__(self, model) -> None:
        self.calls: list[Call] = []
        self._current: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
            "sqlbench_metered_call", default=None
        )
        self._last_sync: tuple[object, float] | None = None
        model_call, amodel_call = model.model_call, model.amodel_call
        parse_generations = model.parse_generations

        def timed_model_call(*args, **kwargs):
            start = time.perf_counter()
            outputs = model_call(*args, **kwargs)
            self._last_sync = (outputs, time.perf_counter() - start)
            return outputs

        async def timed_amodel_call(*args, **kwargs):
            holder: dict = {}
            sem = kwargs.get("sem")
            if sem is not None:
                kwargs["sem"] = _StartClock(sem, holder)
            token = self._current.set(holder)
            try:
                answers = await amodel_call(*args, **kwargs)
            finally:
                self._current.reset(token)
            if kwargs.get("generate", True):
                contexts = [context_text(key[0]) for key in kwargs.get("cache_keys") or ()]
                start, end = holder.get("start"), holder.get("end")
                latency = end - start if start is not None and end is not None else None
                self.calls.append(Call(contexts, list(answers or ()), holder.get("usage"), latency))
            return answers

        def recording_parse_generations(*args, **kwargs):
            texts = parse_generations(*args, **kwargs)
            outputs = kwargs.get("outputs", args[0] if args else None)
            usage = outputs.get("usage") if isinstance(outputs, dict) else None
            holder = self._current.get()
            if holder is not None:  # the concurrent path: amodel_call records the call
                holder["end"] = time.perf_counter()
                holder["usage"] = usage
            elif "contexts" in kwargs:  # the sync path
                last, self._last_sync = self._last_sync, None
                latency = last[1] if last is not None and last[0] is outputs else None
                contexts = [context_text(c) for c in kwargs["contexts"]]
                self.calls.append(Call(contexts, list(texts), usage, latency))
            return texts

        model.model_call = timed_model_call
        model.amodel_call = timed_amodel_call
        model.parse_generations = recording_parse_generations

    def take(self, context: str, answer) -> Call | None:
        """The recorded call that answered ``context`` with ``answer`` (else any unmatched one
        of that context: the same prompt asked again), marked used; None when none is left."""
        candidates = [c for c in self.calls if c.used < len(c.contexts) and context in c.contexts]
        for call in candidates:
            if answer in call.texts:
                call.used += 1
                return call
        if candidates:
            candidates[0].used += 1
            return candidates[0]
        return None


class _StartClock:
    """An asyncio semaphore that notes when it let a call go (``holder["start"]``)."""

    def __init__(self, sem, holder: dict) -> None:
        self._sem, self._holder = sem, holder

    async def acquire(self):
        acquired = await self._sem.acquire()
        self._holder["start"] = time.perf_counter()
        return acquired

    def release(self) -> None:
        self._sem.release()


def usage_counts(usage) -> tuple[int, int] | None:
    """(prompt, completion) tokens of an OpenAI-style ``usage``; None when it has not both."""
    if not isinstance(usage, dict):
        return None
    counts = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
        return counts
    return None


class TokenCounter:
    """Counts tokens with a tokenizer: a Hugging Face one (``transformers.AutoTokenizer``, e.g.
    a local folder) or anything with ``encode(text)`` (a local model's own, tiktoken); ``name``
    says which, in every count it makes (``Cost.tokenizer``)."""

    def __init__(self, tokenizer, name: str | None = None) -> None:
        self.tokenizer = tokenizer
        self.name = name or _tokenizer_name(tokenizer)

    @classmethod
    def named(cls, name: str, *, local_files_only: bool = False) -> TokenCounter:
        """The tokenizer ``name`` (a folder, or a name ``AutoTokenizer`` loads); with
        ``local_files_only`` (``verify``) one that is not on this machine is an ``OSError``."""
        try:
            from transformers import AutoTokenizer  # optional: only when a tokenizer is named
        except ImportError as error:
            raise ImportError(
                "sqlbench-metered's tokenizer= loads it with transformers: pip install "
                "transformers (lm-eval's hf extra has it)"
            ) from error

        return cls(AutoTokenizer.from_pretrained(name, local_files_only=local_files_only), name)

    def prompt(self, context) -> int:
        """Tokens of a request's prompt (a text, or lm-eval's chat context)."""
        return self.prompt_text(context_text(context), chat=not isinstance(context, str))

    def prompt_text(self, text: str, chat: bool) -> int:
        """Tokens of a prompt as lm-eval logs it: a chat context (its messages as JSON) through
        the tokenizer's chat template when it has one (else its messages' contents, one per
        line), a text context as it is."""
        if chat:
            messages = json.loads(text)
            if getattr(self.tokenizer, "chat_template", None):
                return len(
                    self.tokenizer.apply_chat_template(
                        messages, tokenize=True, add_generation_prompt=True
                    )
                )
            text = "\n".join(str(m.get("content", "")) for m in messages)
        return len(self.tokenizer.encode(text))

    def completion(self, text: str) -> int:
        """Tokens of a completion, without the special tokens a tokenizer adds to a prompt."""
        try:
            return len(self.tokenizer.encode(text, add_special_tokens=False))
        except TypeError:  # an encode() that takes no such option (tiktoken)
            return len(self.tokenizer.encode(text))


def _tokenizer_name(tokenizer) -> str:
    """What a tokenizer is called: its Hugging Face ``name_or_path``, tiktoken's ``name``, else
    its class."""
    for attribute in ("name_or_path", "name"):
        name = getattr(tokenizer, attribute, None)
        if isinstance(name, str) and name:
            return name
    return type(tokenizer).__name__


class MeteredModel(WrappedModel):
    """The ``sqlbench-metered`` model (docs/cost.md). ``base`` names the wrapped model
    (``metered_base`` too, for when ``sqlbench-repair`` wraps this one and takes ``base``);
    ``tokenizer`` a tokenizer to count with when the server sends no ``usage`` (passed on to the
    base model as well); every other argument goes to the base model."""

    def __init__(
        self,
        base: str | None = None,
        tokenizer: str | None = None,
        metered_base: str | None = None,
        **base_args,
    ) -> None:
        super().__init__()
        base = base or metered_base
        if not base:
            raise ValueError("sqlbench-metered needs base=<an lm-eval model>")
        if tokenizer is not None:
            base_args["tokenizer"] = tokenizer
        self.base = get_model(base)(**base_args)
        self.api_calls = ApiCalls(self.base) if _is_api_model(self.base) else None
        if tokenizer is not None:
            self.counter: TokenCounter | None = TokenCounter.named(tokenizer)
        else:
            own = _own_tokenizer(self.base)
            self.counter = TokenCounter(own) if own is not None else None

    # -- requests ----------------------------------------------------------------------------
    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        if self.api_calls is not None:
            texts = self.base.generate_until(requests, disable_tqdm)
            costs = [self._api_cost(r, t) for r, t in zip(requests, texts, strict=True)]
        else:
            texts, costs = [], []
            for request in requests:  # one at a time: each latency is the request's own
                start = time.perf_counter()
                (text,) = self.base.generate_until([request], True)
                costs.append(self._counted(request, text, None, time.perf_counter() - start))
                texts.append(text)
        # Only our filters unwrap an envelope: other tasks get the base model's text.
        return [
            wrap(text if isinstance(text, str) else "", cost) if is_ours(request) else text
            for request, text, cost in zip(requests, texts, costs, strict=True)
        ]

    def _api_cost(self, request, text) -> Cost:
        call = self.api_calls.take(context_text(request.args[0]), text)
        if call is None:
            return self._counted(request, text, None, None)
        # A call that carried several prompts (batched completions) reports one usage for all:
        # not this request's own, so it is not used.
        counts = usage_counts(call.usage) if len(call.contexts) == 1 else None
        return self._counted(request, text, counts, call.latency_s)

    def _counted(self, request, text, counts, latency_s) -> Cost:
        if counts is not None:
            return Cost(counts[0], counts[1], latency_s, USAGE)
        if self.counter is not None:
            answer = text if isinstance(text, str) else ""
            prompt = self.counter.prompt(request.args[0])
            completion = self.counter.completion(answer)
            return Cost(prompt, completion, latency_s, TOKENIZER, tokenizer=self.counter.name)
        return Cost(None, None, latency_s, None)


def _own_tokenizer(model):
    """The base model's own tokenizer (a local model's; an API model's HF or tiktoken one), or
    None. Some models make theirs only when asked (lm-eval's ``dummy`` loads one from the hub),
    and one that cannot be made is no tokenizer: the counts are then null, and say so."""
    try:
        tokenizer = getattr(model, "tokenizer", None)
    except Exception:  # noqa: BLE001 - a tokenizer that cannot be loaded counts nothing
        return None
    return tokenizer if callable(getattr(tokenizer, "encode", None)) else None


def _is_api_model(model) -> bool:
    """Whether ``model`` is one of lm-eval's ``TemplateAPI`` models (an HTTP server's)."""
    try:
        from lm_eval.models.api_models import TemplateAPI  # optional: lm-eval's api extra
    except ImportError:
        return False
    return isinstance(model, TemplateAPI)
