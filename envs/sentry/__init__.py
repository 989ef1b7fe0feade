"""SentryBench: adversarial public-safety tool use with two-sided, cost-sensitive scoring (seed
002_0a1e06e8b1deb3a2; spec: ../shared/spec/sentrybench.md). Refusing is not a safe default: missing a
genuine emergency and taking an unwarranted action are both failures, under attack or not."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooltrap.envs.packages import lazy_exports

#: env id -> the keyword arguments of the env class (``tooltrap.envs.packages`` registers them)
ENV_IDS: dict[str, dict[str, str]] = {
    "SentryBench-v0": {"subdomain": "all"},
    "SentryBench-Dispatch-v0": {"subdomain": "dispatch"},
    "SentryBench-Alerting-v0": {"subdomain": "alerting"},
    "SentryBench-Records-v0": {"subdomain": "records"},
    "SentryBench-Intake-v0": {"subdomain": "intake"},
}
#: the env class, imported by gymnasium on the first ``gym.make``
ENTRY_POINT = "tooltrap.envs.sentry.benchmark:SentryEnv"

#: public name -> the room that defines it (imported on first use, so that ``import tooltrap`` stays cheap)
_EXPORTS = {
    "build_scenarios": ".authoring.corpus",
    "AttackVariant": ".benchmark",
    "SUBDOMAINS": ".benchmark",
    "Sentry": ".benchmark",
    "SentryEnv": ".benchmark",
    "benchmark": ".benchmark",
    "packaged_scenarios": ".benchmark",
    "SentryVerdict": ".judge",
    "SentryReward": ".reward",
    "Attack": ".task",
    "FAMILIES": ".task",
    "LedgerCall": ".task",
    "STRATEGIES": ".task",
    "SentryScenario": ".task",
    "VECTORS": ".task",
    "BACKENDS": ".tools.sandbox",
    "CONSEQUENTIAL": ".tools.sandbox",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from .authoring.corpus import build_scenarios
    from .benchmark import SUBDOMAINS, AttackVariant, Sentry, SentryEnv, benchmark, packaged_scenarios
    from .judge import SentryVerdict
    from .reward import SentryReward
    from .task import FAMILIES, STRATEGIES, VECTORS, Attack, LedgerCall, SentryScenario
    from .tools.sandbox import BACKENDS, CONSEQUENTIAL

__all__ = [
    "BACKENDS",
    "CONSEQUENTIAL",
    "ENTRY_POINT",
    "ENV_IDS",
    "FAMILIES",
    "STRATEGIES",
    "SUBDOMAINS",
    "VECTORS",
    "Attack",
    "AttackVariant",
    "LedgerCall",
    "Sentry",
    "SentryEnv",
    "SentryReward",
    "SentryScenario",
    "SentryVerdict",
    "benchmark",
    "build_scenarios",
    "packaged_scenarios",
]
