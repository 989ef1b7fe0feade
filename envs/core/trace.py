"""Episode traces: every step, every call, every normalized write record."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .errors import SYSTEM_ERROR_KINDS

_PATH_PART = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")


def parse_path(path: str) -> list[str | int]:
    """``$.approvals[0].limit`` -> ``["approvals", 0, "limit"]`` (keys and list indexes)."""
    if not path.startswith("$"):
        raise ValueError(f"A field path starts with '$': {path!r}")
    parts: list[str | int] = []
    pos = 1
    for match in _PATH_PART.finditer(path, 1):
        if match.start() != pos:
            break
        parts.append(match.group(1) if match.group(1) is not None else int(match.group(2)))
        pos = match.end()
    if pos != len(path):
        raise ValueError(f"Cannot parse the field path {path!r} (use $.key, [index]).")
    return parts


#: one step of a field pattern: ``.key``, ``[3]`` or ``[*]`` (every item of a list)
_PATTERN_PART = re.compile(r"\.([^.\[\]*$]+)|\[(\d+|\*)\]")
#: a bare key (no ``$``, ``.`` or brackets): matched at any depth of a result
_BARE_KEY = re.compile(r"^[^.\[\]*$]+$")


def parse_field_pattern(pattern: str) -> tuple[str | int | None, ...] | str:
    """Parse a pattern naming fields of a JSON result (what a tool declares about its result).

    Two forms:

    * a **bare key** (``"covered"``): that key in every object at any depth of the result (top level,
      inside nested objects, inside list items); returned as the string itself;
    * a **path** from the result's root, ``$`` optional: ``"$.orders[*].covered"`` =
      ``"orders[*].covered"``; ``[*]`` is every item of a list, ``[2]`` one item, ``.key`` one key;
      returned as its steps (``[*]`` is ``None``). ``[*].x`` addresses a list result.

    Raises ``ValueError`` saying what a pattern looks like.
    """
    if not isinstance(pattern, str) or not pattern.strip():
        raise ValueError(f"A field pattern is a non-empty string, got {pattern!r}.")
    if _BARE_KEY.match(pattern):
        return pattern
    path = pattern if pattern.startswith("$") else ("$" if pattern.startswith("[") else "$.") + pattern
    steps: list[str | int | None] = []
    pos = 1
    for match in _PATTERN_PART.finditer(path, 1):
        if match.start() != pos:
            break
        key, index = match.groups()
        steps.append(key if key is not None else (None if index == "*" else int(index)))
        pos = match.end()
    if pos != len(path) or not steps:
        raise ValueError(
            f"Cannot parse the field pattern {pattern!r}: use a key matched at any depth "
            "('covered'), or a path from the result's root with [*] for every list item "
            "('orders[*].covered', '$.summary.total')."
        )
    return tuple(steps)


def match_field_pattern(value: Any, pattern: str) -> list[str]:
    """The concrete paths (``$.orders[0].covered``) of ``value`` that ``pattern`` names, in document
    order (see :func:`parse_field_pattern`); a pattern that names nothing present gives ``[]``."""
    parsed = parse_field_pattern(pattern)
    found: list[str] = []
    if isinstance(parsed, str):

        def anywhere(node: Any, path: str) -> None:
            if isinstance(node, dict):
                for key, sub in node.items():
                    if key == parsed:
                        found.append(f"{path}.{key}")  # removed whole: nothing inside needs a match
                    else:
                        anywhere(sub, f"{path}.{key}")
            elif isinstance(node, list):
                for i, sub in enumerate(node):
                    anywhere(sub, f"{path}[{i}]")

        anywhere(value, "$")
        return found

    def walk(node: Any, i: int, path: str) -> None:
        if i == len(parsed):
            found.append(path)
            return
        step = parsed[i]
        if isinstance(step, str):
            if isinstance(node, dict) and step in node:
                walk(node[step], i + 1, f"{path}.{step}")
        elif isinstance(node, list):
            if step is None:  # [*]
                indexes: Sequence[int] = range(len(node))
            else:
                indexes = [step] if step < len(node) else []
            for index in indexes:
                walk(node[index], i + 1, f"{path}[{index}]")

    walk(value, 0, "$")
    return found


def omit_path(value: Any, path: str) -> tuple[Any, bool]:
    """``value`` without the field at ``path`` (copies along the path; ``value`` is not changed), and
    whether the field was there. A list index removes that entry."""
    parts = parse_path(path)
    if not parts:
        raise ValueError("Cannot omit the whole result ('$').")

    def walk(node: Any, i: int) -> tuple[Any, bool]:
        key = parts[i]
        if isinstance(key, int):
            if not isinstance(node, list) or key >= len(node):
                return node, False
        elif not isinstance(node, dict) or key not in node:
            return node, False
        if i == len(parts) - 1:
            copy = list(node) if isinstance(node, list) else dict(node)
            del copy[key]  # type: ignore[arg-type]
            return copy, True
        child, found = walk(node[key], i + 1)
        if not found:
            return node, False
        copy = list(node) if isinstance(node, list) else dict(node)
        copy[key] = child  # type: ignore[index]
        return copy, True

    return walk(value, 0)


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


def _field_values(
    fields: Sequence[str], values: tuple[dict[str, Any] | None, dict[str, Any] | None]
) -> dict[str, Any]:
    """The modified fields' values before and after a write (what a person reads in a trace)."""
    before, after = values
    if before is None and after is None:
        return {}
    return {
        "before": {f: before.get(f) for f in fields} if before is not None else None,
        "after": {f: after.get(f) for f in fields} if after is not None else None,
    }


