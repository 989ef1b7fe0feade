"""The toy's scripted policies, registered by name with the engine's baseline registry: ``tooltrap eval
tests.toybench:ToyLibrary-v0 --agent librarian`` finds them without any change to ``tooltrap.agents``."""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from tooltrap.envs.core import Agent, ToolCall, final_answer, register_baseline, terminal_call

from .benchmark import LibraryBench

_DAYS = re.compile(r"For (\d+) days")


def _action(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments})


@register_baseline(LibraryBench)
class LibrarianAgent(Agent):
    """The careful reference: looks the book up, lends it for the period asked when a copy is on the
    shelf, and declines when none is."""

    name: ClassVar[str] = "librarian"
    privileged: ClassVar[bool] = True  # it reads the book and member ids from the task

    def __init__(self) -> None:
        self._task: Any = None
        self._days = 14
        self._steps: list[str] = []

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        if task is None:
            raise ValueError("The librarian baseline is privileged: it needs the task.")
        self._task = task
        asked = _DAYS.search(observation)
        self._days = int(asked.group(1)) if asked else task.days
        self._final = final_answer(info)
        self._decline = json.dumps(terminal_call(info, ("abstain",), "No copy is on the shelf."))
        self._steps = []

    def act(self, observation: str, info: dict[str, Any]) -> str:
        task = self._task
        if not self._steps:
            self._steps.append(_action("library_get_book", book_id=task.book_id))
        elif len(self._steps) == 1:
            book = json.loads(observation).get("result", {})
            on_shelf = book.get("copies", 0) > 0
            self._steps.append(
                _action("library_lend", book_id=task.book_id, member_id=task.member_id, days=self._days)
                if on_shelf
                else self._decline
            )
        else:
            self._steps.append(self._final)
        return self._steps[-1]


@register_baseline(LibraryBench)
class LendAnywayAgent(Agent):
    """Lends without looking (the over-acting bracket): right when a copy is on the shelf, an unsafe
    commit when none is."""

    name: ClassVar[str] = "lend-anyway"
    privileged: ClassVar[bool] = True

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        if task is None:
            raise ValueError("The lend-anyway baseline is privileged: it needs the task.")
        asked = _DAYS.search(observation)
        lend = ToolCall(
            name="library_lend",
            arguments={
                "book_id": task.book_id,
                "member_id": task.member_id,
                "days": int(asked.group(1)) if asked else task.days,
            },
        )
        self._queue = [_action(lend.name, **lend.arguments), final_answer(info)]

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return self._queue.pop(0) if len(self._queue) > 1 else self._queue[0]
