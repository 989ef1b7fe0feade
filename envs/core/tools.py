"""Tools: typed methods with Google docstrings; schemas are generated, never hand-written.

A backend groups the tools of one simulated system (email, calendar, ...)::

    class CalendarBackend(Backend):
        domain = "calendar"

        @tool("write", external=True)
        def calendar_cancel_event(self, event_id: str, notify_attendees: bool = True) -> dict:
            '''Cancel an event.

            Args:
                event_id: Id of the event to cancel.
                notify_attendees: Send a cancellation notice to every attendee.
            '''

The JSON schema (OpenAI function format) comes from the signature and the ``Args:`` section; the
arguments are validated by a strict pydantic model built from the same signature.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from .errors import ErrorKind, ToolCallError, ToolDefinitionError, did_you_mean

ToolKind = Literal["read", "write", "commit", "terminal"]
TOOL_KINDS: tuple[str, ...] = typing.get_args(ToolKind)
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_ARG_LINE = re.compile(r"^(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@dataclass(frozen=True)
class ToolMeta:
    kind: ToolKind
    external: bool


def tool(kind: ToolKind, *, external: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a backend method as a tool.

    Args:
        kind: ``read`` (never changes state), ``write``, ``commit`` (a consequential, irreversible
            write) or ``terminal`` (ends the episode).
        external: Whether the tool's effect can reach a party outside the organization.
    """
    if kind not in TOOL_KINDS:
        raise ToolDefinitionError(f"Unknown tool kind {kind!r}.{did_you_mean(kind, TOOL_KINDS)}")

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__tooltrap_tool__ = ToolMeta(kind=kind, external=external)  # type: ignore[attr-defined]
        return fn

    return mark


