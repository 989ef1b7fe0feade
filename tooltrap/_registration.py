"""Env ids and their registration with gymnasium (idempotent)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import gymnasium as gym

if TYPE_CHECKING:
    from tooltrap.wrappers.eval.report import BenchmarkReport

_SABENCH = "tooltrap.envs.sabench.benchmark:SABenchEnv"
_EPISEM = "tooltrap.envs.episem.benchmark:EpiSEMEnv"
_SENTRY = "tooltrap.envs.sentry.benchmark:SentryEnv"
_AGENTPROP = "tooltrap.envs.agentprop.benchmark:AgentPropEnv"

#: env id -> (entry point, kwargs). Only ids with a shipped corpus are registered.
ENV_IDS: dict[str, tuple[str, dict[str, object]]] = {
    "SABench-Email-v0": (_SABENCH, {"domain": "email"}),
    "SABench-Calendar-v0": (_SABENCH, {"domain": "calendar"}),
    "SABench-Ticket-v0": (_SABENCH, {"domain": "ticket"}),
    "SABench-v0": (_SABENCH, {"domain": "all"}),
    "EpiSEM-v0": (_EPISEM, {"domain": "all"}),
    "EpiSEM-CloudOps-v0": (_EPISEM, {"domain": "cloudops"}),
    "EpiSEM-Commerce-v0": (_EPISEM, {"domain": "commerce"}),
    "EpiSEM-Communication-v0": (_EPISEM, {"domain": "communication"}),
    "EpiSEM-DocumentAccess-v0": (_EPISEM, {"domain": "document_access"}),
    "EpiSEM-Finance-v0": (_EPISEM, {"domain": "finance"}),
    "EpiSEM-Travel-v0": (_EPISEM, {"domain": "travel"}),
    "SentryBench-v0": (_SENTRY, {"subdomain": "all"}),
    "SentryBench-Dispatch-v0": (_SENTRY, {"subdomain": "dispatch"}),
    "SentryBench-Alerting-v0": (_SENTRY, {"subdomain": "alerting"}),
    "SentryBench-Records-v0": (_SENTRY, {"subdomain": "records"}),
    "SentryBench-Intake-v0": (_SENTRY, {"subdomain": "intake"}),
    "AgentProp-v0": (_AGENTPROP, {"domain": "core"}),
    "AgentProp-Weather-v0": (_AGENTPROP, {"domain": "weather"}),
    "AgentProp-Calendar-v0": (_AGENTPROP, {"domain": "calendar"}),
    "AgentProp-Medical-v0": (_AGENTPROP, {"domain": "medical"}),
    "AgentProp-Knowledge-v0": (_AGENTPROP, {"domain": "knowledge"}),
    "AgentProp-Retail-v0": (_AGENTPROP, {"domain": "retail"}),
}

#: benchmark name -> the module of its evaluation package that registers its report object (imported
#: on first use: a run folder names its benchmark, and only that benchmark's report is loaded)
REPORT_MODULES: dict[str, str] = {
    "sabench": "tooltrap.wrappers.eval.sabench.report",
    "episem": "tooltrap.wrappers.eval.episem.report",
    "sentry": "tooltrap.wrappers.eval.sentry.report",
    "agentprop": "tooltrap.wrappers.eval.agentprop.report",
}


def register_envs() -> None:
    """Register every tooltrap env id (safe to call more than once)."""
    for env_id, (entry_point, kwargs) in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        gym.register(id=env_id, entry_point=entry_point, kwargs=dict(kwargs), disable_env_checker=True)


def _plain_id(env_id: str) -> str:
    """The id of a ``"package.module:Env-v0"`` env id without its module, which is imported first (as
    ``gym.make`` does); a plain id as it is."""
    import importlib

    module, _, plain = env_id.rpartition(":")
    if module:
        importlib.import_module(module)
    return plain


def check_env_id(env_id: str) -> str:
    """``env_id`` if gymnasium knows it; otherwise an :class:`~tooltrap.envs.core.UnknownNameError` with a
    did-you-mean that ignores case."""
    from tooltrap.envs.core import UnknownNameError

    module = env_id.rpartition(":")[0]
    try:
        plain = _plain_id(env_id)
    except ImportError as exc:
        raise UnknownNameError("env module", module, []) from exc
    if plain in gym.registry:
        return env_id
    hint = f"tooltrap's env ids: {', '.join(ENV_IDS)}."
    raise UnknownNameError("env id", plain, gym.registry, hint=hint, ignore_case=True)


def env_spec(env_id: str) -> gym.envs.registration.EnvSpec:
    """``gym.spec`` of an env id, also in the module-prefixed form ``"package.module:Env-v0"``, with the
    entry point's module imported too."""
    import importlib

    spec = gym.spec(_plain_id(env_id))
    if isinstance(spec.entry_point, str):
        importlib.import_module(spec.entry_point.partition(":")[0])
    return spec


def benchmark_report(benchmark: str, env_id: str | None = None) -> BenchmarkReport:
    """The report of the benchmark named ``benchmark`` (as a run's records and run.json name it): a
    built-in benchmark's evaluation package is imported (it registers its report); a user's benchmark
    is imported through ``env_id``'s entry point (its module registers its report, if it has one)."""
    import importlib

    from tooltrap.envs.core import BENCHMARKS
    from tooltrap.wrappers.eval.report import report_for

    if benchmark in REPORT_MODULES:
        importlib.import_module(REPORT_MODULES[benchmark])
    elif benchmark not in BENCHMARKS and env_id:
        env_spec(env_id)  # imports the env's modules, which define (and register) the benchmark
    return report_for(benchmark)
