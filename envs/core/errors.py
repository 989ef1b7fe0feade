"""Typed errors.

Two families live here:

* Exceptions (:class:`TooltrapError` and subclasses) are raised for programmer errors: misuse of the
  env API, bad task files, bad tool definitions. They always carry a hint.
* :class:`ToolCallError` is raised *inside* a tool to report an actionable problem to the agent
  (unknown entity, conflicting arguments). The env catches it and turns it into an error observation;
  it never reaches the caller of ``env.step``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from enum import StrEnum


def did_you_mean(word: str, options: Iterable[str], n: int = 3, *, ignore_case: bool = False) -> str:
    """Return a "did you mean" suffix for ``word`` among ``options`` ('' when nothing is close)."""
    if ignore_case:
        lowered = {o.lower(): o for o in options}
        close = difflib.get_close_matches(str(word).lower(), list(lowered), n=n, cutoff=0.6)
        matches = [lowered[m] for m in close]
    else:
        matches = difflib.get_close_matches(str(word), list(options), n=n, cutoff=0.6)
    if not matches:
        return ""
    return " Did you mean " + " or ".join(repr(m) for m in matches) + "?"


class TooltrapError(Exception):
    """Base class of every exception tooltrap raises on purpose."""


class EnvUsageError(TooltrapError, RuntimeError):
    """The env API was used out of order (e.g. ``step`` before ``reset``)."""


class ToolDefinitionError(TooltrapError, TypeError):
    """A tool function lacks type hints, a docstring entry, or has an invalid name."""


class UnknownNameError(TooltrapError, KeyError):
    """A name (agent, metric, env id ...) is not known; the message suggests close matches."""

    def __init__(
        self, what: str, value: str, options: Iterable[str], *, hint: str = "", ignore_case: bool = False
    ):
        self.value = value
        suggestion = did_you_mean(value, options, ignore_case=ignore_case)
        super().__init__(f"Unknown {what} {value!r}.{suggestion}" + (f" {hint}" if hint else ""))

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class UnknownTaskError(UnknownNameError):
    """A task id, template id or label filter matched nothing."""


class UnknownOptionError(UnknownNameError, EnvUsageError):
    """A ``reset(options=...)`` key or env kwarg that is neither a task selector nor a variant key."""

    def __init__(self, value: str, options: Iterable[str], what: str = "option"):
        options = sorted(options)
        UnknownNameError.__init__(self, what, value, options, hint=f"Valid keys: {', '.join(options)}.")


class VariantError(TooltrapError, ValueError):
    """A variant value is invalid (wrong type, not one of the allowed values, not valid for the task)."""

    def __init__(self, message: str, *, key: str | None = None, task_id: str | None = None):
        self.message = message
        self.key = key
        self.task_id = task_id
        where = ", ".join(f"{k}={v}" for k, v in (("variant", key), ("task", task_id)) if v is not None)
        super().__init__(f"[{where}] {message}" if where else message)


class TaskValidationError(TooltrapError, ValueError):
    """A task file or task record is invalid. Names the file, the task and the field."""

    def __init__(
        self, message: str, *, file: str | None = None, task_id: str | None = None, field: str | None = None
    ):
        self.file = file
        self.task_id = task_id
        self.field = field
        where = ", ".join(
            f"{k}={v}" for k, v in (("file", file), ("task", task_id), ("field", field)) if v is not None
        )
        super().__init__(f"[{where}] {message}" if where else message)


class ErrorKind(StrEnum):
    """Kinds of error observations returned to the agent (and counted in the trace)."""

    PARSE_ERROR = "parse_error"
    UNKNOWN_TOOL = "unknown_tool"
    INVALID_ARGUMENTS = "invalid_arguments"
    TOOL_ERROR = "tool_error"
    TOO_MANY_CALLS = "too_many_calls"
    NOT_AVAILABLE = "not_available"
    #: the simulated system itself failed (a bug in a backend): never the agent's fault
    BACKEND_ERROR = "backend_error"
    #: a call the agent sent after a call that ended the episode in the same action: recorded, never run,
    #: never charged (the attempt stays auditable in the trace)
    NOT_EXECUTED = "not_executed"


#: error kinds that are failures of the system, not of the agent: counted apart, never charged to it
SYSTEM_ERROR_KINDS: frozenset[str] = frozenset({ErrorKind.BACKEND_ERROR.value})


class ToolCallError(Exception):
    """Raised by a tool for an actionable error. Becomes an observation, not a crash."""

    def __init__(self, message: str, *, kind: ErrorKind = ErrorKind.TOOL_ERROR, hint: str | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.hint = hint

    def to_dict(self) -> dict[str, str]:
        out = {"type": str(self.kind), "message": self.message}
        if self.hint:
            out["hint"] = self.hint
        return out


class RecordNotFoundError(ToolCallError):
    """A tool was given the id of a record its collection does not hold (raised by
    :meth:`~tooltrap.envs.core.tools.Backend.find_record`; the agent sees a ``tool_error``)."""

    def __init__(self, message: str, *, collection: str, record_id: str, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.collection = collection
        self.record_id = record_id
