"""Oracle base: deterministic judgment of a finished episode from task + initial state + trace.

The shared mechanics live here: extracting the successful state-mutating calls and replaying them on a
fresh copy of the initial state through the very same executor the env uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .state import State
from .tasks import Task
from .trace import CallRecord, Trace
from .variants import Variant

if TYPE_CHECKING:
    from .benchmark import Benchmark


def mutating_calls(trace: Trace) -> list[CallRecord]:
    """Successful calls that changed the state. Reads, failed and idempotent calls are dropped."""
    return [c for c in trace.calls if c.mutated]


def replay(
    benchmark: Benchmark, task: Task, calls: Sequence[CallRecord], variant: Variant | None = None
) -> tuple[State, list[CallRecord]]:
    """Replay ``calls`` (as executed) in order on a fresh initial state of ``task`` played as
    ``variant`` (the trace's); return the state and the replayed records."""
    from .executor import Executor  # local: the executor imports oracle types

    executor = Executor(benchmark, task, variant=variant)
    records = [
        executor.execute(call.name, call.arguments, step=call.step, index=call.index) for call in calls
    ]
    return executor.state, records


class Oracle(Protocol):
    """Judge a finished episode. Must be deterministic and pure."""

    def judge(self, task: Any, trace: Trace) -> Any: ...
