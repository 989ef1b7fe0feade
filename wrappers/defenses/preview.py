"""Structured write preview: a write first returns exactly what would change; it commits only when the
identical call is sent again."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym

from tooltrap.envs.core import Intercept, Task, ToolEnv, Variant

from .base import Defense, register_defense
from .common import describe, is_write, simulate

#: the benchmark whose paper defines the write preview
BENCHMARKS = ("sabench",)


def _key(name: str, arguments: Any) -> str:
    return name + json.dumps(arguments, sort_keys=True)


@register_defense("preview", benchmarks=BENCHMARKS)
class WritePreview(Defense):
    """Structured write preview: a write returns what would change and commits only when sent again.

    Every write returns a structured preview (entities and fields that would change, who would be
    notified, whether anything leaves the organization) and changes nothing; sending the identical
    call again commits it. The preview is computed by executing the call on a fork of the state, so
    it is exact.
    """

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.pending: set[str] = set()

    def on_reset(self, env: ToolEnv, task: Task, variant: Variant) -> None:
        self.pending = set()

    def before_call(self, env: ToolEnv, name: str, arguments: Any) -> tuple[str, Any] | Intercept:
        if not is_write(env, name):
            return name, arguments
        key = _key(name, arguments)
        if key in self.pending:
            self.pending.discard(key)
            return name, arguments  # the explicit second call commits
        outcome, executor = simulate(env, name, arguments)
        if not outcome.ok:
            return name, arguments  # let the real call report its error
        self.pending.add(key)
        effects = describe(outcome.writes, executor)
        notified = sorted({e["notifies"] for e in effects if "notifies" in e})
        return Intercept(
            {
                "preview": True,
                "committed": False,
                "would_change": [e for e in effects if "notifies" not in e],
                "would_notify": notified,
                "reaches_outside_organization": any(e["external"] for e in effects),
                "to_commit": "send the identical call again",
            },
            kind="preview",
            reason="write previewed, not committed",
        )