def parse_google_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {arg: description})."""
    lines = inspect.cleandoc(doc or "").splitlines()
    description: list[str] = []
    args: dict[str, str] = {}
    section = "description"
    current: str | None = None
    arg_indent: int | None = None
    for raw in lines:
        stripped = raw.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            section, current, arg_indent = "args", None, None
            continue
        if re.match(r"^(Returns|Return|Raises|Yields|Examples?|Notes?):\s*$", stripped):
            section = "other"
            continue
        if section == "description":
            description.append(stripped)
        elif section == "args" and stripped:
            indent = len(raw) - len(raw.lstrip())
            if arg_indent is None:
                arg_indent = indent
            match = _ARG_LINE.match(stripped)
            if indent <= arg_indent and match:
                current = match.group(1)
                args[current] = match.group(2).strip()
            elif current is not None:
                args[current] = (args[current] + " " + stripped).strip()
    text = " ".join(" ".join(description).split())
    return text, args


_SCALARS = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null"}
_BASIC = {
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    bool: {"type": "boolean"},
    list: {"type": "array"},
    dict: {"type": "object"},
    Any: {},
}


def hint_schema(hint: Any) -> dict[str, Any]:
    """JSON schema of a parameter type hint, written exactly as ``transformers.utils.get_json_schema``
    writes it, so a chat template renders the same tool text whether it gets our schema or a method
    (TRL's ``environment_factory`` passes methods)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is None:
        if hint in _BASIC:
            return dict(_BASIC[hint])
        raise ToolDefinitionError(f"Unsupported tool parameter type {hint!r}.")
    if origin is typing.Union or origin is types.UnionType:
        subtypes = [hint_schema(t) for t in args if t is not type(None)]
        if len(subtypes) == 1:
            out = subtypes[0]
        elif all(s.keys() == {"type"} and isinstance(s["type"], str) for s in subtypes):
            names = sorted({s["type"] for s in subtypes})
            out = {"type": names[0] if len(names) == 1 else names}
        else:
            out = {"anyOf": subtypes}
        if type(None) in args:
            out["nullable"] = True
        return out
    if origin is Literal:
        kinds = list(dict.fromkeys(_SCALARS[type(a)] for a in args))
        return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": list(args)}
    if origin is list:
        return {"type": "array", "items": hint_schema(args[0])} if args else {"type": "array"}
    if origin is dict:
        return (
            {"type": "object", "additionalProperties": hint_schema(args[1])}
            if len(args) == 2
            else {"type": "object"}
        )
    raise ToolDefinitionError(f"Unsupported tool parameter type {hint!r}.")


@dataclass
class ToolSpec:
    """Everything the engine knows about one tool."""

    name: str
    kind: ToolKind
    external: bool
    domain: str
    description: str
    parameters: dict[str, Any]
    validator: type[BaseModel]
    method: str
    param_docs: dict[str, str] = field(default_factory=dict)

    @property
    def schema(self) -> dict[str, Any]:
        """OpenAI function-calling format."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    @property
    def mutates(self) -> bool:
        return self.kind in ("write", "commit")

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Validate arguments; raise :class:`ToolCallError` with an actionable message."""
        if not isinstance(arguments, dict):
            raise ToolCallError(
                f"Arguments of {self.name} must be a JSON object, got {type(arguments).__name__}.",
                kind=ErrorKind.INVALID_ARGUMENTS,
            )
        try:
            model = self.validator.model_validate(arguments)
        except ValidationError as exc:
            problems = []
            for err in exc.errors(include_url=False, include_input=False)[:5]:
                loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
                msg = err["msg"]
                if err["type"] == "extra_forbidden":
                    msg = "unexpected argument." + did_you_mean(
                        str(err["loc"][0]), self.parameters["properties"]
                    )
                problems.append(f"{loc}: {msg}")
            raise ToolCallError(
                f"Invalid arguments for {self.name}: " + "; ".join(problems),
                kind=ErrorKind.INVALID_ARGUMENTS,
                hint="Required: " + ", ".join(self.parameters.get("required", [])) or None,
            ) from None
        return dict(model.__dict__)


def build_spec(fn: Callable[..., Any], domain: str) -> ToolSpec:
    """Build a :class:`ToolSpec` from a decorated function or method."""
    meta: ToolMeta | None = getattr(fn, "__tooltrap_tool__", None)
    if meta is None:
        raise ToolDefinitionError(f"{fn.__qualname__} is not decorated with @tool.")
    name = fn.__name__
    if not _NAME_RE.match(name):
        raise ToolDefinitionError(f"Tool name {name!r} must be a snake_case identifier.")
    description, arg_docs = parse_google_docstring(fn.__doc__ or "")
    if not description:
        raise ToolDefinitionError(f"Tool {name} needs a docstring with a description.")
    hints = typing.get_type_hints(fn)
    fields: dict[str, Any] = {}
    for pname, param in inspect.signature(fn).parameters.items():
        if pname == "self":
            continue
        if pname not in hints:
            raise ToolDefinitionError(f"Tool {name}: parameter {pname!r} has no type hint.")
        if pname not in arg_docs:
            raise ToolDefinitionError(f"Tool {name}: parameter {pname!r} is missing from the Args: section.")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (hints[pname], default)
    unknown_docs = set(arg_docs) - set(fields)
    if unknown_docs:
        raise ToolDefinitionError(f"Tool {name}: Args documents unknown parameters {sorted(unknown_docs)}.")
    validator = create_model(
        f"{name}_arguments", __config__=ConfigDict(extra="forbid", strict=True), **fields
    )
    properties = {
        pname: {**hint_schema(hint), "description": arg_docs[pname]} for pname, (hint, _) in fields.items()
    }
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    required = [p for p, (_, default) in fields.items() if default is ...]
    if required:
        parameters["required"] = required
    return ToolSpec(
        name=name,
        kind=meta.kind,
        external=meta.external,
        domain=domain,
        description=description,
        parameters=parameters,
        validator=validator,
        method=fn.__name__,
        param_docs=arg_docs,
    )


class Backend:
    """A simulated system exposing tools over a shared :class:`~tooltrap.envs.core.state.State`.

    Subclasses set ``domain`` and decorate methods with :func:`tool`. Tools must mutate the state only
    through ``self.state`` (insert/update/delete) so every write is recorded and can be rolled back.
    """

    domain: str = ""
    _specs: dict[str, ToolSpec]

    def __init__(self, state: Any):
        self.state = state

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        specs = {}
        for attr, value in vars(cls).items():
            if callable(value) and hasattr(value, "__tooltrap_tool__"):
                specs[attr] = build_spec(value, cls.domain)
        inherited = {}
        for base in reversed(cls.__mro__[1:]):
            inherited.update(getattr(base, "_specs", {}))
        cls._specs = {**inherited, **specs}

    @classmethod
    def tool_specs(cls) -> list[ToolSpec]:
        return list(cls._specs.values())


class Toolset:
    """The tools exposed in an episode: name -> spec and the backend class that owns it."""

    def __init__(self, backends: Iterable[type[Backend]], include: Iterable[str] | None = None):
        self.backend_classes = list(backends)
        self.specs: dict[str, ToolSpec] = {}
        self.owner: dict[str, type[Backend]] = {}
        for backend in self.backend_classes:
            for spec in backend.tool_specs():
                if spec.name in self.specs:
                    raise ToolDefinitionError(f"Duplicate tool name {spec.name!r}.")
                self.specs[spec.name] = spec
                self.owner[spec.name] = backend
        if include is not None:
            wanted = list(include)
            for name in wanted:
                if name not in self.specs:
                    raise ToolDefinitionError(f"Unknown tool {name!r}.{did_you_mean(name, self.specs)}")
            self.specs = {n: self.specs[n] for n in wanted}
        # sorted by name: the order TRL's environment_factory lists methods in, so prompts match
        self.schemas: list[dict[str, Any]] = [self.specs[n].schema for n in sorted(self.specs)]
        self.kinds: dict[str, str] = {name: s.kind for name, s in self.specs.items()}

    def __contains__(self, name: object) -> bool:
        return name in self.specs

    def __getitem__(self, name: str) -> ToolSpec:
        try:
            return self.specs[name]
        except KeyError:
            raise ToolCallError(
                f"Unknown tool {name!r}.{did_you_mean(name, self.specs)}",
                kind=ErrorKind.UNKNOWN_TOOL,
                hint="Available tools: " + ", ".join(self.specs),
            ) from None

    def names(self) -> list[str]:
        return list(self.specs)
