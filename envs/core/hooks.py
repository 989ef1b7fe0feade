"""Extension points inside ``reset`` / ``step``: hooks, and what a hook may return instead of passing a
call on (a rewrite or an interception)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from .tasks import Task
from .trace import CallRecord, Trace
from .variants import Variant

if TYPE_CHECKING:
    from .env import ToolEnv


@dataclass(slots=True)
class Intercept:
    """Returned by a hook's ``before_call`` to answer a call without executing it (gates, previews).

    Attributes:
        result: The result (``ok``) or the error dict the agent sees.
        ok: Whether the call counts as successful.
        kind: Who intercepted (``gate``, ``preview``, ``trust_gate`` ...): counted in the trace.
        reason: Why, in a few words (kept in the call record).
        ends_as: End the episode with this disposition (``escalate``: handed to a human).
    """

    result: Any
    ok: bool = True
    kind: str = "intercept"
    reason: str = ""
    ends_as: str | None = None


@dataclass(slots=True)
class Rewrite:
    """Returned by a hook's ``before_call`` to execute another call than the agent sent (parameter
    injection). The agent's own call stays in the record (``sent_name`` / ``sent_arguments``)."""

    name: str
    arguments: Any
    kind: str = "rewrite"
    reason: str = ""


class Hook:
    """Extension point inside ``reset`` / ``step``: parameter injection, observation masking,
    adversarial content, gates, interceptors. A defense wrapper activates its hook for the calls that
    pass through it (``env.unwrapped.using_hooks``); ``env.unwrapped.add_hook`` installs one for good.
    All methods are optional no-ops."""

    def on_reset(self, env: ToolEnv, task: Task, variant: Variant) -> None:
        """Called after the state is built, before the first observation."""

    def before_call(self, env: ToolEnv, name: str, arguments: Any) -> tuple[str, Any] | Rewrite | Intercept:
        """Pass a parsed call on (return it), rewrite it (:class:`Rewrite`), or answer it
        (:class:`Intercept`)."""
        return name, arguments

    def after_call(self, env: ToolEnv, record: CallRecord) -> None:
        """Inspect or rewrite ``record.result`` / ``record.error`` before it is rendered (append what
        you remove to ``record.hidden``)."""

    def before_judge(self, env: ToolEnv, trace: Trace) -> None:
        """Called once the episode has ended, before the judge: the last chance to act on the final
        answer (``trace.override("abstain", kind=..., reason=...)``)."""


def abort_episode(env: gym.Env, reason: str) -> dict[str, Any]:
    """End ``env``'s episode from outside (provider error, trainer stop) through its wrapper stack, so
    that the defenses' before-judge hooks still run. Returns the final info (verdict, reward,
    components)."""
    return env.get_wrapper_attr("abort")(reason)
