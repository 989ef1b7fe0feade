"""Policies: the generic scripted baselines, LLM agents (OpenAI-compatible HTTP, local transformers), and
:func:`make_agent`, which also resolves every benchmark's own baselines by name through the engine's
baseline registry (:func:`tooltrap.envs.core.register_baseline`). The Agent protocol is the engine's
(:class:`tooltrap.envs.core.Agent`, re-exported here)."""

from __future__ import annotations

from tooltrap.envs.core import Agent, register_baseline

from .registry import GENERIC_AGENTS, PREFIXES, PerBenchmarkAgent, baseline_names, make_agent
from .scripted import ActFirstAgent, ClarifyAgent, GoldAgent, RandomAgent, RefuseAgent

__all__ = [
    "GENERIC_AGENTS",
    "PREFIXES",
    "ActFirstAgent",
    "Agent",
    "ClarifyAgent",
    "GoldAgent",
    "PerBenchmarkAgent",
    "RandomAgent",
    "RefuseAgent",
    "baseline_names",
    "make_agent",
    "register_baseline",
]