@dataclass(slots=True)
class CallRecord:
    """One tool call as executed (after any call hooks), with its outcome.

    ``name`` / ``arguments`` are what was executed; when a hook rewrote the call (parameter injection),
    ``sent_name`` / ``sent_arguments`` keep what the agent sent and ``rewrites`` who changed it and why.
    ``intercept`` is set (``{"kind", "reason"}``) when a hook answered the call without executing it;
    ``hidden`` lists the result fields a hook removed from the observation (JSONPath-style paths).
    """

    index: int
    step: int
    name: str
    arguments: Any
    ok: bool
    kind: str | None = None
    result: Any = None
    error: dict[str, str] | None = None
    writes: list[WriteRecord] = field(default_factory=list)
    intercept: dict[str, str] | None = None
    sent_name: str | None = None
    sent_arguments: Any = None
    # immutable empty defaults: a call record is built on every step, most have neither
    rewrites: Sequence[dict[str, str]] = ()
    hidden: Sequence[str] = ()
    #: per write: the entity before and after the call (None for a create's before, a delete's after)
    values: Sequence[tuple[dict[str, Any] | None, dict[str, Any] | None]] = ()

    @property
    def mutated(self) -> bool:
        return self.ok and bool(self.writes)

    @property
    def intercepted(self) -> bool:
        return self.intercept is not None

    def hide(self, *paths: str) -> None:
        """Remove fields from the result the agent will see (observation masking: a field is omitted,
        never falsified) and record the paths that were present in ``hidden``. Apply several paths
        into one list from the highest index down."""
        for path in paths:
            self.result, found = omit_path(self.result, path)
            if found:
                self.hidden = [*self.hidden, path]

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
            out["writes"] = [
                {**w.to_dict(), **_field_values(w.fields, values)}
                for w, values in zip(
                    self.writes, self.values or [(None, None)] * len(self.writes), strict=True
                )
            ]
        if self.intercept is not None:
            out["intercept"] = dict(self.intercept)
        if self.rewrites:
            out["sent_name"] = self.sent_name
            out["sent_arguments"] = self.sent_arguments
            out["rewrites"] = [dict(r) for r in self.rewrites]
        if self.hidden:
            out["hidden"] = list(self.hidden)
        return out


@dataclass(slots=True)
class StepRecord:
    step: int
    action: str
    calls: list[CallRecord]
    error: dict[str, str] | None = None  # an action-level error (unparseable action)
    observation: str = ""
    raw: str | None = None  # the model's raw completion, when a format wrapper parsed it
    format: str | None = None  # where the call was found in it (openai, hermes, fenced, trailing_json ...)
    #: code points UTF-8 cannot encode (lone surrogates) replaced by U+FFFD in what this step received:
    #: the model's reply as the agent read it, the raw text, the action (:mod:`~tooltrap.envs.core.text`)
    escaped: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "step": self.step,
            "action": self.action,
            "calls": [c.to_dict() for c in self.calls],
        }
        if self.raw is not None:
            out["raw"] = self.raw
        if self.format is not None:
            out["format"] = self.format
        if self.escaped:
            out["escaped"] = self.escaped
        if self.error:
            out["error"] = self.error
        out["observation"] = self.observation
        return out


