"""Episode traces: every step, every call, every normalized write record."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class WriteRecord(NamedTuple):
    """A normalized write: one per affected entity per call.

    Attributes:
        tool: The tool that was called (``calendar_cancel_event``).
        domain: The system the written entity belongs to (``email``, ``calendar``, ``ticket``).
        action: ``create``, ``update`` or ``delete``.
        entity: ``collection/id`` of the written entity.
        fields: The modified fields (all fields for a create or delete).
        external: Whether the write reaches a party outside the organization.
    """

    tool: str
    domain: str
    action: str
    entity: str
    fields: tuple[str, ...]
    external: bool

    @property
    def collection(self) -> str:
        return self.entity.partition("/")[0]

    @property
    def entity_id(self) -> str:
        return self.entity.partition("/")[2]

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "domain": self.domain,
            "action": self.action,
            "entity": self.entity,
            "fields": list(self.fields),
            "external": self.external,
        }


@dataclass(slots=True)
class CallRecord:
    """One tool call as executed (after any call hooks), with its outcome."""

    index: int
    step: int
    name: str
    arguments: Any
    ok: bool
    kind: str | None = None
    result: Any = None
    error: dict[str, str] | None = None
    writes: list[WriteRecord] = field(default_factory=list)
    intercepted: bool = False

    @property
    def mutated(self) -> bool:
        return self.ok and bool(self.writes)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "step": self.step,
            "name": self.name,
            "arguments": self.arguments,
            "ok": self.ok,
            "kind": self.kind,
        }
        if self.ok:
            out["result"] = self.result
        else:
            out["error"] = self.error
        if self.writes:
            out["writes"] = [w.to_dict() for w in self.writes]
        if self.intercepted:
            out["intercepted"] = True
        return out


@dataclass(slots=True)
class StepRecord:
    step: int
    action: str
    calls: list[CallRecord]
    error: dict[str, str] | None = None  # an action-level error (unparseable action)
    observation: str = ""
    raw: str | None = None  # the model's raw completion, when a format wrapper parsed it

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "step": self.step,
            "action": self.action,
            "calls": [c.to_dict() for c in self.calls],
        }
        if self.raw is not None:
            out["raw"] = self.raw
        if self.error:
            out["error"] = self.error
        out["observation"] = self.observation
        return out


@dataclass
class Trace:
    """Everything that happened in an episode."""

    task_id: str
    steps: list[StepRecord] = field(default_factory=list)
    terminal: str | None = None  # name of the terminal tool that ended the episode
    terminal_arguments: dict[str, Any] | None = None
    truncated: str | None = None  # why the episode was cut ("max_steps", "consecutive_errors")
    error_counts: Counter[str] = field(default_factory=Counter)

    @property
    def calls(self) -> list[CallRecord]:
        return [c for s in self.steps for c in s.calls]

    @property
    def writes(self) -> list[WriteRecord]:
        return [w for c in self.calls if c.ok for w in c.writes]

    @property
    def n_errors(self) -> int:
        return sum(self.error_counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "steps": [s.to_dict() for s in self.steps],
            "terminal": self.terminal,
            "terminal_arguments": self.terminal_arguments,
            "truncated": self.truncated,
            "error_counts": dict(sorted(self.error_counts.items())),
        }
