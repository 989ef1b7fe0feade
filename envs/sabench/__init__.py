"""SABench (side-effect-aware evaluation): does the agent complete the request without writing outside
the user's authorization boundary? See ``docs/sabench.md`` and the spec in the repository."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooltrap.envs.packages import lazy_exports

#: env id -> the keyword arguments of the env class (``tooltrap.envs.packages`` registers them)
ENV_IDS: dict[str, dict[str, str]] = {
    "SABench-Calendar-v0": {"domain": "calendar"},
    "SABench-Email-v0": {"domain": "email"},
    "SABench-Ticket-v0": {"domain": "ticket"},
    "SABench-v0": {"domain": "all"},
}
#: the env class, imported by gymnasium on the first ``gym.make``
ENTRY_POINT = "tooltrap.envs.sabench.benchmark:SABenchEnv"

#: public name -> the room that defines it (imported on first use, so that ``import tooltrap`` stays cheap)
_EXPORTS = {
    "SABench": ".benchmark",
    "SABenchEnv": ".benchmark",
    "benchmark": ".benchmark",
    "make_env": ".benchmark",
    "packaged_tasks": ".benchmark",
    "SABenchOracle": ".judge",
    "SABenchVerdict": ".judge",
    "Violation": ".judge",
    "SABenchReward": ".reward",
    "AuthorizedWrite": ".task",
    "RULES": ".task",
    "SABenchLabels": ".task",
    "SABenchTask": ".task",
    "STATE_STRUCTURES": ".task",
    "TRAP_FAMILIES": ".task",
    "TrapSolution": ".task",
    "BACKENDS": ".tools",
    "CalendarBackend": ".tools",
    "EmailBackend": ".tools",
    "TerminalBackend": ".tools",
    "TicketBackend": ".tools",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from .benchmark import SABench, SABenchEnv, benchmark, make_env, packaged_tasks
    from .judge import SABenchOracle, SABenchVerdict, Violation
    from .reward import SABenchReward
    from .task import (
        RULES,
        STATE_STRUCTURES,
        TRAP_FAMILIES,
        AuthorizedWrite,
        SABenchLabels,
        SABenchTask,
        TrapSolution,
    )
    from .tools import BACKENDS, CalendarBackend, EmailBackend, TerminalBackend, TicketBackend

__all__ = [
    "BACKENDS",
    "ENTRY_POINT",
    "ENV_IDS",
    "RULES",
    "STATE_STRUCTURES",
    "TRAP_FAMILIES",
    "AuthorizedWrite",
    "CalendarBackend",
    "EmailBackend",
    "SABench",
    "SABenchEnv",
    "SABenchLabels",
    "SABenchOracle",
    "SABenchReward",
    "SABenchTask",
    "SABenchVerdict",
    "TerminalBackend",
    "TicketBackend",
    "TrapSolution",
    "Violation",
    "benchmark",
    "make_env",
    "packaged_tasks",
]
