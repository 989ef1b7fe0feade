"""Scripted assistants of SABench's dialogue, by name (:data:`ASSISTANTS`): the careful reference and two
brackets around it.

* ``gold``: asks only when the request is ambiguous (the task's authored question), then, told which
  item, plays the careful calls for it (the intent narrowed to it) and answers; a clear request it
  does at once, as the single-agent gold does.
* ``act-first``: never asks: acts on the first plausible candidate with every tool default (the
  single-agent act-first), then answers. Every write on an ambiguous task is made before an answer.
* ``clarify-then-act``: always asks first, even on a clear request, then acts as gold does: the
  cost of asking when it is not needed (unnecessary questions) beside gold.

They are privileged references (they read the task, as the single-agent scripted baselines do), but
never the episode's variant: the item the user meant reaches them only through the user's answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

from tooltrap.envs.core import Agent, ToolCall, UnknownNameError, final_answer, terminal_call
from tooltrap.envs.core.agent import DECLINE_TEXT
from tooltrap.envs.core.errors import EnvUsageError
from tooltrap.envs.sabench import SABenchTask

from .clarified import clarification
from .users import named


def _action(call: ToolCall | dict[str, Any]) -> str:
    return call.to_action() if isinstance(call, ToolCall) else json.dumps(call)


class DialogueAssistant(Agent):
    """A scripted assistant of the dialogue: asks (or not), then plays a queue of calls and answers."""

    privileged: ClassVar[bool] = True
    #: ask on every task, not only on ambiguous ones
    ask_always: ClassVar[bool] = False
    #: ask at all
    asks: ClassVar[bool] = True

    def __init__(self) -> None:
        self.task: SABenchTask | None = None
        self.info: dict[str, Any] = {}
        self.queue: list[str] | None = None
        self.questions = 0

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        if task is None:
            raise EnvUsageError(f"The {self.name} dialogue baseline is privileged: it needs the task.")
        self.task, self.info, self.queue, self.questions = task, info, None, 0

    def _ask(self, question: str) -> str:
        call = terminal_call(self.info, ("clarify",), question)
        if call is None:
            raise EnvUsageError(
                "The env has no tool that asks the user (a terminal tool ending as 'clarify')."
            )
        self.questions += 1
        return json.dumps(call)

    def _plan(self, answer: str | None) -> list[str]:
        """The calls once the user has answered (``answer``; None when nothing was asked)."""
        task = self.task
        assert task is not None
        if not task.labels.ambiguous:
            calls = [_action(c) for c in task.gold]
            ends = {n for n in self.info.get("terminal_tools", {})}
            if not any(c.name in ends for c in task.gold):
                calls.append(final_answer(self.info))
            return calls
        names = named(task, answer or "")
        if len(names) != 1:
            return []  # the answer did not say which item: ask again
        return [_action(c) for c in clarification(task, names[0]).calls] + [final_answer(self.info)]

    def act(self, observation: str, info: dict[str, Any]) -> str:
        task = self.task
        assert task is not None
        if self.queue is None:
            if self.asks and (self.ask_always or task.labels.ambiguous) and self.questions == 0:
                question = task.gold[0].arguments.get("question") if task.labels.ambiguous else None
                return self._ask(str(question or DECLINE_TEXT))
            answer = next(
                (m["content"] for m in reversed(info.get("messages", [])) if m["role"] == "user"), None
            )
            planned = self._plan(answer if self.questions else None)
            if not planned:
                return self._ask(DECLINE_TEXT) if self.questions < 3 else final_answer(self.info)
            self.queue = planned
        return self.queue.pop(0) if self.queue else final_answer(self.info)


class DialogueGold(DialogueAssistant):
    """Asks only when the request is ambiguous, then plays the careful calls for the named item."""

    name = "gold"


class ClarifyThenAct(DialogueAssistant):
    """Always asks first, then acts as gold does."""

    name = "clarify-then-act"
    ask_always = True


class ActFirst(DialogueAssistant):
    """Never asks: the intent on the first plausible candidate with every tool default, then answers."""

    name = "act-first"
    asks = False

    def _plan(self, answer: str | None) -> list[str]:
        assert self.task is not None
        return [_action(c) for c in self.task.intent_calls()] + [final_answer(self.info)]


#: name -> factory of the dialogue's scripted assistants
ASSISTANTS: dict[str, Callable[[], Agent]] = {
    cls.name: cls for cls in (DialogueGold, ActFirst, ClarifyThenAct)
}


def make_assistant(name: str) -> Agent:
    """A scripted assistant of the dialogue by name (``gold``, ``act-first``, ``clarify-then-act``)."""
    factory = ASSISTANTS.get(name)
    if factory is None:
        raise UnknownNameError("dialogue assistant", name, list(ASSISTANTS))
    return factory()
