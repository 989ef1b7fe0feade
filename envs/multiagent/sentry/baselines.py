"""Deterministic scripted policies of the arena's roles (the defaults): the attacker that plays the
scenario's own placement, and the trivial gates. The TGCC rule as a gate is
:class:`tooltrap.wrappers.defenses.TGCCGatePolicy` (it needs the defense's injection detector, which
lives in ``wrappers/``). The assistants are SentryBench's scripted baselines
(:mod:`tooltrap.envs.sentry.baselines`: ``careful``, ``obedient``, ``cautious``, ``form-sensitive``).
"""

from __future__ import annotations

import json
from typing import Any

from tooltrap.envs.core import Agent, UnknownNameError
from tooltrap.envs.sentry.baselines import (
    CarefulOperatorAgent,
    CautiousAgent,
    FormSensitiveAgent,
    InstructedAgent,
    ObedientAgent,
)

ASSISTANTS: dict[str, type[InstructedAgent]] = {
    "careful": CarefulOperatorAgent,
    "obedient": ObedientAgent,
    "cautious": CautiousAgent,
    "form-sensitive": FormSensitiveAgent,
}


def make_assistant(name: str) -> InstructedAgent:
    """A SentryBench scripted assistant by name (privileged: it is handed the planted scenario)."""
    if name not in ASSISTANTS:
        raise UnknownNameError("arena assistant", name, list(ASSISTANTS))
    return ASSISTANTS[name]()


class ScenarioAttacker(Agent):
    """Plays the scenario's own payload at its own placement (option 0): the single-agent attack."""

    name = "scenario"

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        pass

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return json.dumps({"option": 0})


class ApproveAllGate(Agent):
    """Approves every proposal: no defense."""

    name = "approve-all"

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return "approve"


class RejectAllGate(Agent):
    """Rejects every consequential call (and lets an unacted case close: a close can only be approved or
    escalated): the over-refusing extreme."""

    name = "reject-all"

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return "approve" if info.get("proposal", {}).get("kind") == "close" else "reject"


class EscalateAllGate(Agent):
    """Hands every proposal to a human (escalate): no call runs unseen, and every case waits for a person.
    The gate's reward charges the handoff of each genuine emergency it delays."""

    name = "escalate-all"

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return "escalate"
