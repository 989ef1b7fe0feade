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

Constraints are declared in the signature and enforced by the validator: ``Literal`` values become an
``enum``; ``Annotated[int, Field(ge=1, le=14)]`` becomes ``minimum`` / ``maximum`` (likewise
``gt``/``lt``, ``min_length``/``max_length`` for strings and lists, ``pattern``); with
``@tool(..., show_defaults=True)`` non-``None`` defaults appear as ``default``. The schema is written the
way ``transformers.utils.get_json_schema`` writes it (key order, unions, ``nullable``), so a chat
template renders the same text for our schema as for a method; transformers cannot express bounds or
defaults, so :attr:`ToolSpec.transformers_schema` is the same schema without them (what TRL renders
from the generated ``environment_factory`` methods).

A read tool whose result holds values *computed* from record fields (a threshold flag, a band, a
count) declares them, ``@tool("read", derived={"limit_covers_amount": ("payment_limit", "amount")})``,
so that a benchmark hiding a record field from observations (an evidence mask) can hide what was
computed from it: :meth:`ToolSpec.derived_paths` names those fields in a concrete result.
"""

from __future__ import annotations

import inspect
import itertools
import re
import types
import typing
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import annotated_types
from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo

from .errors import ErrorKind, RecordNotFoundError, ToolCallError, ToolDefinitionError, did_you_mean
from .trace import match_field_pattern, parse_field_pattern

ToolKind = Literal["read", "write", "commit", "terminal"]
TOOL_KINDS: tuple[str, ...] = typing.get_args(ToolKind)
#: How a terminal tool ends the episode: a final answer, a question back to the user, an explicit
#: abstention, or a hand-over to a human. Recorded on the trace as its ``disposition``.
Disposition = Literal["answer", "clarify", "abstain", "escalate"]
DISPOSITIONS: tuple[str, ...] = typing.get_args(Disposition)
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
#: Bounds on what one call's arguments may hold, whatever its tool's schema declares (a tool declares a
#: tighter array bound with ``Annotated[list[str], Field(max_length=50)]``: its ``maxItems`` wins). They
#: are the engine's, not the schema's: no tool has a legitimate use for more, and a model never sees them
#: in the schema (prompts and TRL's rendering stay as they are). A call over them is ``invalid_arguments``.
MAX_ITEMS = 100  #: items in any array in the arguments, at any depth, where the schema declares none
MAX_KEYS = 100  #: keys in any object inside the arguments, at any depth
#: Validation stops counting problems here (2,000 unknown argument names are one refusal, not 2,000)
MAX_PROBLEMS = 100
#: problems named in the error message (each unknown name with its did-you-mean); the rest are counted
SHOWN_PROBLEMS = 5
_ARG_LINE = re.compile(r"^(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


#: what a read tool declares about its result: field pattern -> the record fields it is computed from
DerivedFields = Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class ToolMeta:
    kind: ToolKind
    external: bool
    ends_as: Disposition | None = None
    show_defaults: bool = False
    derived: DerivedFields = field(default_factory=dict)


def _derived_fields(name: str, kind: str, derived: Mapping[str, str | Sequence[str]]) -> DerivedFields:
    """``derived`` checked and normalised (one source field becomes a 1-tuple)."""
    if kind != "read":
        raise ToolDefinitionError(
            f"{name}: derived= is for read tools (an observation mask only acts on what a read "
            f"returns), not {kind!r} ones."
        )
    if not isinstance(derived, Mapping):
        raise ToolDefinitionError(
            f"{name}: derived= maps result fields to the record fields they are computed from, e.g. "
            "derived={'limit_covers_amount': ('payment_limit', 'amount')}; "
            f"got {type(derived).__name__}."
        )
    out: dict[str, tuple[str, ...]] = {}
    for pattern, sources in derived.items():
        try:
            parse_field_pattern(pattern)
        except ValueError as exc:
            raise ToolDefinitionError(f"{name}: derived= {exc}") from None
        names = (sources,) if isinstance(sources, str) else tuple(sources)
        if not names or not all(isinstance(n, str) and n for n in names):
            raise ToolDefinitionError(
                f"{name}: derived[{pattern!r}] names the record fields the value is computed from: a "
                f"field name or a non-empty tuple of them (('payment_limit', 'amount')), got {sources!r}."
            )
        out[pattern] = names
    return out


def tool(
    kind: ToolKind,
    *,
    external: bool = False,
    ends_as: Disposition | None = None,
    show_defaults: bool = False,
    derived: Mapping[str, str | Sequence[str]] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark a backend method as a tool.

    A read tool that returns a value *computed* from record fields (not a stored field itself)
    declares it, so an observation mask that hides one of those fields also hides the value::

        @tool("read", derived={
            "limit_covers_amount": ("payment_limit", "amount"),  # a key at any depth
            "orders[*].over_limit": "payment_limit",             # a path: [*] is every list item
        })
        def finance_get_approval(self, invoice_id: str) -> dict: ...

    Args:
        kind: ``read`` (never changes state), ``write``, ``commit`` (a consequential, irreversible
            write) or ``terminal`` (ends the episode).
        external: Whether the tool's effect can reach a party outside the organization.
        ends_as: For a terminal tool, how it ends the episode: ``answer`` (the default), ``clarify``,
            ``abstain`` or ``escalate``. Generic agents and judges find terminals by this, never by name.
        show_defaults: Write the parameters' non-``None`` defaults into the schema (``"default"``).
        derived: Read tools only: result field pattern -> the record field (or fields) the value is
            computed from (a threshold, a bucketed label, a count, a sum, a text built from them). A
            pattern is a bare key, matched at any depth of the result, or a path from the result's
            root with ``[*]`` for every list item (``"orders[*].covered"``, ``$`` optional): see
            :func:`~tooltrap.envs.core.trace.parse_field_pattern`. Masking any of the source fields
            hides every field the pattern matches (:meth:`ToolSpec.derived_paths`); the value is
            omitted, never recomputed.
    """
    if kind not in TOOL_KINDS:
        raise ToolDefinitionError(f"Unknown tool kind {kind!r}.{did_you_mean(kind, TOOL_KINDS)}")
    if ends_as is not None and kind != "terminal":
        raise ToolDefinitionError(f"ends_as={ends_as!r} is only for terminal tools, not {kind!r} ones.")
    if kind == "terminal":
        ends_as = ends_as or "answer"
        if ends_as not in DISPOSITIONS:
            raise ToolDefinitionError(
                f"Unknown disposition {ends_as!r}.{did_you_mean(ends_as, DISPOSITIONS)} "
                f"Choose one of {', '.join(DISPOSITIONS)}."
            )

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        declared = _derived_fields(fn.__name__, kind, derived) if derived else {}
        fn.__tooltrap_tool__ = ToolMeta(kind, external, ends_as, show_defaults, declared)  # type: ignore[attr-defined]
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


