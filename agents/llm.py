"""An agent for any OpenAI-compatible chat-completions server (vLLM, hosted providers).

Native tool calling by default (``tools=`` in the request, ``tool_calls`` in the answer), with a
JSON-in-text fallback for servers that reject ``tools``; temperature 0 by default; timeouts, retries
with exponential backoff, and a concurrency limit shared by all clones of the agent. The HTTP side is
the provider module :mod:`tooltrap.wrappers.provider` (shared with the LLM judges). Provider errors and
content-filter refusals raise :class:`ProviderError` (re-exported here), which the evaluation runner
records as a system-level outcome, never as a model action.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tooltrap.wrappers.provider import ChatModel, ProviderError

from .base import ChatAgent

__all__ = ["OpenAIChatAgent", "ProviderError"]


class OpenAIChatAgent(ChatAgent, ChatModel):
    """Chat-completions agent. ``act`` sends the conversation so far and returns the canonical action.

    Args:
        model: Model name as the server knows it.
        base_url: Server root including ``/v1``.
        api_key: Bearer token (or None).
        temperature: Sampling temperature (0: greedy, the usual setting of benchmark papers).
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
        ChatModel.__init__(
            self,
            model,
            base_url,
            api_key=api_key,
            temperature=temperature,
            max_tokens=max_tokens,
            extra_body=extra_body,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            native_tools=native_tools,
            max_concurrency=max_concurrency,
            max_response_bytes=max_response_bytes,
            max_failed_episodes=max_failed_episodes,
        )
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
        self.conversation(info)  # clones share the client: connections, the concurrency limit, the switches
        reply = self.reply(self.messages, self.tools, seed=self.seed)
        # the reply was made safe as it was read (provider.read_choice): the count goes to the trace step
        self.last_raw, self.last_escaped = reply.message, reply.escaped
        return self.to_action(reply.message)
