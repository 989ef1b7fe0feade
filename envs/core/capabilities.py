"""Opt-in capabilities of a benchmark: behaviour that only some benchmarks have, which generic code (the
env, training demonstrations, defenses) uses when the benchmark provides it. A benchmark opts in by
defining the member; generic code checks with ``isinstance(benchmark, Capability)`` and otherwise
behaves as if the benchmark had said nothing (no follow-up turn, no over-broad call, no look-up, no
note). None of this is part of :class:`~tooltrap.envs.core.benchmark.Benchmark` itself, so that the
contract a new benchmark must read stays small."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from .tasks import ToolCall
from .trace import Trace


@runtime_checkable
class FollowUpTurns(Protocol):
    """A scripted user answers the agent's final answers (multi-turn conversations): after an answer,
    the env asks for the user's next turn and, when there is one, the episode goes on with it."""

    def follow_up(self, task: Any, variant: Any, trace: Trace) -> str | None:
        """The user's next turn after the agent's final answer (``trace.user_turns`` holds the turns so
        far), or None to end the episode there."""
        ...


@runtime_checkable
class CommitEndsEpisode(Protocol):
    """A successful ``commit`` call ends the episode (its disposition is ``"commit"``): a consequential
    action is the agent's decision, nothing after it can undo it."""

    def commit_ends_episode(self, task: Any, variant: Any) -> bool:
        """Whether a successful commit ends an episode of ``task`` played as ``variant``."""
        ...


@runtime_checkable
class ShorterPromptHint(Protocol):
    """The benchmark can shorten its prompts: the env names how when a task's prompt exceeds the
    observation space."""

    shorter_prompt_hint: str


@runtime_checkable
class OverbroadCalls(Protocol):
    """The benchmark knows which calls reach further than a task needs (a least-privilege check that
    gates such as the ``tgcc`` trust gate apply)."""

    def overbroad(self, name: str, arguments: Any) -> bool:
        """Whether the call ``name(arguments)`` reaches further than a task needs. Gates ask before
        validation: ``arguments`` is the agent's JSON as sent (any type, any nesting); never raise."""
        ...


@runtime_checkable
class IdLookups(Protocol):
    """The benchmark's prompts may not show every id a gold call uses, or every record a gold text names:
    training demonstrations insert a read call that finds it first (see
    :func:`tooltrap.training.gold_rows`)."""

    def lookup_calls(self, task: Any, argument: str, value: str) -> list[ToolCall]:
        """Read calls a careful agent would make to find ``value`` (the id passed as ``argument``, e.g.
        ``event_id``) when it is not on screen yet, in order of preference."""
        ...

    def record_lookup_calls(self, task: Any, collection: str, record_id: str) -> list[ToolCall]:
        """Read calls that show the record ``record_id`` of ``collection`` (of the task's initial state),
        in order of preference: what a careful agent reads before its text names the record's title."""
        ...


@runtime_checkable
class TrapNotes(Protocol):
    """The benchmark can say, in one sentence, what unsafe action a task's safe solution avoids (for
    demonstrations that say it: ``gold_rows(..., trap_turn=True)``)."""

    def trap_note(self, task: Any) -> str | None:
        """The sentence for ``task``, or None when there is none."""
        ...


__all__ = [
    "CommitEndsEpisode",
    "FollowUpTurns",
    "IdLookups",
    "OverbroadCalls",
    "ShorterPromptHint",
    "TrapNotes",
]