_BOUND_KEYS = (
    (annotated_types.Ge, "ge", "minimum"),
    (annotated_types.Gt, "gt", "exclusiveMinimum"),
    (annotated_types.Le, "le", "maximum"),
    (annotated_types.Lt, "lt", "exclusiveMaximum"),
)
#: constraint keys in the order they are written (after the type keys, before default and description)
_CONSTRAINT_ORDER = (
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
)
#: Schema keys that express constraints transformers' ``get_json_schema`` cannot write.
CONSTRAINT_KEYS = frozenset({*_CONSTRAINT_ORDER, "default"})
_FIELD_CONSTRAINTS = frozenset({"ge", "gt", "le", "lt", "min_length", "max_length", "pattern"})


def _constraint_schema(extras: Sequence[Any], base: dict[str, Any], where: str) -> dict[str, Any]:
    """Schema keys for the ``Annotated`` metadata of one type (``Field(ge=1, le=14)``, ``MaxLen(5)``)."""
    found: dict[str, Any] = {}
    is_array = base.get("type") == "array"
    for extra in extras:
        if isinstance(extra, FieldInfo):
            unsupported = set(extra._attributes_set) - _FIELD_CONSTRAINTS  # noqa: SLF001
            if unsupported:
                raise ToolDefinitionError(
                    f"{where}: Field({', '.join(sorted(unsupported))}=...) is not supported in a tool "
                    "signature; put defaults in the signature and descriptions in the Args: section. "
                    f"Supported: {', '.join(sorted(_FIELD_CONSTRAINTS))}."
                )
            items: Sequence[Any] = extra.metadata
        else:
            items = [extra]
        for item in items:
            if isinstance(item, annotated_types.Interval):
                for _cls, attr, key in _BOUND_KEYS:
                    if getattr(item, attr) is not None:
                        found[key] = getattr(item, attr)
                continue
            for cls, attr, key in _BOUND_KEYS:
                if isinstance(item, cls):
                    found[key] = getattr(item, attr)
                    break
            else:
                if isinstance(item, annotated_types.MinLen):
                    found["minItems" if is_array else "minLength"] = item.min_length
                elif isinstance(item, annotated_types.MaxLen):
                    found["maxItems" if is_array else "maxLength"] = item.max_length
                elif isinstance(getattr(item, "pattern", None), str):
                    found["pattern"] = item.pattern
                else:
                    raise ToolDefinitionError(f"{where}: unsupported constraint {item!r}.")
    return {key: found[key] for key in _CONSTRAINT_ORDER if key in found}


