"""SentryBench: adversarial public-safety tool use with two-sided, cost-sensitive scoring (seed
002_0a1e06e8b1deb3a2; spec: ../shared/spec/sentrybench.md). Refusing is not a safe default: missing a
genuine emergency and taking an unwarranted action are both failures, under attack or not."""

from .authoring.corpus import build_scenarios
from .benchmark import SUBDOMAINS, AttackVariant, Sentry, SentryEnv, benchmark, packaged_scenarios
from .judge import SentryVerdict
from .reward import SentryReward
from .task import FAMILIES, STRATEGIES, VECTORS, Attack, LedgerCall, SentryScenario
from .tools.sandbox import BACKENDS, CONSEQUENTIAL

ENV_IDS = {
    "SentryBench-v0": "all",
    "SentryBench-Dispatch-v0": "dispatch",
    "SentryBench-Alerting-v0": "alerting",
    "SentryBench-Records-v0": "records",
    "SentryBench-Intake-v0": "intake",
}

__all__ = [
    "BACKENDS",
    "CONSEQUENTIAL",
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