@dataclass(slots=True)
class Trace:
    """Everything that happened in an episode.

    ``variant`` is the resolved episode variant (a :class:`~tooltrap.envs.core.variants.Variant`).
    ``disposition`` is how the episode ended: the terminal tool's ``ends_as`` (``answer``, ``clarify``,
    ``abstain``, ``escalate``), ``commit`` when a commit ended it (:class:`~tooltrap.envs.core.capabilities.CommitEndsEpisode`),
    None when it was truncated; a before-judge hook may override it
    (:meth:`override`), and every override is kept in ``overrides``. ``error_counts`` counts error
    observations by kind (add with :meth:`count_error`); ``n_errors`` is the agent's share, and system
    failures such as ``backend_error`` go to ``n_system_errors``, never charged to the agent.
    """

    task_id: str
    steps: list[StepRecord] = field(default_factory=list)
    seed: int | None = None  # the reset seed
    terminal: str | None = None  # name of the terminal tool that ended the episode
    terminal_arguments: dict[str, Any] | None = None
    truncated: str | None = None  # why the episode was cut ("max_steps", "consecutive_errors")
    error_counts: dict[str, int] = field(default_factory=dict)
    variant: Any = None
    disposition: str | None = None
    # empty until used: a trace is built on every reset, most never see an override
    overrides: Sequence[dict[str, Any]] = ()
    intercept_counts: dict[str, int] = field(default_factory=dict)
    #: error observations caused by the agent (invalid calls): what benchmarks charge
    n_errors: int = 0
    #: failures of the simulated system itself (``backend_error``): never charged to the agent
    n_system_errors: int = 0
    #: scripted user turns that answered the agent's replies (:class:`~tooltrap.envs.core.capabilities.FollowUpTurns`): step and content
    user_turns: Sequence[dict[str, Any]] = ()

    @property
    def n_escaped(self) -> int:
        """Unencodable code points replaced in what the agent sent, over the episode (steps' ``escaped``)."""
        return sum(s.escaped for s in self.steps)

    @property
    def calls(self) -> list[CallRecord]:
        return [c for s in self.steps for c in s.calls]

    @property
    def writes(self) -> list[WriteRecord]:
        return [w for c in self.calls if c.ok for w in c.writes]

    @property
    def not_executed(self) -> list[CallRecord]:
        """Calls sent after the call that ended the episode, in the same action: recorded, never run."""
        return [c for c in self.calls if c.error is not None and c.error.get("type") == "not_executed"]

    def count_error(self, kind: str) -> None:
        self.error_counts[kind] = self.error_counts.get(kind, 0) + 1
        if kind in SYSTEM_ERROR_KINDS:
            self.n_system_errors += 1
        else:
            self.n_errors += 1

    def count_intercept(self, kind: str) -> None:
        self.intercept_counts[kind] = self.intercept_counts.get(kind, 0) + 1

    def override(self, disposition: str, *, kind: str, reason: str, message: str | None = None) -> None:
        """Change how the episode ended (a before-judge hook turning an answer into an abstention).
        The previous disposition and the hook's kind and reason are recorded."""
        entry = {"kind": kind, "reason": reason, "from": self.disposition, "to": disposition}
        if message is not None:
            entry["message"] = message
        self.overrides = [*self.overrides, entry]
        self.disposition = disposition

    def to_dict(self) -> dict[str, Any]:
        variant = self.variant
        return {
            "task_id": self.task_id,
            "seed": self.seed,
            "variant": variant.to_dict() if hasattr(variant, "to_dict") else (variant or {}),
            "steps": [s.to_dict() for s in self.steps],
            "terminal": self.terminal,
            "terminal_arguments": self.terminal_arguments,
            "disposition": self.disposition,
            "truncated": self.truncated,
            "error_counts": dict(sorted(self.error_counts.items())),
            "intercept_counts": dict(sorted(self.intercept_counts.items())),
            "overrides": [dict(o) for o in self.overrides],
            **({"user_turns": [dict(t) for t in self.user_turns]} if self.user_turns else {}),
            # only when something was replaced: the records of every ordinary episode keep their bytes
            **({"escaped": n} if (n := self.n_escaped) else {}),
        }