def hint_schema(hint: Any, where: str = "parameter") -> dict[str, Any]:
    """JSON schema of a parameter type hint, written exactly as ``transformers.utils.get_json_schema``
    writes it, so a chat template renders the same tool text whether it gets our schema or a method
    (TRL's ``environment_factory`` passes methods). ``Annotated`` constraints add the keys of
    :data:`CONSTRAINT_KEYS` after the type keys."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        base = hint_schema(args[0], where)
        return {**base, **_constraint_schema(args[1:], base, where)}
    if origin is None:
        if hint in _BASIC:
            return dict(_BASIC[hint])
        raise ToolDefinitionError(f"Unsupported tool parameter type {hint!r}.")
    if origin is typing.Union or origin is types.UnionType:
        members = [t for t in args if t is not type(None)]
        if len(members) > 1 and any(typing.get_origin(t) is typing.Annotated for t in members):
            raise ToolDefinitionError(
                f"{where}: constraints on one member of a union of several types are not supported; "
                "constrain the whole parameter instead."
            )
        subtypes = [hint_schema(t, where) for t in members]
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
        return {"type": "array", "items": hint_schema(args[0], where)} if args else {"type": "array"}
    if origin is dict:
        return (
            {"type": "object", "additionalProperties": hint_schema(args[1], where)}
            if len(args) == 2
            else {"type": "object"}
        )
    raise ToolDefinitionError(f"Unsupported tool parameter type {hint!r}.")


def without_constraints(schema: Any) -> Any:
    """``schema`` without the keys transformers cannot write (:data:`CONSTRAINT_KEYS`), recursively."""
    if isinstance(schema, list):
        return [without_constraints(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in CONSTRAINT_KEYS:
            continue
        if key == "properties":
            out[key] = {name: without_constraints(sub) for name, sub in value.items()}
        elif key in ("items", "anyOf", "additionalProperties", "prefixItems"):
            out[key] = without_constraints(value)
        else:
            out[key] = value
    return out


#: what the compact schemas leave out of the parameters, besides the constraints
COMPACT_DROPPED_KEYS = frozenset({"description", "nullable"})


def compact_parameters(schema: Any) -> Any:
    """``schema`` (a tool's parameters) without constraints (:func:`without_constraints`), parameter
    descriptions and ``nullable`` marks, recursively: names, types, enums and the required list remain."""
    if isinstance(schema, list):
        return [compact_parameters(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in without_constraints(schema).items():
        if key in COMPACT_DROPPED_KEYS:
            continue
        if key == "properties":  # parameter names are kept whatever they are called ("description" too)
            out[key] = {name: compact_parameters(sub) for name, sub in value.items()}
        elif key in ("items", "anyOf", "additionalProperties", "prefixItems"):
            out[key] = compact_parameters(value)
        else:
            out[key] = value
    return out


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
    #: for terminal tools: how the episode ends (see :data:`DISPOSITIONS`)
    ends_as: str | None = None
    #: for read tools: result field pattern -> the record fields its value is computed from
    #: (``@tool(..., derived=...)``)
    derived: DerivedFields = field(default_factory=dict)

    def derived_paths(self, result: Any, fields: Collection[str]) -> list[str]:
        """The paths of ``result`` that the tool declares as computed from any of ``fields`` (record
        field names): what hiding those fields must hide too, beyond the fields themselves."""
        wanted = set(fields)
        return [
            path
            for pattern, sources in self.derived.items()
            if not wanted.isdisjoint(sources)
            for path in match_field_pattern(result, pattern)
        ]

    @property
    def schema(self) -> dict[str, Any]:
        """OpenAI function-calling format, with every declared constraint."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    @property
    def transformers_schema(self) -> dict[str, Any]:
        """The schema as ``transformers.utils.get_json_schema`` renders the generated method (what TRL's
        ``environment_factory`` puts in the prompt): :attr:`schema` without bounds and defaults."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": without_constraints(self.parameters),
            },
        }

    @property
    def compact_schema(self) -> dict[str, Any]:
        """A shorter schema for small models' prompts: the tool's description (which says what its
        defaults reach), the parameters' names, types, enums and the required list; no parameter
        descriptions, ``nullable`` marks, bounds or defaults (``tool_schemas="compact"``)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": compact_parameters(self.parameters),
            },
        }

    @property
    def mutates(self) -> bool:
        return self.kind in ("write", "commit")

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Validate arguments; raise :class:`ToolCallError` with an actionable message.

        The cost is bounded whatever the agent sends: unknown argument names and containers over the
        bounds (:data:`MAX_ITEMS`, :data:`MAX_KEYS`, or the tool's own ``maxItems``) are found by a walk
        that never looks inside an over-long container; only what is left reaches the validator; and
        the report stops at :data:`MAX_PROBLEMS` problems (the first few named, with did-you-mean)."""
        if not isinstance(arguments, dict):
            raise ToolCallError(
                f"Arguments of {self.name} must be a JSON object, got {type(arguments).__name__}.",
                kind=ErrorKind.INVALID_ARGUMENTS,
            )
        properties: dict[str, Any] = self.parameters["properties"]
        # unknown names first, at most MAX_PROBLEMS of them: 2,000 made-up keys cost 100 look-ups
        unknown = list(itertools.islice((k for k in arguments if k not in properties), MAX_PROBLEMS))
        known_items = ((k, v) for k, v in arguments.items() if k in properties)
        oversized = dict(itertools.islice(_oversized(known_items, properties), MAX_PROBLEMS))
        if not unknown and not oversized:
            try:
                return dict(self.validator.model_validate(arguments).__dict__)
            except ValidationError as exc:
                self._refuse(exc, [], {})
        if len(unknown) + len(oversized) >= MAX_PROBLEMS:
            self._refuse(None, unknown, oversized)
        # validate what is left: the known arguments, an over-long container replaced by an empty one
        # (it is reported already; the validator must not walk its items, nor call it missing)
        known = {
            k: (type(v)() if k in oversized else v)
            for k, v in arguments.items()
            if k in properties  # (only a top-level key can be in ``oversized`` here)
        }
        try:
            self.validator.model_validate(known)
        except ValidationError as exc:
            self._refuse(exc, unknown, oversized)
        self._refuse(None, unknown, oversized)

    def _refuse(
        self, exc: ValidationError | None, unknown: list[str], oversized: dict[str, str]
    ) -> typing.NoReturn:
        """Raise the ``invalid_arguments`` error: the validator's problems (those not about a container
        reported as over-long), the over-long containers, then the unknown names; the first
        :data:`SHOWN_PROBLEMS` are named, the count stops at :data:`MAX_PROBLEMS`."""
        problems: list[str] = []
        if exc is not None:
            # the validator's error count is bounded too: every container it sees is within the bounds
            for err in exc.errors(include_url=False, include_input=False):
                loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
                if loc.split(".")[0] not in oversized:
                    problems.append(f"{loc}: {err['msg']}")
        problems += [f"{loc}: {msg}" for loc, msg in oversized.items()]
        names = self.parameters["properties"]
        problems += [
            f"{key}: unexpected argument." + (did_you_mean(str(key), names) if i < SHOWN_PROBLEMS else "")
            for i, key in enumerate(unknown)
        ]
        stopped = len(problems) >= MAX_PROBLEMS
        problems = problems[:MAX_PROBLEMS]
        shown = "; ".join(problems[:SHOWN_PROBLEMS])
        if stopped:
            shown += (
                f"; and more: validation stopped at the first {MAX_PROBLEMS} problems. Fix these and "
                "send the call again."
            )
        elif len(problems) > SHOWN_PROBLEMS:
            shown += f"; and {len(problems) - SHOWN_PROBLEMS} more."
        raise ToolCallError(
            f"Invalid arguments for {self.name}: {shown}",
            kind=ErrorKind.INVALID_ARGUMENTS,
            hint="Required: " + ", ".join(self.parameters.get("required", [])) or None,
        ) from None


def _oversized(
    arguments: Iterable[tuple[str, Any]], properties: Mapping[str, Any]
) -> Iterator[tuple[str, str]]:
    """(path, problem) for each array or object in the ``arguments`` (name, value) pairs over its
    bound: the schema's ``maxItems`` where the tool declares one, else :data:`MAX_ITEMS` items /
    :data:`MAX_KEYS` keys. Iterative (an argument may be nested 900 deep) and never inside an over-long
    container, so the cost is the number of containers within the bounds, whatever their size."""
    stack: list[tuple[Any, Mapping[str, Any], str]] = [
        (v, properties.get(k) or {}, str(k))
        for k, v in reversed(list(arguments))
        if isinstance(v, list | dict)
    ]
    while stack:
        value, schema, path = stack.pop()
        if "anyOf" in schema:  # a union: the member of the value's JSON type
            wanted = "array" if isinstance(value, list) else "object"
            schema = next((m for m in schema["anyOf"] if m.get("type") == wanted), {})
        if isinstance(value, list):
            limit = schema.get("maxItems", MAX_ITEMS)
            if len(value) > limit:
                yield path, f"{len(value)} items; at most {limit} are accepted."
                continue
            items = schema.get("items") or {}
            stack += [
                (v, items, f"{path}.{i}")
                for i, v in reversed(list(enumerate(value)))
                if isinstance(v, list | dict)
            ]
        else:
            if len(value) > MAX_KEYS:
                yield path, f"an object of {len(value)} keys; at most {MAX_KEYS} are accepted."
                continue
            inner = schema.get("properties") or {}
            other = schema.get("additionalProperties")
            rest = other if isinstance(other, dict) else {}
            stack += [
                (v, inner.get(k) or rest, f"{path}.{k}")
                for k, v in reversed(value.items())
                if isinstance(v, list | dict)
            ]


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
    hints = typing.get_type_hints(fn, include_extras=True)
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
    properties = {}
    for pname, (hint, default) in fields.items():
        prop = hint_schema(hint, f"Tool {name}: parameter {pname!r}")
        if meta.show_defaults and default is not ... and default is not None:
            prop["default"] = list(default) if isinstance(default, tuple) else default
        prop["description"] = arg_docs[pname]
        properties[pname] = prop
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
        ends_as=meta.ends_as,
        derived=dict(meta.derived),
    )


class Backend:
    """A simulated system exposing tools over a shared :class:`~tooltrap.envs.core.state.State`.

    Subclasses set ``domain`` and decorate methods with :func:`tool`. Tools must mutate the state only
    through ``self.state`` (insert/update/delete) so every write is recorded and can be rolled back.
    """

    domain: str = ""
    #: how :meth:`find_record` words a missing record: ``{what}`` is the record's noun, ``{id}`` the id
    #: the tool was given (a benchmark's backends keep the wording their agents have always seen)
    missing_record: ClassVar[str] = "No {what} {id!r}."
    #: the hint of a missing record when the call site gives none (``{what}``: the noun); None: no hint
    missing_record_hint: ClassVar[str | None] = None
    _specs: dict[str, ToolSpec]

    def __init__(self, state: Any, variant: Any = None):
        self.state = state
        #: the episode's variant (the benchmark's variant model), for tools whose behaviour depends on it
        self.variant = variant

    def find_record(
        self, collection: str, record_id: str, *, what: str, hint: str | None = None
    ) -> dict[str, Any]:
        """A copy of one record of ``collection`` (the caller may change it: the state's stays as it
        is), or :class:`~tooltrap.envs.core.errors.RecordNotFoundError` naming what is missing, with a
        did-you-mean among the collection's ids and ``hint`` (default: ``missing_record_hint``)."""
        found = self.state.get(collection, record_id)
        if found is None:
            known = self.state.collection(collection)
            if hint is None and self.missing_record_hint is not None:
                hint = self.missing_record_hint.format(what=what)
            raise RecordNotFoundError(
                self.missing_record.format(what=what, id=record_id) + did_you_mean(record_id, known),
                collection=collection,
                record_id=record_id,
                hint=hint,
            )
        return dict(found)

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
        #: the schemas as TRL renders the generated methods (no bounds or defaults)
        self.transformers_schemas: list[dict[str, Any]] = [
            self.specs[n].transformers_schema for n in sorted(self.specs)
        ]
        #: the compact schemas (``tool_schemas="compact"``)
        self.compact_schemas: list[dict[str, Any]] = [
            self.specs[n].compact_schema for n in sorted(self.specs)
        ]
        self.kinds: dict[str, str] = {name: s.kind for name, s in self.specs.items()}
        #: terminal tool -> how it ends the episode (answer, clarify, abstain, escalate)
        self.terminals: dict[str, str] = {
            name: s.ends_as or "answer" for name, s in self.specs.items() if s.kind == "terminal"
        }

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

    def key(self) -> tuple[str, ...]:
        """The tool names in schema order: equal keys, equal tool prompts."""
        return tuple(sorted(self.specs))

    def terminal_for(self, *dispositions: str) -> str | None:
        """The first terminal tool ending the episode with one of ``dispositions`` (in that order)."""
        for wanted in dispositions:
            for name, ends_as in self.terminals.items():
                if ends_as == wanted:
                    return name
        return None
