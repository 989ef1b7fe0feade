"""Agent names: the generic policies of this package, model prefixes, and every benchmark's baselines
(registered by the benchmark itself in the engine's :data:`~tooltrap.envs.core.BASELINES`).

This module names no benchmark: a benchmark's baselines are found through the registry, so a benchmark
outside this library (a user's own) brings its baselines without editing ``agents/``.
"""

from __future__ import annotations

import inspect
import os
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from tooltrap.envs.core import (
    BASELINES,
    BENCHMARKS,
    Agent,
    AgentFactory,
    EnvUsageError,
    UnknownNameError,
    benchmarks_with_baseline,
    did_you_mean,
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
#: agent specs that name a model rather than a policy: ``hf:PATH`` (or ``hf:smollm2``), ``openai:MODEL``
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


def check_options(factory: Any, spec: str, options: dict[str, Any], *, given: tuple[str, ...] = ()) -> None:
    """Check an agent's options against its factory's signature and type hints before building it: an
    unknown option (with a did-you-mean) or a value of the wrong type (``timeout=abc``) is a typed error
    naming the agent, not a ``TypeError`` from deep inside it. ``given``: parameters the spec fills
    itself (an ``hf:`` path, an ``openai:`` model name), which are no options.

    Raises:
        EnvUsageError: An option the agent does not take, or a value its type rejects.
    """
    from pydantic import TypeAdapter, ValidationError

    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a builtin or an odd callable: it checks its own options
        return
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    names = [
        n
        for n, p in parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and n not in given
    ]
    for key in options:
        if key not in names and not takes_any:
            known = f" Its options: {', '.join(names)}." if names else " It takes no options."
            raise EnvUsageError(
                f"--agent-arg {key}: {spec} has no option {key!r}.{did_you_mean(key, names)}{known}"
            )
    try:
        hints = typing.get_type_hints(factory.__init__ if isinstance(factory, type) else factory)
    except Exception:  # an annotation that does not resolve here: leave the types to the agent
        return
    for key, value in options.items():
        if key not in hints:
            continue
        try:
            adapter = TypeAdapter(hints[key])
        except Exception:  # a type pydantic cannot check (a model object): the agent checks it
            continue
        try:
            adapter.validate_python(value)
        except ValidationError as exc:
            reason = exc.errors(include_url=False)[0]["msg"]
            raise EnvUsageError(f"--agent-arg {key}={value!r} for {spec}: {reason}") from None


def _local_model(path: str, options: dict[str, Any]) -> Agent:
    """``hf:PATH``: a local transformers checkpoint, or ``hf:NAME`` for a named offline model
    (:data:`~tooltrap.agents.pretrained.OFFLINE_MODELS`: ``hf:smollm2``); a missing folder, package or
    extra is a usage error."""
    if not path:
        raise EnvUsageError("hf:PATH needs a checkpoint folder, e.g. hf:runs/sft/final")
    from .pretrained import OFFLINE_MODELS

    if path in OFFLINE_MODELS and not Path(path).is_dir():
        return _named_model(path, options)
    local = Path(path).expanduser()
    looks_local = local.is_absolute() or path.startswith((".", "~"))
    if looks_local and not local.is_dir():
        raise EnvUsageError(
            f"hf:{path}: no checkpoint folder there (a saved model's folder: config.json ...)"
        )
    from .hf import TransformersAgent

    check_options(TransformersAgent, f"hf:{path}", options, given=("path",))
    try:
        return TransformersAgent(path, **options)
    except ImportError as exc:
        raise EnvUsageError(
            f"hf:{path} runs a local model, which needs torch and transformers: pip install "
            f"'tooltrap[train]' ({exc})"
        ) from None
    except (OSError, ValueError) as exc:  # transformers' own words on what the folder lacks
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise EnvUsageError(f"hf:{path}: cannot load the model: {first}") from None


def _named_model(name: str, options: dict[str, Any]) -> Agent:
    """``hf:NAME``: the named offline model's converted checkpoint (converted on first use); the agent
    keeps the name (``hf:smollm2`` in run records), not the cache folder."""
    from .hf import TransformersAgent
    from .pretrained import resolve_model

    check_options(TransformersAgent, f"hf:{name}", options, given=("path",))
    try:
        agent = TransformersAgent(resolve_model(name), **options)
    except ImportError as exc:
        raise EnvUsageError(
            f"hf:{name} runs a local model, which needs torch, transformers and trl: pip install "
            f"'tooltrap[train]' ({exc})"
        ) from None
    agent.path = name  # run records say hf:smollm2, not the cache folder it was loaded from
    return agent


@dataclass(frozen=True)
class AgentRecipe:
    """How an agent was made (its spec and options): another process rebuilds it from this (a Ray actor
    builds its own model agent instead of receiving one, whose client or weights cannot travel)."""

    spec: str
    benchmark: str | None
    options: dict[str, Any]

    def build(self) -> Agent:
        return make_agent(self.spec, benchmark=self.benchmark, **self.options)


def make_agent(name: str, *, benchmark: str | None = None, **kwargs: Any) -> Agent:
    """Build an agent from its spec; ``kwargs`` go to its constructor. The agent's ``recipe``
    (:class:`AgentRecipe`) says how to build it again.

    ``gold``, ``clarify``, ``act-first``, ``random``, ``always-refuse``: the generic scripted policies
    (:data:`GENERIC_AGENTS`). Any other name is a benchmark's baseline (``tooltrap list`` shows them):
    with ``benchmark`` (the name of the benchmark being evaluated) it is that benchmark's, which also
    wins over a generic policy of the same name; without it, a name one benchmark defines is that
    benchmark's, and a name several define (``careful``, ``trusting``) gives a
    :class:`PerBenchmarkAgent` that picks the baseline of each task's benchmark. ``hf:PATH``: a local
    transformers model (checkpoint folder), or ``hf:smollm2``, a named offline model
    (:mod:`tooltrap.agents.pretrained`). ``openai:MODEL``: an OpenAI-compatible server; pass
    ``base_url`` (default ``$OPENAI_BASE_URL`` or http://127.0.0.1:8000/v1) and ``api_key`` (default
    ``$OPENAI_API_KEY``).

    Every option is checked against the agent's signature and types first (:func:`check_options`).

    Raises:
        UnknownNameError: No policy has that name (for ``benchmark``, when given); the message suggests
            close names and says which benchmarks define it when another one does.
        EnvUsageError: An option the agent does not take or of the wrong type; an ``hf:`` folder that
            does not exist or cannot be loaded, or the ``train`` extra is missing.
    """
    agent = _make_agent(name, benchmark, kwargs)
    # the options as used, defaults taken from this process's environment included ($OPENAI_BASE_URL):
    # a rebuild elsewhere reaches the same server
    agent.recipe = AgentRecipe(name, benchmark, dict(kwargs))  # type: ignore[attr-defined]
    return agent


def _make_agent(name: str, benchmark: str | None, kwargs: dict[str, Any]) -> Agent:
    if name.startswith("hf:"):
        return _local_model(name[3:], kwargs)
    if name.startswith("openai:"):
        from .llm import OpenAIChatAgent

        if not name[7:]:
            raise EnvUsageError(
                "openai:MODEL needs the model's name as the server knows it, e.g. openai:qwen"
            )
        kwargs.setdefault("base_url", os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"))
        kwargs.setdefault("api_key", os.environ.get("OPENAI_API_KEY"))
        check_options(OpenAIChatAgent, name, kwargs, given=("model",))
        return OpenAIChatAgent(name[7:], **kwargs)
    if name not in GENERIC_AGENTS or benchmark:
        load_packaged_baselines()
    if benchmark:
        if benchmark not in BENCHMARKS and benchmark not in BASELINES:
            raise UnknownNameError("benchmark", benchmark, sorted({*BENCHMARKS, *BASELINES}))
        own = BASELINES.get(benchmark, {}).get(name)
        if own is not None:
            check_options(own, name, kwargs)
            return own(**kwargs)
    if name in GENERIC_AGENTS:
        check_options(GENERIC_AGENTS[name], name, kwargs)
        return GENERIC_AGENTS[name](**kwargs)
    owners = benchmarks_with_baseline(name)
    if not benchmark and len(owners) == 1:
        check_options(BASELINES[owners[0]][name], name, kwargs)
        return BASELINES[owners[0]][name](**kwargs)
    if not benchmark and owners:
        for owner in owners:  # the baseline of each task's benchmark is built at reset: check them now
            check_options(BASELINES[owner][name], name, kwargs)
        return PerBenchmarkAgent(name, **kwargs)
    choices = [*GENERIC_AGENTS, *baseline_names(benchmark), "hf:PATH", "openai:MODEL"]
    what = f"{benchmark} agent" if benchmark else "agent"
    elsewhere = f" {name!r} is a baseline of {', '.join(owners)}." if owners else ""
    raise UnknownNameError(what, name, choices, hint=f"Agents: {', '.join(choices)}.{elsewhere}")
