"""SABench (side-effect-aware evaluation): does the agent complete the request without writing outside
the user's authorization boundary? See ``docs/sabench.md`` and the spec in the repository."""

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

ENV_IDS = {
    "SABench-Calendar-v0": "calendar",
    "SABench-Email-v0": "email",
    "SABench-Ticket-v0": "ticket",
    "SABench-v0": "all",
}

__all__ = [
    "BACKENDS",
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
