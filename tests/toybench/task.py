"""The toy's task and variant models, and its packaged tasks (``data/tasks.json``, written by
``authoring``)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

from tooltrap.envs.core import Task, TaskSet, ToolCall, Variant, load_tasks

DATA = Path(__file__).parent / "data" / "tasks.json"


class StockVariant(Variant):
    stock: Literal["available", "out"] = "available"
    days: int | None = None  # the loan period asked for; None: the task's own


class LibraryTask(Task):
    book_id: str
    member_id: str
    days: int = 14

    def intent_calls(self) -> list[ToolCall]:
        """The request in tool terms with defaults accepted (for the act-first baseline)."""
        return [
            ToolCall(name="library_lend", arguments={"book_id": self.book_id, "member_id": self.member_id})
        ]


@cache
def packaged_tasks() -> TaskSet[LibraryTask]:
    """The tasks shipped in ``data/tasks.json``."""
    return load_tasks(DATA, LibraryTask)
