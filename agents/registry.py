"""Agent names: the generic policies of this package, model prefixes, and every benchmark's baselines
(registered by the benchmark itself in the engine's :data:`~tooltrap.envs.core.BASELINES`).

This module names no benchmark: a benchmark's baselines are found through the registry, so a benchmark
outside this library (a user's own) brings its baselines without editing ``agents/``.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from tooltrap.envs.core import (
    BASELINES,
    BENCHMARKS,
    Agent,
    AgentFactory,
    EnvUsageError,
    UnknownNameError,
    benchmarks_with_baseline,
    load_packaged_baselines,
)

from .scripted import ActFirstAgent, ClarifyAgent, GoldAgent, RandomAgent, RefuseAgent

#: the policies that work on any benchmark, by name
GENERIC_AGENTS: dict[str, AgentFactory] = {
    "gold": GoldAgent,
    "clarify": ClarifyAgent,
    "act-first": ActFirstAgent,
    "random": RandomAgent,
    "always-refuse": RefuseAgent,
}
#: agent specs that name a model rather than a policy: ``hf:PATH``, ``openai:MODEL``
PREFIXES = ("hf:", "openai:")


class PerBenchmarkAgent(Agent):
    """The baseline ``name`` of the benchmark each episode's task belongs to (``task.benchmark``),
    chosen at reset: one agent for a name several benchmarks define (``careful``, ``trusting``) when
    no benchmark was given. Privileged: it needs the task to know its benchmark; the chosen baseline
    gets the task only if it is privileged itself."""

    privileged: ClassVar[bool] = True

    def __init__(self, baseline: str, **options: Any) -> None:
        self.baseline = baseline
        self.options = options
        self.delegate: Agent | None = None

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        benchmark = getattr(task, "benchmark", None)
        factory = BASELINES.get(str(benchmark), {}).get(self.baseline)
        if factory is None:
            owners = ", ".join(benchmarks_with_baseline(self.baseline))
            raise EnvUsageError(
                f"The {self.baseline} baseline is defined by {owners}, not by {benchmark!r} "
                f"(task {getattr(task, 'id', '?')!r})."
            )
        self.delegate = factory(**self.options)
        self.delegate.reset(observation, info, task=task if self.delegate.privileged else None, seed=seed)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self.delegate is None:
            raise EnvUsageError("Call reset() first.")
        return self.delegate.act(observation, info)

    def describe(self) -> dict[str, Any]:
        return {"name": self.baseline}


def baseline_names(benchmark: str | None = None) -> list[str]:
    """The baselines ``benchmark`` registers (every benchmark's, without duplicates, when None), after
    loading the benchmarks shipped with the library."""
    load_packaged_baselines()
    tables = [BASELINES.get(benchmark, {})] if benchmark else list(BASELINES.values())
    return list(dict.fromkeys(name for table in tables for name in table))


def make_agent(name: str, *, benchmark: str | None = None, **kwargs: Any) -> Agent:
    """Build an agent from its spec; ``kwargs`` go to its constructor.

    ``gold``, ``clarify``, ``act-first``, ``random``, ``always-refuse``: the generic scripted policies
    (:data:`GENERIC_AGENTS`). Any other name is a benchmark's baseline (``tooltrap list`` shows them):
    with ``benchmark`` (the name of the benchmark being evaluated) it is that benchmark's, which also
    wins over a generic policy of the same name; without it, a name one benchmark defines is that
    benchmark's, and a name several define (``careful``, ``trusting``) gives a
    :class:`PerBenchmarkAgent` that picks the baseline of each task's benchmark. ``hf:PATH``: a local
    transformers model (checkpoint folder). ``openai:MODEL``: an OpenAI-compatible server; pass
    ``base_url`` (default ``$OPENAI_BASE_URL`` or http://127.0.0.1:8000/v1) and ``api_key`` (default
    ``$OPENAI_API_KEY``).

    Raises:
        UnknownNameError: No policy has that name (for ``benchmark``, when given); the message suggests
            close names and says which benchmarks define it when another one does.
    """
    if name.startswith("hf:"):
        from .hf import TransformersAgent

        return TransformersAgent(name[3:], **kwargs)
    if name.startswith("openai:"):
        from .llm import OpenAIChatAgent

        kwargs.setdefault("base_url", os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"))
        kwargs.setdefault("api_key", os.environ.get("OPENAI_API_KEY"))
        return OpenAIChatAgent(name[7:], **kwargs)
    if name not in GENERIC_AGENTS or benchmark:
        load_packaged_baselines()
    if benchmark:
        if benchmark not in BENCHMARKS and benchmark not in BASELINES:
            raise UnknownNameError("benchmark", benchmark, sorted({*BENCHMARKS, *BASELINES}))
        own = BASELINES.get(benchmark, {}).get(name)
        if own is not None:
            return own(**kwargs)
    if name in GENERIC_AGENTS:
        return GENERIC_AGENTS[name](**kwargs)
    owners = benchmarks_with_baseline(name)
    if not benchmark and len(owners) == 1:
        return BASELINES[owners[0]][name](**kwargs)
    if not benchmark and owners:
        return PerBenchmarkAgent(name, **kwargs)
    choices = [*GENERIC_AGENTS, *baseline_names(benchmark), "hf:PATH", "openai:MODEL"]
    what = f"{benchmark} agent" if benchmark else "agent"
    elsewhere = f" {name!r} is a baseline of {', '.join(owners)}." if owners else ""
    raise UnknownNameError(what, name, choices, hint=f"Agents: {', '.join(choices)}.{elsewhere}")
