"""Policies: the Agent protocol, scripted baselines, and LLM agents (OpenAI-compatible HTTP, local
transformers)."""

from __future__ import annotations

import os
from typing import Any

from tooltrap.envs.core import UnknownNameError

from .base import Agent
from .careful import CarefulAgent, TrustingAgent
from .evidence import RecoverThenMisactAgent
from .instructed import CautiousAgent, FormSensitiveAgent, ObedientAgent
from .propagation import AbstainingAgent, FabricatingAgent, GuessingAgent, RejectingAgent
from .scripted import ActFirstAgent, ClarifyAgent, GoldAgent, RandomAgent, RefuseAgent

AGENTS: dict[str, type[Agent]] = {
    "gold": GoldAgent,
    "clarify": ClarifyAgent,
    "act-first": ActFirstAgent,
    "random": RandomAgent,
    "always-refuse": RefuseAgent,
    "careful": CarefulAgent,
    "trusting": TrustingAgent,
    "recover-then-misact": RecoverThenMisactAgent,
    "obedient": ObedientAgent,
    "cautious": CautiousAgent,
    "form-sensitive": FormSensitiveAgent,
    "rejecting": RejectingAgent,
    "guessing": GuessingAgent,
    "fabricating": FabricatingAgent,
    "abstaining": AbstainingAgent,
}
PREFIXES = ("hf:", "openai:")


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Build an agent from its spec.

    ``gold``, ``clarify``, ``act-first``, ``random``, ``always-refuse``: the scripted baselines;
    ``careful`` (the careful reference of EpiSEM and SentryBench tasks), ``trusting`` (EpiSEM's and
    AgentProp's), ``recover-then-misact`` (EpiSEM's evidence baselines), ``obedient``, ``cautious``,
    ``form-sensitive`` (SentryBench's instruction baselines), ``rejecting``, ``guessing``,
    ``fabricating``, ``abstaining`` (AgentProp's propagation baselines). ``hf:PATH``: a local
    transformers model (checkpoint folder). ``openai:MODEL``: an OpenAI-compatible server; pass
    ``base_url`` (default ``$OPENAI_BASE_URL`` or http://127.0.0.1:8000/v1) and ``api_key`` (default
    ``$OPENAI_API_KEY``).
    """
    if name.startswith("hf:"):
        from .hf import TransformersAgent

        return TransformersAgent(name[3:], **kwargs)
    if name.startswith("openai:"):
        from .llm import OpenAIChatAgent

        kwargs.setdefault("base_url", os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"))
        kwargs.setdefault("api_key", os.environ.get("OPENAI_API_KEY"))
        return OpenAIChatAgent(name[7:], **kwargs)
    try:
        cls = AGENTS[name]
    except KeyError:
        choices = [*AGENTS, "hf:PATH", "openai:MODEL"]
        raise UnknownNameError("agent", name, choices, hint=f"Agents: {', '.join(choices)}.") from None
    return cls(**kwargs)


__all__ = [
    "AGENTS",
    "ActFirstAgent",
    "Agent",
    "CarefulAgent",
    "CautiousAgent",
    "ClarifyAgent",
    "FormSensitiveAgent",
    "GoldAgent",
    "ObedientAgent",
    "RandomAgent",
    "RecoverThenMisactAgent",
    "RefuseAgent",
    "TrustingAgent",
    "make_agent",
]
