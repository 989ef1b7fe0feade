"""An agent for any OpenAI-compatible chat-completions server (vLLM, hosted providers).

Native tool calling by default (``tools=`` in the request, ``tool_calls`` in the answer), with a
JSON-in-text fallback for servers that reject ``tools``; temperature 0 by default; timeouts, retries
with exponential backoff, and a concurrency limit shared by all clones of the agent. Provider errors and
content-filter refusals raise :class:`ProviderError`, which the evaluation runner records as a
system-level outcome, never as a model action.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, ClassVar

from tooltrap.envs.core import TooltrapError

from .base import ChatAgent

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class ProviderError(TooltrapError, RuntimeError):
    """The provider, not the model, ended the episode: ``kind`` is ``content_filter``, ``http_<status>``,
    ``timeout``, ``connection`` or ``invalid_response``."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"{kind}: {message}")
        self.kind = kind


def _read_choice(body: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first choice and its message from a chat-completions reply, checked for shape: anything
    else is an ``invalid_response`` (too deep, a number past Python's digit limit, wrong types)."""

    def invalid(why: str) -> ProviderError:
        return ProviderError("invalid_response", f"{why}: {body[:300].decode('utf-8', 'replace')}")

    try:
        data = json.loads(body)
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
    return choice, message


def _fallback_system(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Describe the tools in the system prompt for servers without native tool calling."""
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


class OpenAIChatAgent(ChatAgent):
    """Chat-completions agent. ``act`` sends the conversation so far and returns the canonical action.

    Args:
        model: Model name as the server knows it.
        base_url: Server root including ``/v1``.
        api_key: Bearer token (or None).
        temperature: Sampling temperature (0: greedy, as in the SABench paper).
        max_tokens: Completion budget per turn.
        timeout: Seconds per request, in all: connecting, waiting and reading the whole reply (a server
            that drips its body slowly is cut off too).
        max_retries: Retries on timeouts, connection errors, 429 and 5xx.
        backoff: First retry delay in seconds (doubles each retry).
        native_tools: Send ``tools``; falls back to JSON-in-text if the server rejects them.
        max_concurrency: Requests in flight at once across every clone of this agent.
        max_response_bytes: A longer reply is a ``response_too_large`` system outcome, never read whole.
        max_failed_episodes: After this many episodes in a row ended by connection errors or timeouts,
            the remaining episodes fail at once (``provider_down``) instead of waiting out their retries;
            a rerun retries them.
    """

    name: ClassVar[str] = "openai"
    transport_keys: ClassVar[tuple[str, ...]] = ("base_url",)

    def __init__(
        self,
        model: str,
        base_url: str = "http://127.0.0.1:8000/v1",
        *,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 1.0,
        native_tools: bool = True,
        max_concurrency: int = 8,
        extra_body: dict[str, Any] | None = None,
        max_response_bytes: int = 4 * 2**20,
        max_failed_episodes: int = 3,
    ):
        import httpx  # the "llm" extra

        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.native_tools = native_tools
        self.extra_body = extra_body or {}
        self._client = httpx.Client(
            timeout=timeout, headers={"Authorization": f"Bearer {api_key}"} if api_key else {}
        )
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._native = {"value": native_tools}  # shared by clones: one fallback switch for the server
        self.max_response_bytes = max_response_bytes
        self.max_failed_episodes = max_failed_episodes
        self._health = {"failed_in_a_row": 0}  # shared by clones: the provider's recent record
        self.messages: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.last_raw: Any = None
        self.seed: int | None = None

    def describe(self) -> dict[str, Any]:
        return {
            "name": f"openai:{self.model}",
            "base_url": self.base_url,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self.conversation(info)  # clones share the HTTP client, the concurrency limit and the fallback switch
        message = self._complete()
        self.last_raw = message
        return self.to_action(message)

    # -- HTTP ----------------------------------------------------------------------------------------
    def _payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            **self.extra_body,
        }
        if self.seed is not None:
            payload["seed"] = self.seed
        if self._native["value"] or not self.tools:
            payload["messages"] = self.messages
            if self.tools:  # an env (or a prompted format) without tools sends none: some servers reject []
                payload["tools"] = self.tools
        else:
            payload["messages"] = _fallback_system(self.messages, self.tools)
        return payload

    def complete(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """One chat completion of ``messages`` without tools (judges and other one-shot prompts), with
        the agent's retries, limits and :class:`ProviderError` outcomes; returns the assistant message."""
        twin = self.clone()
        twin.messages, twin.tools = [dict(m) for m in messages], []
        return twin._complete()

    def _complete(self) -> dict[str, Any]:
        """One completion, with retries; every failure is a :class:`ProviderError` (a system-level
        outcome), never an exception from a malformed, huge or endless reply."""
        health = self._health
        if health["failed_in_a_row"] >= self.max_failed_episodes:
            raise ProviderError(
                "provider_down",
                f"skipped: the last {health['failed_in_a_row']} requests failed to reach the provider "
                f"at {self.base_url} (rerun to retry)",
            )
        try:
            message = self._attempts()
        except ProviderError as err:
            if err.kind in ("connection", "timeout"):
                health["failed_in_a_row"] += 1
            raise
        health["failed_in_a_row"] = 0
        return message

    def _attempts(self) -> dict[str, Any]:
        delay = self.backoff
        last = ProviderError("connection", "no attempt made")
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(delay)
                delay *= 2
            try:
                with self._slots:
                    status, body = self._post(self._payload())
            except ProviderError as err:
                if err.kind in ("connection", "timeout"):
                    last = err
                    continue
                raise
            text = body[:300].decode("utf-8", "replace")
            if status == 400 and self._native["value"] and "tool" in text.lower():
                self._native["value"] = False  # the server does not take tools: JSON-in-text from now on
                continue
            if status in RETRY_STATUS:
                last = ProviderError(f"http_{status}", text)
                continue
            if status >= 400:
                raise ProviderError(f"http_{status}", text)
            choice, message = _read_choice(body)
            if choice.get("finish_reason") == "content_filter":
                raise ProviderError("content_filter", "the provider's content filter stopped the completion")
            return message
        raise last

    def _post(self, payload: dict[str, Any]) -> tuple[int, bytes]:
        """POST the request and read the reply within ``timeout`` seconds and ``max_response_bytes``."""
        import httpx

        deadline = time.monotonic() + self.timeout
        try:
            with self._client.stream("POST", f"{self.base_url}/chat/completions", json=payload) as response:
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
