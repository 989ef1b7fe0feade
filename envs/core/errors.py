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
import heapq
import itertools
from collections.abc import Collection, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from enum import StrEnum
from typing import Any

#: Up to this many options every one is compared with the word (difflib's ratio, as ``get_close_matches``
#: does); beyond it the comparison is bounded: these first options, those one edit away and the word's
#: prefixes (:func:`close_matches`).
FULL_SCAN_OPTIONS = 64
#: Words longer than this get no one-edit candidates (an id, a key or a name is far shorter; the
#: candidates would number thousands): only the first :data:`FULL_SCAN_OPTIONS` options are compared.
MAX_EDIT_WORD_CHARS = 32
#: The characters an edit may insert or substitute: at most this many, those of the word and of the
#: compared options in the order they appear (the word's own first: a lower-case id alphabet is some 40
#: characters).
MAX_EDIT_ALPHABET = 48


def _one_edit(word: str, alphabet: str) -> Iterator[str]:
    """Every string one deletion, transposition, substitution or insertion (from ``alphabet``) away."""
    for i in range(len(word) + 1):
        head, tail = word[:i], word[i:]
        if tail:
            yield head + tail[1:]
            if len(tail) > 1:
                yield head + tail[1] + tail[0] + tail[2:]
            for c in alphabet:
                yield head + c + tail[1:]
        for c in alphabet:
            yield head + c + tail


def _first(options: Iterable[str], k: int) -> list[str]:
    """The first ``k`` options, deterministically: in order for a sequence or a mapping (insertion
    order), the ``k`` smallest of a set (whose iteration order changes with the hash seed)."""
    if isinstance(options, AbstractSet):
        return heapq.nsmallest(k, (str(o) for o in options))
    return [str(o) for o in itertools.islice(options, k)]


def close_matches(
    word: str, options: Iterable[str], n: int = 3, *, cutoff: float = 0.6, ignore_case: bool = False
) -> list[str]:
    """The options closest to ``word`` (``difflib.get_close_matches``: best first, at most ``n``, each
    at least ``cutoff`` similar), at a cost bounded whatever the number of options.

    With at most :data:`FULL_SCAN_OPTIONS` options, every one is compared, exactly as difflib does. With
    more (an agent's unknown id among a collection of 100,000 records), only the first
    :data:`FULL_SCAN_OPTIONS`, those one edit away from the word (a deletion, a transposition, a
    substitution or an insertion: what a mistyped id usually is) and the word's prefixes are compared,
    found by membership (a mapping or a set answers each in constant time): some hundreds of look-ups
    and some seventy comparisons, the same for 40 options and for a million. The suggestions are
    deterministic: the candidates do not depend on a set's iteration order, and difflib ranks them by
    score, then by text. ``ignore_case`` compares lower-cased text and returns the options as spelt
    (lower-casing every option first: for names, not for a collection of records).
    """
    word = str(word)
    if not isinstance(options, Collection) or isinstance(options, str):
        options = list(options)
    if ignore_case:
        # lower-cased text -> the (last) option spelt so; O(options): the callers that ignore case pass
        # names (env ids, file columns, labels), never a collection an agent's id is looked up in
        spelt = {str(option).lower(): str(option) for option in options}
        return [spelt[m] for m in close_matches(word.lower(), spelt, n, cutoff=cutoff)]
    if len(options) <= FULL_SCAN_OPTIONS:
        candidates = [str(o) for o in options]
    else:
        candidates = _first(options, FULL_SCAN_OPTIONS)
        if len(word) <= MAX_EDIT_WORD_CHARS:
            # membership must be constant time: a list or tuple is indexed once (its size is the caller's,
            # an agent's word cannot make it grow)
            members: Collection[Any] = options if isinstance(options, Mapping | AbstractSet) else set(options)
            seen = dict.fromkeys(word + "".join(candidates))
            alphabet = "".join(itertools.islice(seen, MAX_EDIT_ALPHABET))
            found = {e for e in _one_edit(word, alphabet) if e in members}
            # and the word's own prefixes: an id with something appended ('evt_12-copy')
            found |= {word[:i] for i in range(1, len(word) + 1) if word[:i] in members}
            candidates = list(dict.fromkeys([*candidates, *sorted(found)]))
    if not candidates:
        return []
    # a word this much longer than every candidate cannot reach the cutoff (ratio <= 2 * shorter /
    # total): skipping the comparison keeps a 30,000-character word as cheap as a short one
    longest = max(len(c) for c in candidates)
    if cutoff > 0 and len(word) > longest * (2 / cutoff - 1):
        return []
    return difflib.get_close_matches(word, candidates, n=n, cutoff=cutoff)


def did_you_mean(word: str, options: Iterable[str], n: int = 3, *, ignore_case: bool = False) -> str:
    """Return a "did you mean" suffix for ``word`` among ``options`` ('' when nothing is close); bounded
    cost whatever the number of options (:func:`close_matches`)."""
    matches = close_matches(word, options, n, ignore_case=ignore_case)
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
