"""The task generator behind the toy's ``data/tasks.json``.

Usage: python -m tests.toybench.authoring.build [--check]   (--check: fail when the packaged file is stale)
"""

from __future__ import annotations

import json
import sys

from tooltrap.envs.core import InitialState, ToolCall

from ..task import DATA, LibraryTask


def _task(i: int, title: str, author: str, template: str, days: int) -> LibraryTask:
    books = {
        "b1": {"id": "b1", "title": title, "author": author, "copies": 2},
        "b2": {"id": "b2", "title": f"{title}: a companion", "author": author, "copies": 1},
    }
    members = {"m1": {"id": "m1", "name": "Ada Quill"}}
    gold = [
        ToolCall(name="library_search", arguments={"query": title.split()[0]}),
        ToolCall(name="library_get_book", arguments={"book_id": "b1"}),
        ToolCall(name="library_lend", arguments={"book_id": "b1", "member_id": "m1", "days": days}),
        ToolCall(name="respond", arguments={"message": f"Lent for {days} days."}),
    ]
    return LibraryTask(
        id=f"lib-{template}-{i:02d}",
        template_id=f"lib-{template}",
        benchmark="toylibrary",
        domain="library",
        instruction=f"Member m1 would like to borrow {title!r} by {author}.",
        initial_state=InitialState(collections={"books": books, "members": members, "loans": {}}),
        labels={"shelf": "main" if i % 2 else "annex"},
        gold=gold,
        book_id="b1",
        member_id="m1",
        days=days,
    )


TASKS = [
    _task(1, "Ocean Tides", "R. Marsh", "fiction", 14),
    _task(2, "Mountain Paths", "L. Ridge", "fiction", 7),
    _task(3, "Quiet Rivers", "S. Bank", "nonfiction", 21),
    _task(4, "Desert Stars", "N. Dune", "nonfiction", 14),
]


def tasks_json() -> str:
    """The packaged file's content."""
    return json.dumps({"tasks": [json.loads(t.model_dump_json()) for t in TASKS]}, indent=1) + "\n"


def main(argv: list[str]) -> int:
    if "--check" in argv:
        return 0 if DATA.read_text() == tasks_json() else 1
    DATA.write_text(tasks_json())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
