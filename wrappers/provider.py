"""One provider module for OpenAI-compatible chat completions (vLLM, hosted providers), shared by the
LLM agents (:mod:`tooltrap.agents.llm`) and the LLM judges of a benchmark's evaluation package
(``wrappers/eval/<benchmark>/judges.py``).

* :class:`ChatClient` - one server: the HTTP client, timeouts that cover the whole reply, a size limit,
  retries with exponential backoff, a concurrency limit, the native-tools switch (a server that rejects
  ``tools`` gets them described in the prompt) and a fuse that stops waiting on a dead server; shared
  by every clone of a :class:`ChatModel`.
* :class:`ChatModel` - a model behind a client with its sampling settings: builds the request and
  returns the assistant message.
* :class:`Reply` and :func:`read_choice` - a reply body read safely: checked for shape, and every
  code point UTF-8 cannot encode replaced (:func:`~tooltrap.envs.core.make_safe`) before the reply
  reaches a conversation, a trace or the next request;
* :class:`ProviderError` - every failure of the provider (never of the model), with its ``kind``
  (:data:`PROVIDER_ERROR_KINDS`): the evaluation runner records it as a system-level outcome, a judge as
  no vote.

Needs the ``llm`` extra (httpx).
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tooltrap.envs.core import TooltrapError, make_safe

#: HTTP statuses worth another attempt (rate limits, overload, gateway errors)
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
#: what a :class:`ProviderError` can say happened, besides ``http_<status>``
PROVIDER_ERROR_KINDS: tuple[str, ...] = (
    "content_filter",
    "timeout",
    "connection",
    "invalid_response",
    "response_too_large",
    "provider_down",
)


class ProviderError(TooltrapError, RuntimeError):
    """The provider, not the model, ended the request: ``kind`` is ``content_filter``, ``http_<status>``,
    ``timeout``, ``connection``, ``invalid_response``, ``response_too_large`` or ``provider_down``."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"{kind}: {message}")
        self.kind = kind


@dataclass(frozen=True)
class Reply:
    """A chat-completions reply as read from the server.

    Attributes:
        choice: The first choice (``finish_reason`` ...).
        message: Its assistant message, every string of it encodable as UTF-8.
        escaped: How many code points were replaced to make it so (lone surrogates, sent raw or as
            ``\\ud800`` escapes, in the content or inside a tool call's ``arguments``; invalid UTF-8).
    """

    choice: dict[str, Any]
    message: dict[str, Any]
    escaped: int = 0


