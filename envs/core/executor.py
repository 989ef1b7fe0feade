"""The executor: runs validated tool calls against a state, atomically; shared by the env and the
oracle's replay."""

from __future__ import annotations

from typing import Any

from .benchmark import Benchmark
from .errors import ErrorKind, ToolCallError
from .state import Change, State
from .tasks import Task
from .tools import Backend
from .trace import CallRecord, WriteRecord
from .variants import Variant


class Executor:
    """Runs validated tool calls against a state, atomically, producing :class:`CallRecord` s.

    Shared by the env and the oracle's replay so both see exactly the same semantics: the same task,
    the same variant, the same initial state.
    """

    __slots__ = ("benchmark", "task", "toolset", "state", "variant", "_bound", "_backends")

    def __init__(
        self, benchmark: Benchmark, task: Task, state: State | None = None, variant: Variant | None = None
    ):
        self.benchmark = benchmark
        self.task = task
        self.variant = variant if variant is not None else benchmark.default_variant(task)
        self.toolset = benchmark.toolset(task, self.variant)
        if state is None:
            state = (
                task.make_state() if benchmark.plain_variants else benchmark.initial_state(task, self.variant)
            )
        self.state = state
        self._bound: dict[str, Any] = {}
        self._backends: dict[type[Backend], Backend] = {}

    def bound_tool(self, name: str) -> Any:
        """The tool method bound to this executor's state (backends are built on first use)."""
        fn = self._bound.get(name)
        if fn is None:
            owner = self.toolset.owner[name]
            backend = self._backends.get(owner)
            if backend is None:
                backend = self._backends[owner] = owner(self.state, self.variant)
            fn = self._bound[name] = getattr(backend, self.toolset.specs[name].method)
        return fn

    def execute(self, name: Any, arguments: Any, *, step: int, index: int) -> CallRecord:
        if not isinstance(name, str):
            err = ToolCallError("Tool name must be a string.", kind=ErrorKind.PARSE_ERROR)
            return CallRecord(index, step, str(name), arguments, ok=False, error=err.to_dict())
        state = self.state
        mark = state.mark()
        try:
            spec = self.toolset[name]
            kwargs = spec.validate(arguments)
            result = self.bound_tool(name)(**kwargs)
        except ToolCallError as err:
            state.rollback(mark)
            kind = self.toolset.specs[name].kind if name in self.toolset.specs else None
            return CallRecord(index, step, name, arguments, ok=False, kind=kind, error=err.to_dict())
        except Exception as exc:  # a backend bug must not corrupt the episode, nor be charged to the agent
            state.rollback(mark)
            err = ToolCallError(
                f"The {name} tool failed inside the simulated system ({type(exc).__name__}: {exc}).",
                kind=ErrorKind.BACKEND_ERROR,
                hint="This is a fault of the system, not of your call: nothing was changed.",
            )
            kind = self.toolset.specs[name].kind if name in self.toolset.specs else None
            return CallRecord(index, step, name, arguments, ok=False, kind=kind, error=err.to_dict())
        record = CallRecord(index, step, name, arguments, ok=True, kind=spec.kind, result=result)
        if len(state.log) > mark[0]:
            record.writes, record.values = self._writes(name, state.log[mark[0] :])
        return record

    def _writes(
        self, tool: str, changes: list[Change]
    ) -> tuple[list[WriteRecord], list[tuple[dict[str, Any] | None, dict[str, Any] | None]]]:
        """One record per affected entity (fields merged across the call's changes), and for each the
        entity before and after the call (records are snapshots: the state never mutates one)."""
        merged: dict[tuple[str, str], Change] = {}
        for change in changes:
            key = (change.collection, change.entity_id)
            prev = merged.get(key)
            if prev is None:
                merged[key] = change
            else:
                fields = tuple(sorted(set(prev.fields) | set(change.fields)))
                op = prev.op if prev.op == "create" else change.op
                merged[key] = Change(change.collection, change.entity_id, op, fields, prev.before)
        state, describe = self.state, self.benchmark.write_record
        out = []
        values = []
        for change in merged.values():
            after = state.get(change.collection, change.entity_id)
            if change.op == "create" and after is None:
                continue  # created and deleted within one call: no net effect
            out.append(describe(tool, change, state))
            values.append((change.before, after))
        return out, values
