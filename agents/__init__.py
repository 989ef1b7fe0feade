"""Policies: the Agent protocol, scripted baselines and (later) LLM adapters."""

from __future__ import annotations

from typing import Any

from tooltrap.envs.core import UnknownNameError

from .base import Agent
from .scripted import ActFirstAgent, ClarifyAgent, GoldAgent, RandomAgent

AGENTS: dict[str, type[Agent]] = {
    "gold": GoldAgent,
    "clarify": ClarifyAgent,
    "act-first": ActFirstAgent,
    "random": RandomAgent,
}


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Build a registered agent by name (``gold``, ``clarify``, ``act-first``, ``random``)."""
    try:
        cls = AGENTS[name]
    except KeyError:
        raise UnknownNameError("agent", name, AGENTS) from None
    return cls(**kwargs)


__all__ = ["AGENTS", "ActFirstAgent", "Agent", "ClarifyAgent", "GoldAgent", "RandomAgent", "make_agent"]
