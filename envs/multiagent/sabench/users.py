"""SABench's simulated user: what they know (their request and the item they meant), what they may say
(which item they meant, nothing about how to do it), how a reply is checked, and the deterministic
scripted user that answers with the intended target.

A reply names a candidate when it uses a word of that candidate's description (its title or subject,
sender, date, time, place, id, the titles of what it links to) that no other candidate's description
has: "the Marketing one" names "Budget review — Marketing", not "Budget review — Engineering". An
answer must name the intended target and no other candidate; a reply that names none, another or
several is off-script. A reply that names a tool or a snake_case argument, or holds a JSON tool call,
tells the assistant how to act, which the user does not know and may not say: a leak. Function words
never name anything.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar

from tooltrap.envs.core import Agent, TaskCache
from tooltrap.envs.sabench import SABenchTask, benchmark

from ..base import STOP_TOKEN, SimulatorErrorKind

#: words that never tell candidates apart, however a title spells them
FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "for",
        "from",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "meant",
        "mean",
        "my",
        "no",
        "not",
        "of",
        "on",
        "one",
        "or",
        "our",
        "please",
        "re",
        "that",
        "the",
        "this",
        "to",
        "was",
        "we",
        "with",
        "yes",
        "you",
        "your",
    ]
)
_WORD = re.compile(r"[a-z0-9]+")


def _record(task: SABenchTask, ref: str) -> dict[str, Any]:
    collection, _, entity_id = ref.partition("/")
    return task.initial_state.collections.get(collection, {}).get(entity_id, {})


def _when(stamp: str) -> str:
    """``2026-02-26T11:30:00`` as ``2026-02-26 11:30``."""
    day, _, time = str(stamp).partition("T")
    return f"{day} {time[:5]}".strip()


def describe(task: SABenchTask, ref: str) -> str:
    """How the user names a candidate: what a person sees of it (title or subject, sender, when)."""
    collection = ref.partition("/")[0]
    record = _record(task, ref)
    if collection == "events":
        return f"“{record.get('title', '')}” on {record.get('date', '')} at {record.get('start', '')}"
    if collection == "messages":
        return f"the email “{record.get('subject', '')}” from {record.get('sender', '')} ({_when(record.get('date', ''))})"
    if collection == "tickets":
        return f"{record.get('id', '')} “{record.get('title', '')}”"
    return ref


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in FUNCTION_WORDS}


def _description_words(task: SABenchTask, ref: str) -> set[str]:
    """Every word a person could name the candidate by: its description, its place, requester, and the
    titles and ids of what it links to."""
    record = _record(task, ref)
    parts = [describe(task, ref), ref.partition("/")[2]]
    parts += [str(record.get(k, "")) for k in ("location", "requester", "sender")]
    for link in record.get("links") or []:
        if isinstance(link, dict) and link.get("target"):
            target = str(link["target"])
            linked = _record(task, target)
            parts += [target.partition("/")[2], str(linked.get("title", linked.get("subject", "")))]
    return _words(" ".join(parts))


_HANDLES = TaskCache()


def handles(task: SABenchTask) -> dict[str, frozenset[str]]:
    """Per candidate, the words that name it and no other candidate (cached per task)."""
    found = _HANDLES.lookup(task, "handles")
    if found is None:
        words = {ref: _description_words(task, ref) for ref in task.candidates}
        found = {
            ref: frozenset(w - set().union(*(o for r, o in words.items() if r != ref)))
            for ref, w in words.items()
        }
        _HANDLES.store(task, "handles", found)
    return found


def named(task: SABenchTask, reply: str) -> list[str]:
    """The candidates ``reply`` names (in the task's order)."""
    words = _words(reply)
    return [ref for ref, own in handles(task).items() if words & own]


@cache
def _tool_words() -> frozenset[str]:
    """Tool names and snake_case argument names: how to act, which a user does not dictate."""
    toolset = benchmark().full_toolset
    names = set(toolset.specs)
    for spec in toolset.specs.values():
        names |= {p for p in spec.parameters.get("properties", {}) if "_" in p}
    return frozenset(names)


_JSON_CALL = re.compile(r"\{\s*\"(name|arguments)\"\s*:")


def leaked(reply: str) -> str | None:
    """What in ``reply`` says how to do the task (a tool or argument name, a JSON call), or None."""
    if _JSON_CALL.search(reply):
        return "a JSON tool call"
    lowered = reply.lower()
    for name in sorted(_tool_words()):
        if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", lowered):
            return f"the tool vocabulary {name!r}"
    return None


def scripted_answer(task: SABenchTask, target: str | None) -> str:
    """The authored answer: the intended target by its description; on a clear task, go ahead."""
    if target is None:
        return "Please go ahead with what I asked, as I asked it."
    return f"I meant {describe(task, target)}."


class SABenchUserScript:
    """The :class:`~tooltrap.envs.multiagent.base.UserScript` of SABench's dialogue."""

    def intended(self, variant: Any) -> str | None:
        return getattr(variant, "intended", None)

    def briefing(self, task: SABenchTask, variant: Any) -> str:
        context = task.initial_state.context
        who = context.get("user", "the user")
        target = self.intended(variant)
        lines = [
            f"You are {who}. You asked your assistant, who acts on your email, calendar and tickets:",
            f"“{task.instruction}”",
        ]
        if target is not None:
            lines += [
                f"By that you meant {describe(task, target)}; the assistant cannot tell which item you "
                "mean unless it asks.",
                "When it asks, say which one you meant, in your own words (its title, subject, sender, date "
                "or time) and only that one: nothing about how to do it (no tool names, arguments or "
                "steps).",
            ]
        else:
            lines.append("Your request is clear as you wrote it: if the assistant asks, tell it to go ahead.")
        lines.append(f"To end the conversation, send {STOP_TOKEN}.")
        return "\n".join(lines)

    def user_info(self, task: SABenchTask, variant: Any) -> dict[str, Any]:
        target = self.intended(variant)
        return {
            "intended": None if target is None else {"ref": target, "description": describe(task, target)},
            "answer": scripted_answer(task, target),
        }

    def check_reply(
        self, task: SABenchTask, variant: Any, question: str, reply: str
    ) -> tuple[SimulatorErrorKind, str] | None:
        leak = leaked(reply)
        if leak is not None:
            return SimulatorErrorKind.LEAK, (
                f"it names {leak}: the user says which item they meant, never how to act on it."
            )
        target = self.intended(variant)
        if target is None:
            return None  # a clear request: any reply that tells nothing of how to act may go through
        names = named(task, reply)
        if names == [target]:
            return None
        if not names:
            problem = "it does not say which item you meant"
        elif target not in names:
            problem = f"it names {describe(task, names[0])}, not the item you meant"
        else:
            others = [describe(task, n) for n in names if n != target]
            problem = f"it also names {', '.join(others)}: name only the item you meant"
        return SimulatorErrorKind.OFF_SCRIPT, f"{problem} ({describe(task, target)})."

    def user_reward(self, verdict: Mapping[str, Any]) -> dict[str, float]:
        """The user wants their request done: the goal, as the judge decides it."""
        return {"goal": 1.0 if verdict.get("goal") else 0.0}


class ScriptedUser(Agent):
    """The deterministic default user: answers every question with the authored answer (the intended
    target by its description; on a clear task, "go ahead"). The assistant's final answer ends the
    episode, so the user never has to stop it; ``stop_after`` questions answered, it sends the stop
    token instead (a user who gives up)."""

    name: ClassVar[str] = "scripted-user"

    def __init__(self, stop_after: int | None = None):
        self.stop_after = stop_after
        self.answer = ""
        self.answered = 0

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        self.answer = str(info.get("answer", ""))
        self.answered = 0

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self.stop_after is not None and self.answered >= self.stop_after:
            return STOP_TOKEN
        self.answered += 1
        return self.answer