def read_choice(body: bytes) -> Reply:
    """The first choice and its message from a chat-completions reply, checked for shape: anything
    else is an ``invalid_response`` (too deep, a number past Python's digit limit, wrong types).

    The reply is made safe first (:func:`~tooltrap.envs.core.make_safe`): a lone surrogate a server
    sends (``"content": "hi \\ud800"``) would be accepted here and make the *next* request's JSON
    encoding raise; it becomes U+FFFD, counted in :attr:`Reply.escaped`. A tool call's ``arguments``
    string is JSON inside JSON, so its own escapes are checked too."""

    def invalid(why: str) -> ProviderError:
        return ProviderError("invalid_response", f"{why}: {body[:300].decode('utf-8', 'replace')}")

    text, escaped = make_safe(body, json_escapes=True)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise invalid(f"not JSON ({type(exc).__name__})") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise invalid("no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise invalid("the choice has no message object")
    content = message.get("content")
    if content is not None and not isinstance(content, str | list):
        raise invalid(f"content is a {type(content).__name__}")
    calls = message.get("tool_calls")
    if calls is not None and (
        not isinstance(calls, list)
        or not all(isinstance(c, dict) and isinstance(c.get("function", {}), dict) for c in calls)
    ):
        raise invalid("tool_calls is not a list of calls")
    for call in calls or ():
        function = call.get("function")
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            function["arguments"], n = make_safe(function["arguments"], json_escapes=True)
            escaped += n
    return Reply(choice, message, escaped)


_JSON = {"Content-Type": "application/json"}


def request_bytes(body: dict[str, Any]) -> bytes:
    """A request body as httpx's ``json=`` writes it, but never unencodable: what the conversation
    holds from outside the guarded boundaries (a task file's text, a caller's own messages) may carry
    a lone surrogate, which would raise ``UnicodeEncodeError`` here and end the whole run; it is sent
    as U+FFFD (:func:`~tooltrap.envs.core.make_safe`)."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return make_safe(text)[0].encode("utf-8")


def tools_in_prompt(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation for a server without native tool calling: the tools described in the system
    prompt, tool results and assistant tool calls rendered as plain turns."""
    catalogue = json.dumps([t["function"] for t in tools], ensure_ascii=False)
    note = (
        '\n\nTools (call one with a JSON object {"name": ..., "arguments": {...}} as your whole reply, '
        f"or a JSON list of such objects):\n{catalogue}"
    )
    out = [dict(m) for m in messages]
    if out and out[0]["role"] == "system":
        out[0]["content"] += note
    else:
        out.insert(0, {"role": "system", "content": note.strip()})
    # servers without tool support reject tool roles: render them as user turns
    rendered = []
    for m in out:
        if m["role"] == "tool":
            rendered.append({"role": "user", "content": f"Result of {m.get('name', 'tool')}: {m['content']}"})
        elif m["role"] == "assistant" and m.get("tool_calls"):
            calls = [
                {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"] or "{}")}
                for c in m["tool_calls"]
            ]
            rendered.append(
                {"role": "assistant", "content": json.dumps(calls[0] if len(calls) == 1 else calls)}
            )
        else:
            rendered.append(m)
    return rendered


class ChatClient:
    """The HTTP side of one OpenAI-compatible server (``POST {base_url}/chat/completions``).

    Thread-safe and meant to be shared: the concurrency limit, the native-tools switch and the
    provider's recent record hold for every user of the client.

    Args:
        base_url: Server root including ``/v1``.
        api_key: Bearer token (or None).
        timeout: Seconds per request, in all: connecting, waiting and reading the whole reply (a server
            that drips its body slowly is cut off too).
        connect_timeout: Seconds to open a connection (default: ``timeout``); a short one finds a host
            that does not answer quickly, without cutting a slow reply short.
        max_retries: Retries on timeouts, connection errors, 429 and 5xx.
        backoff: First retry delay in seconds (doubles each retry).
        native_tools: Send ``tools``; falls back to JSON-in-text if the server rejects them.
        max_concurrency: Requests in flight at once.
        max_response_bytes: A longer reply is a ``response_too_large`` error, never read whole.
        max_failed_episodes: After this many requests in a row failed by connection errors or timeouts,
            the next ones fail at once (``provider_down``) instead of waiting out their retries; one that
            gets through resets the count.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000/v1",
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 1.0,
        native_tools: bool = True,
        max_concurrency: int = 8,
        max_response_bytes: int = 4 * 2**20,
        max_failed_episodes: int = 3,
        connect_timeout: float | None = None,
    ):
        import httpx  # the "llm" extra

        from .deadline import DeadlineTransport

        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_response_bytes = max_response_bytes
        self.max_failed_episodes = max_failed_episodes
        #: whether requests carry ``tools``; switched off for good when the server rejects them
        self.native_tools = native_tools
        self.failed_in_a_row = 0
        self._http = httpx.Client(
            timeout=httpx.Timeout(
                timeout, connect=connect_timeout if connect_timeout is not None else timeout
            ),
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
            transport=DeadlineTransport(),  # ``timeout`` bounds the whole exchange, headers included
        )
        self._slots = threading.BoundedSemaphore(max_concurrency)

    def complete(self, payload: Callable[[bool], dict[str, Any]]) -> dict[str, Any]:
        """:meth:`reply`'s assistant message."""
        return self.reply(payload).message

    def reply(self, payload: Callable[[bool], dict[str, Any]]) -> Reply:
        """One completion, with retries. ``payload(native_tools)`` builds the request body for each
        attempt (the native-tools switch may flip between attempts).

        Raises:
            ProviderError: Every failure (a system-level outcome), never an exception from a malformed,
                huge or endless reply.
        """
        if self.failed_in_a_row >= self.max_failed_episodes:
            raise ProviderError(
                "provider_down",
                f"skipped: the last {self.failed_in_a_row} requests failed to reach the provider "
                f"at {self.base_url} (rerun to retry)",
            )
        try:
            reply = self._attempts(payload)
        except ProviderError as err:
            if err.kind in ("connection", "timeout"):
                self.failed_in_a_row += 1
            raise
        self.failed_in_a_row = 0
        return reply

    def _attempts(self, payload: Callable[[bool], dict[str, Any]]) -> Reply:
        delay = self.backoff
        last = ProviderError("connection", "no attempt made")
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(delay)
                delay *= 2
            try:
                with self._slots:
                    status, body = self._post(payload(self.native_tools))
            except ProviderError as err:
                if err.kind in ("connection", "timeout"):
                    last = err
                    continue
                raise
            text = body[:300].decode("utf-8", "replace")
            if status == 400 and self.native_tools and "tool" in text.lower():
                self.native_tools = False  # the server does not take tools: JSON-in-text from now on
                continue
            if status in RETRY_STATUS:
                last = ProviderError(f"http_{status}", text)
                continue
            if status >= 400:
                raise ProviderError(f"http_{status}", text)
            reply = read_choice(body)
            if reply.choice.get("finish_reason") == "content_filter":
                raise ProviderError("content_filter", "the provider's content filter stopped the completion")
            return reply
        raise last

    def _post(self, body: dict[str, Any]) -> tuple[int, bytes]:
        """POST the request and read the reply within ``timeout`` seconds and ``max_response_bytes``:
        one deadline over connecting, the headers and the body (a server that drips its headers is cut
        off as one that drips its body)."""
        import httpx

        from .deadline import request_deadline

        deadline = time.monotonic() + self.timeout
        try:
            with (
                request_deadline(self.timeout),
                self._http.stream(
                    "POST", f"{self.base_url}/chat/completions", content=request_bytes(body), headers=_JSON
                ) as response,
            ):
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > self.max_response_bytes:
                        raise ProviderError(
                            "response_too_large", f"the reply passed {self.max_response_bytes:,} bytes"
                        )
                    if time.monotonic() > deadline:
                        raise ProviderError("timeout", f"the reply took longer than {self.timeout:g} s")
                    chunks.append(chunk)
                return response.status_code, b"".join(chunks)
        except httpx.TimeoutException as exc:
            raise ProviderError("timeout", str(exc) or "request timed out") from None
        except httpx.HTTPError as exc:
            raise ProviderError("connection", str(exc) or type(exc).__name__) from None


class ChatModel:
    """A model behind an OpenAI-compatible server, with its sampling settings.

    Args:
        model: Model name as the server knows it.
        base_url: Server root including ``/v1``.
        api_key: Bearer token (or None).
        temperature: Sampling temperature (0: greedy).
        max_tokens: Completion budget per request.
        extra_body: Further request fields (``top_p``, provider options ...).
        **client_options: :class:`ChatClient` options (``timeout``, ``connect_timeout``, ``max_retries``,
            ``backoff``, ``native_tools``, ``max_concurrency``, ``max_response_bytes``,
            ``max_failed_episodes``).
    """

    def __init__(
        self,
        model: str,
        base_url: str = "http://127.0.0.1:8000/v1",
        *,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        extra_body: dict[str, Any] | None = None,
        **client_options: Any,
    ):
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.extra_body = extra_body or {}
        self.client = ChatClient(base_url, api_key=api_key, **client_options)

    @property
    def base_url(self) -> str:
        return self.client.base_url

    def clone(self) -> ChatModel:
        """A copy with its own settings that shares the client (connections, limits, switches)."""
        return copy.copy(self)

    def request(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        seed: int | None = None,
        native_tools: bool = True,
    ) -> dict[str, Any]:
        """The request body: the model, its settings and the conversation; ``tools`` natively, or
        described in the prompt when ``native_tools`` is off (a request without tools sends none: some
        servers reject ``[]``)."""
        body: dict[str, Any] = {
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            **self.extra_body,
        }
        if seed is not None:
            body["seed"] = seed
        if native_tools or not tools:
            body["messages"] = messages
            if tools:
                body["tools"] = tools
        else:
            body["messages"] = tools_in_prompt(messages, tools)
        return body

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        seed: int | None = None,
    ) -> dict[str, Any]:
        """One chat completion of ``messages`` (with ``tools`` when given); returns the assistant
        message. Raises :class:`ProviderError` on every provider failure."""
        return self.reply(messages, tools, seed=seed).message

    def reply(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        seed: int | None = None,
    ) -> Reply:
        """:meth:`complete`, with the choice and the count of replaced code points (:class:`Reply`)."""
        return self.client.reply(lambda native: self.request(messages, tools, seed=seed, native_tools=native))
