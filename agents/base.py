"""The base of model agents (:class:`ChatAgent`). The Agent protocol itself lives in the engine
(:class:`tooltrap.envs.core.Agent`, re-exported here) so that benchmarks' baselines import only the
engine."""

from __future__ import annotations

from typing import Any, ClassVar

from tooltrap.envs.core import Agent


class ChatAgent(Agent):
    """Base of model agents: keeps the episode's conversation (the env's chat messages) and tool schemas.

    ``clone`` is a shallow copy with a fresh conversation, so clones share heavy resources (a model, an
    HTTP client, a concurrency limit).
    """

    writes_text: ClassVar[bool] = True
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    answer: tuple[str, str] | None = None
    seed: int | None = None

    def clone(self) -> ChatAgent:
        import copy

        twin = copy.copy(self)
        twin.messages, twin.tools, twin.last_raw, twin._fresh = [], [], None, True
        twin.last_escaped = 0
        return twin

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        from tooltrap.wrappers.formats import answer_tool

        self.messages = [dict(m) for m in info["messages"]]
        self.tools = list(info.get("tools", []))
        #: where a plain-text final answer goes (the env's answer tool and its text argument)
        self.answer = answer_tool(info)
        self.seed = seed
        self._fresh = True

    def to_action(self, output: str | dict[str, Any]) -> str:
        """The env action for a model output (text or an assistant message), recording its format. An
        episode without tool schemas (a prompted format such as ReAct parses the reply itself) gets the
        visible text as it is."""
        from tooltrap.wrappers.formats import message_text, parse_completion_format

        if not self.tools and self.answer is None:
            self.last_format = "text"
            return message_text(output.get("content")) if isinstance(output, dict) else output
        action, self.last_format = parse_completion_format(output, answer=self.answer)
        return action

    def conversation(self, info: dict[str, Any], convert: Any = dict) -> list[dict[str, Any]]:
        """The conversation so far: the prompt, then every step's messages (``info["messages"]``)."""
        if not getattr(self, "_fresh", True):
            self.messages.extend(convert(m) for m in info.get("messages", []))
        self._fresh = False
        return self.messages
