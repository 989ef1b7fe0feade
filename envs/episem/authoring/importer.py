"""Import a copy of the EpiSEM authors' corpus (JSONL rows a user obtains themselves; nothing of it is
shipped: it carries no license).

A row has: ``id``, ``family_id``, ``domain``, ``risk_type``, ``user_goal``, ``world_state``, ``tools``
(``[{name, description, kind, parameters, returns}]``, ``kind`` read | prepare | commit),
``evidence`` (``[{id, subject, predicate, value, role, exposures: [{tool, path}]}]``),
``safety_rule`` (``{id, description, commit_tool, unsafe_if, minimal_witness_sets}``),
``expected_behavior``, and ``safe_twin`` (``{id, world_state, evidence_overrides: [{id, value}],
expected_behavior}``).

How a row becomes a task of this library:

* **Tools** are compiled from the row's declarations into typed methods of one generated backend (the
  schema comes from ``parameters``; JSON types map to Python types, ``enum`` to ``Literal``). A read
  tool's result is assembled from the atoms it exposes: each exposure path is set to the atom's value
  in the episode's world; where several atoms share a path, the call's arguments pick the one whose
  subject they name. A prepare tool records a draft; a commit tool records the commit and never checks
  legality. Two rows declaring one tool name with different parameters get ``name_2``, ``name_3``...
* **State**: one record per evidence subject (collection ``records``), its fields the atoms'
  predicates; the row's ``world_state`` is kept in the state's context, unread.
* **Rule**: ``unsafe_if`` is either a rule of this library (``{"type": "exceeds", ...}``) or an
  expression over evidence ids: comparisons (``==``, ``!=``, ``>``, ``>=``, ``<``, ``<=``, ``in``,
  ``not in``) of an id with another id or a literal (number, quoted string, ``true``/``false``/``null``,
  a ``[...]`` list), joined by ``and`` / ``or`` / ``not`` and parentheses.
* **Gold** (the rows have none): the careful reads are one call per read tool and subject it exposes,
  with its required arguments naming the subject; the commit's required arguments are filled from the
  atoms whose predicate is the parameter's name, else the first subject. The unsafe gold escalates or
  abstains as ``expected_behavior`` says.

Every row is checked when the file loads, against a schema of the row format (:class:`AuthorRow`:
types, required fields, a near-miss of a known key such as ``expected_behaviour``; other keys the
authors' rows may carry are left alone) and the limits of user data (UTF-8, no NaN or infinity,
nesting, string sizes, at most :data:`MAX_TOOLS` tools and :data:`MAX_EVIDENCE` atoms a row, exposure
paths of at most :data:`MAX_PATH_PARTS` steps with list indexes up to :data:`MAX_PATH_INDEX`, rule
expressions nested at most :data:`MAX_EXPRESSION_DEPTH` levels), so that no row is accepted silently,
fails later in an episode or makes the import hang. Row ids are unique (a second row under an id was
played twice and the first never). Errors are :class:`~tooltrap.envs.core.TaskValidationError` naming
the file, the row (its id and line) and the field of the row (``safety_rule.unsafe_if``,
``evidence.3.exposures.0.path``).

The import's cost is linear in the rows: each row's exposures travel in its own world's context (a
read compiles from them alone), so 4,000 rows import and check in seconds
(``python scripts/broken_files.py`` measures it).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from tooltrap.envs.core import Backend, TaskValidationError, ToolCall, ToolCallError, did_you_mean, tool
from tooltrap.envs.core.trace import parse_path
from tooltrap.envs.core.usage import (
    MAX_ROWS,
    DataLimitError,
    UnreadableFileError,
    check_json_value,
    describe,
    dotted,
    json_problem,
    loads_json,
    read_user_text,
)

from ..rules import LegalityRule
from ..task import MAX_PATH_INDEX, MAX_PATH_PARTS, EpiSEMTask, check_path
from ..tools import DOMAINS

COLLECTION = "records"
KINDS = {"read": "read", "prepare": "write", "write": "write", "commit": "commit"}
_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict,
}


class ImportError_(TaskValidationError):  # noqa: N801 - not the builtin
    """A row of an imported corpus cannot be read."""


#: the most tools and evidence atoms one row may declare (a family has a handful of each; the checks
#: of a row call every read tool on every record, so these bound an import's cost)
MAX_TOOLS = 64
MAX_EVIDENCE = 256
#: the deepest nesting of parentheses, ``not`` and ``[...]`` in an ``unsafe_if`` expression
MAX_EXPRESSION_DEPTH = 32
#: the longest ``unsafe_if`` expression
MAX_EXPRESSION_CHARS = 10_000
#: context key of a row's exposures in its world (``{tool: [[path, subject, predicate], ...]}``)
EXPOSURE_CONTEXT = "imported_exposures"


# -- the row format -----------------------------------------------------------------------------------------
class _RowModel(BaseModel):
    """Base of the row format's models: strict types; keys the format does not name are left alone (the
    authors' rows may carry more than this importer reads), except a near-miss of a known key
    (``expected_behaviour``, ``safe_twn``), which is a typo."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _no_typos(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            known = _FIELDS.get(cls)
            if known is None:
                known = _FIELDS[cls] = frozenset(cls.model_fields)
            for key in data:
                if key not in known and isinstance(key, str):
                    hint = did_you_mean(key, sorted(known))
                    if hint:
                        raise ValueError(f"{key}: not a key of the row format.{hint}")
        return data


#: each row model's field names (looked up once: the check runs on every object of every row)
_FIELDS: dict[type[BaseModel], frozenset[str]] = {}


Name = Annotated[str, Field(min_length=1, max_length=200, pattern=r"\S")]
ToolName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]
Scalar = str | int | float | bool


class ParamSchema(_RowModel):
    """A tool parameter's JSON schema, as far as the importer types it."""

    type: Literal["string", "integer", "number", "boolean", "object", "array"] = "string"
    description: str = ""
    enum: list[Scalar] | None = Field(default=None, min_length=1, max_length=100)
    items: ParamSchema | None = None

    @model_validator(mode="after")
    def _enum_unique(self) -> ParamSchema:
        if self.enum is not None and len({(type(v), v) for v in self.enum}) != len(self.enum):
            raise ValueError("enum: a value is listed twice")
        return self


class Parameters(_RowModel):
    type: Literal["object"] = "object"
    properties: dict[ToolName, ParamSchema] = Field(default_factory=dict, max_length=64)
    required: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _required_declared(self) -> Parameters:
        for i, name in enumerate(self.required):
            if name not in self.properties:
                raise ValueError(
                    f"required.{i}: {name!r} is not a declared parameter.{did_you_mean(name, self.properties)}"
                )
        if len(set(self.required)) != len(self.required):
            raise ValueError("required: a parameter is listed twice")
        return self


class RowTool(_RowModel):
    name: ToolName
    description: str = ""
    kind: Literal["read", "prepare", "write", "commit"] = "read"
    parameters: Parameters = Field(default_factory=Parameters)
    returns: Any = None


class RowExposure(_RowModel):
    tool: Name
    path: str

    @model_validator(mode="after")
    def _path(self) -> RowExposure:
        problem = check_path(self.path)
        if problem:
            raise ValueError(f"path: {problem}")
        return self


class RowEvidence(_RowModel):
    id: Name
    subject: Name
    #: the record field (``id`` is the record's own key)
    predicate: Name
    value: Any
    role: Literal["critical", "redundant", "contextual", "irrelevant"] = "critical"
    exposures: list[RowExposure] = Field(default_factory=list, max_length=32)

    @model_validator(mode="after")
    def _not_the_key(self) -> RowEvidence:
        if self.predicate == "id":
            raise ValueError("predicate: 'id' is the record's own key; name the field the fact is")
        return self


class RowRule(_RowModel):
    id: str | None = None
    description: str = ""
    commit_tool: Name
    unsafe_if: str | dict[str, Any]
    minimal_witness_sets: list[list[str]] = Field(min_length=1)


class Override(_RowModel):
    id: Name
    value: Any


class SafeTwin(_RowModel):
    id: str | None = None
    world_state: Any = None
    evidence_overrides: list[Override] = Field(min_length=1)
    expected_behavior: str | None = None


class AuthorRow(_RowModel):
    """One row of the authors' format (see the module docstring), with the references between its
    parts checked: tool names and evidence ids unique, exposures and the commit tool name declared tools,
    the commit tool is a commit, overrides name evidence once."""

    id: Name
    family_id: Name
    domain: str
    risk_type: Name
    user_goal: Name = Field(max_length=100_000)
    world_state: Any = None
    tools: list[RowTool] = Field(min_length=1, max_length=MAX_TOOLS)
    evidence: list[RowEvidence] = Field(min_length=1, max_length=MAX_EVIDENCE)
    safety_rule: RowRule
    expected_behavior: str | None = None
    safe_twin: SafeTwin

    @model_validator(mode="after")
    def _references(self) -> AuthorRow:
        tools: dict[str, int] = {}
        for i, spec in enumerate(self.tools):
            if spec.name in tools:
                same = "the same" if self.tools[tools[spec.name]] == spec else "another"
                raise ValueError(
                    f"tools.{i}.name: {spec.name!r} is declared twice in the row (tools.{tools[spec.name]}, "
                    f"with {same} declaration)"
                )
            tools[spec.name] = i
        atoms: dict[str, int] = {}
        for i, item in enumerate(self.evidence):
            if item.id in atoms:
                raise ValueError(
                    f"evidence.{i}.id: duplicate evidence id {item.id!r} (evidence.{atoms[item.id]})"
                )
            atoms[item.id] = i
            for j, e in enumerate(item.exposures):
                if e.tool not in tools:
                    raise ValueError(
                        f"evidence.{i}.exposures.{j}.tool: evidence {item.id}: exposure names an undeclared "
                        f"tool {e.tool!r}.{did_you_mean(e.tool, tools)}"
                    )
                if self.tools[tools[e.tool]].kind != "read":
                    raise ValueError(f"evidence.{i}.exposures.{j}.tool: {e.tool!r} is not a read tool")
        by_tool: dict[str, list[str]] = {}
        for item in self.evidence:
            for e in item.exposures:
                if e.path not in by_tool.setdefault(e.tool, []):
                    by_tool[e.tool].append(e.path)
        for name, paths in by_tool.items():
            conflict = _shape_conflict(paths)
            if conflict:
                raise ValueError(f"tools.{tools[name]}: {conflict}")
        commit = self.safety_rule.commit_tool
        if commit not in tools:
            raise ValueError(
                f"safety_rule.commit_tool: {commit!r} is not a declared tool.{did_you_mean(commit, tools)}"
            )
        if self.tools[tools[commit]].kind != "commit":
            raise ValueError(
                f"safety_rule.commit_tool: {commit!r} is declared as a {self.tools[tools[commit]].kind} tool"
            )
        seen: set[str] = set()
        for i, o in enumerate(self.safe_twin.evidence_overrides):
            if o.id not in atoms:
                raise ValueError(
                    f"safe_twin.evidence_overrides.{i}.id: unknown evidence {o.id!r}.{did_you_mean(o.id, atoms)}"
                )
            if o.id in seen:
                raise ValueError(f"safe_twin.evidence_overrides.{i}.id: {o.id!r} is overridden twice")
            seen.add(o.id)
        _domain(self.domain)
        _expected(self.expected_behavior)
        return self


# -- unsafe_if expressions -------------------------------------------------------------------------------
_TOKEN = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d+)?)|(?P<str>'[^']*'|\"[^\"]*\")|(?P<op>==|!=|>=|<=|>|<|\(|\)|\[|\]|,)"
    r"|(?P<word>[A-Za-z_][\w.\-]*))"
)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            if text[pos:].strip():
                raise ValueError(f"cannot read {text[pos : pos + 12]!r}")
            break
        kind = match.lastgroup or "op"
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def parse_expression(text: str, atoms: Sequence[str]) -> dict[str, Any]:
    """An ``unsafe_if`` expression as this library's rule data (see the module docstring). Raises
    ``ValueError`` for an expression it cannot read, one longer than :data:`MAX_EXPRESSION_CHARS` or
    nested deeper than :data:`MAX_EXPRESSION_DEPTH` (parentheses, ``not``, lists): the parser recurses
    once a level, and a thousand levels used to end in a ``RecursionError``."""
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ValueError(f"an expression of {len(text):,} characters; the limit is {MAX_EXPRESSION_CHARS:,}")
    tokens = _tokens(text)
    pos = 0
    depth = 0

    def deeper() -> None:
        nonlocal depth
        depth += 1
        if depth > MAX_EXPRESSION_DEPTH:
            raise ValueError(f"nested deeper than {MAX_EXPRESSION_DEPTH} levels")

    def peek() -> tuple[str, str] | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> tuple[str, str]:
        nonlocal pos
        if pos >= len(tokens):
            raise ValueError("the expression ends too early")
        pos += 1
        return tokens[pos - 1]

    def literal() -> Any:
        nonlocal depth
        kind, text_ = take()
        if kind == "num":
            if len(text_) > 30:
                raise ValueError(f"a number of {len(text_)} characters; write at most 30 digits")
            return float(text_) if "." in text_ else int(text_)
        if kind == "str":
            return text_[1:-1]
        if kind == "word" and text_ in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[text_]
        if text_ == "[":
            deeper()
            items = []
            while peek() != ("op", "]"):
                items.append(literal())
                if peek() == ("op", ","):
                    take()
                elif peek() != ("op", "]"):
                    raise ValueError("expected ',' or ']' in a list")
            take()
            depth -= 1
            return items
        raise ValueError(f"expected a value, got {text_!r}")

    def operand() -> tuple[str | None, Any]:
        kind, text_ = tokens[pos] if pos < len(tokens) else ("", "")
        if kind == "word" and text_ in atoms:
            take()
            return text_, None
        if kind == "word" and text_ not in ("true", "false", "null"):
            raise ValueError(f"unknown evidence id {text_!r}.{did_you_mean(text_, atoms)}")
        return None, literal()

    def comparison() -> dict[str, Any]:
        nonlocal depth
        if peek() == ("op", "("):
            take()
            deeper()
            inner = disjunction()
            if take() != ("op", ")"):
                raise ValueError("missing ')'")
            depth -= 1
            return inner
        if peek() == ("word", "not"):
            take()
            deeper()
            inner = {"type": "not", "rule": comparison()}
            depth -= 1
            return inner
        left, _ = operand()
        if left is None:
            raise ValueError("a comparison starts with an evidence id")
        kind, op = take()
        if (kind, op) == ("word", "not"):
            if take() != ("word", "in"):
                raise ValueError("expected 'in' after 'not'")
            op = "not in"
        elif op not in ("==", "!=", ">", ">=", "<", "<=", "in"):
            raise ValueError(f"expected a comparison, got {op!r}")
        right, value = operand()
        rule: dict[str, Any] = {"type": "compare", "left": left, "op": op}
        if right is not None:
            rule["right"] = right
        else:
            rule["value"] = value
        return rule

    def joined(word: str, kind: str, part: Any) -> dict[str, Any]:
        parts = [part()]
        while peek() == ("word", word):
            take()
            parts.append(part())
        return parts[0] if len(parts) == 1 else {"type": kind, "rules": parts}

    def disjunction() -> dict[str, Any]:  # "or" binds looser than "and"
        return joined("or", "any", lambda: joined("and", "all", comparison))

    rule = disjunction()
    if pos != len(tokens):
        raise ValueError(f"unexpected {tokens[pos][1]!r}")
    return rule


# -- tools --------------------------------------------------------------------------------------------------
def _python_type(schema: Mapping[str, Any]) -> Any:
    if "enum" in schema and schema["enum"]:
        return Literal[tuple(schema["enum"])]  # type: ignore[valid-type]
    kind = schema.get("type", "string")
    if kind == "array":
        return list[_python_type(schema.get("items", {"type": "string"}))]  # type: ignore[misc]
    if kind not in _JSON_TYPES:
        raise ValueError(f"unsupported parameter type {kind!r}")
    return _JSON_TYPES[kind]


def _docstring(description: str, params: Mapping[str, Any]) -> str:
    lines = [description.strip() or "A tool.", "", "Args:"]
    for name, schema in params.items():
        lines.append(f"    {name}: {str(schema.get('description') or name).strip()}")
    return "\n".join(lines) if params else lines[0]


def _make_tool(spec: Mapping[str, Any], name: str) -> Any:
    """A typed method for one declared tool: read results compiled from atoms, prepare and commit calls
    recorded in the state."""
    import inspect

    kind = KINDS[spec.get("kind", "read")]
    params: Mapping[str, Any] = (spec.get("parameters") or {}).get("properties") or {}
    required = set((spec.get("parameters") or {}).get("required") or [])
    declared = spec["name"]

    def method(self: Any, **arguments: Any) -> dict:
        if kind == "read":
            return self.compile_result(declared, {k: v for k, v in arguments.items() if v is not None})
        table = "drafts" if kind == "write" else "commits"
        entry = {"tool": declared, "arguments": {k: v for k, v in arguments.items() if v is not None}}
        record_id = self.state.insert(table, entry, prefix="DRAFT" if kind == "write" else "COMMIT")
        return {"id": record_id, "status": "prepared" if kind == "write" else "done"}

    annotations: dict[str, Any] = {}
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for pname in sorted(params, key=lambda p: p not in required):  # required first
        hint = _python_type(params[pname])
        if pname in required:
            annotations[pname] = hint
            parameters.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, annotation=hint))
        else:
            annotations[pname] = hint | None
            parameters.append(
                inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=hint | None)
            )
    annotations["return"] = dict
    method.__name__ = method.__qualname__ = name
    method.__doc__ = _docstring(spec.get("description", ""), params)
    method.__annotations__ = annotations
    method.__signature__ = inspect.Signature(parameters, return_annotation=dict)  # type: ignore[attr-defined]
    return tool(kind)(method)  # type: ignore[arg-type]


class ImportedBackend(Backend):
    """Base of the generated backend of an imported corpus. A read tool's result is compiled from the
    exposures of the episode's own row (in its world's context, :data:`EXPOSURE_CONTEXT`): rows that
    share a tool never see each other's paths, and a read costs what its row declares, not what the
    whole corpus does."""

    domain = "imported"

    def compile_result(self, tool_name: str, arguments: Mapping[str, Any]) -> dict:
        named = {str(v) for v in arguments.values()}
        by_path: dict[str, list[tuple[str, str]]] = {}
        declared = self.state.context.get(EXPOSURE_CONTEXT, {})
        for path, subject, predicate in declared.get(tool_name, []):
            by_path.setdefault(path, []).append((subject, predicate))
        result: dict[str, Any] = {}
        for path, owners in by_path.items():
            if len(owners) > 1:
                owners = [o for o in owners if _names(o[0], named)]
                if len(owners) != 1:
                    continue
            subject, predicate = owners[0]
            record = self.state.get(COLLECTION, subject)
            if record is None or predicate not in record:
                continue
            _set_path(result, path, record[predicate])
        if not result:
            raise ToolCallError(
                f"{tool_name} found nothing for {dict(arguments)}.",
                hint="Name a record the request mentions.",
            )
        return result


def _names(subject: str, named: set[str]) -> bool:
    tail = re.split(r"[:/]", subject)[-1]
    return subject in named or tail in named


@functools.lru_cache(maxsize=1 << 16)
def _path_parts(path: str) -> tuple[str | int, ...]:
    """A path's steps, parsed once (a read compiles the same few paths again and again)."""
    parts = tuple(parse_path(path))
    if len(parts) > MAX_PATH_PARTS or any(isinstance(p, int) and p > MAX_PATH_INDEX for p in parts):
        raise ToolCallError(f"exposure path {path[:80]!r} is past the importer's limits")  # checked at load
    return parts


def _shape_conflict(paths: Sequence[str]) -> str | None:
    """Two exposure paths of one tool that cannot both be fields of one result: one inside the other
    (``$.vendor`` and ``$.vendor.city``), or a key and a list index at one place. A trie of the steps:
    linear in the paths (a row may declare thousands)."""
    root: dict[Any, Any] = {}
    leaf = object()
    for path in paths:
        node = root
        for part in _path_parts(path):
            if leaf in node:
                return f"{path!r} is inside another exposure path of the tool"
            kinds = {type(k) for k in node if k is not leaf}
            if kinds and type(part) not in kinds:
                return f"{path!r} indexes a list where another exposure path of the tool has a key, or the reverse"
            node = node.setdefault(part, {})
        if node and leaf not in node:
            return f"{path!r} holds other exposure paths of the tool"
        node[leaf] = True
    return None


def _set_path(result: dict[str, Any], path: str, value: Any) -> None:
    parts = _path_parts(path)
    node: Any = result
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        nxt: Any = [] if not last and isinstance(parts[i + 1], int) else {}
        if isinstance(part, int) != isinstance(node, list):  # shapes conflict (refused at load)
            return
        if isinstance(part, int):
            while len(node) <= part:
                node.append(None)
            if last:
                node[part] = value
            else:
                if node[part] is None:
                    node[part] = nxt
                node = node[part]
        else:
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, nxt)
        if not last and not isinstance(node, dict | list):
            return


# -- rows -----------------------------------------------------------------------------------------------------
def _domain(name: str) -> str:
    normal = re.sub(r"[\s\-]+", "_", str(name).strip().lower())
    normal = {"cloud_ops": "cloudops", "documents": "document_access", "document": "document_access"}.get(
        normal, normal
    )
    if normal not in DOMAINS:
        raise ValueError(f"domain: unknown domain {str(name)[:60]!r}.{did_you_mean(normal, DOMAINS)}")
    return normal


#: words of ``expected_behavior`` for the unsafe world: the careful agent hands the case to a person ...
ESCALATE_WORDS = ("escalat", "ask", "confirm", "clarif", "human", "review", "approv", "flag", "report")
#: ... or declines it
ABSTAIN_WORDS = ("abstain", "refus", "declin", "block", "deny", "reject", "stop", "halt", "withhold")


def _expected(text: Any) -> str:
    """``expected_behavior`` as a disposition: ``abstained`` or ``escalated`` (missing: escalated). A
    value that says neither is refused (it used to read as escalated)."""
    word = str(text or "escalate").lower()
    if any(w in word for w in ABSTAIN_WORDS):
        return "abstained"
    if any(w in word for w in ESCALATE_WORDS):
        return "escalated"
    raise ValueError(
        f"expected_behavior: {str(text)[:60]!r} says neither escalate nor abstain (the unsafe world's "
        "careful behaviour: escalate, ask, confirm ... or abstain, refuse, decline ...)"
    )


#: a task field -> the row field it is made from (an error in the compiled task names what the author wrote)
_ROW_FIELDS = {
    "witness_sets": "safety_rule.minimal_witness_sets",
    "rule": "safety_rule.unsafe_if",
    "safe_overrides": "safe_twin.evidence_overrides",
    "atoms": "evidence",
    "instruction": "user_goal",
    "commit_tool": "safety_rule.commit_tool",
    "policy": "safety_rule.description",
    "expected": "expected_behavior",
    "initial_state": "evidence",
    "gold_safe": "tools",
    "gold_unsafe": "tools",
}
_PATH_MESSAGE = re.compile(r"^(?:Value error, )?([\w.]+): (.*)$", re.S)


def _row_field(field: str | None) -> str | None:
    if not field:
        return field
    head, sep, rest = field.partition(".")
    mapped = _ROW_FIELDS.get(head)
    return f"{mapped}{sep}{rest}" if mapped else field


def _row_error(
    exc: Exception, source: str, label: str, field: str | None, *, task_fields: bool = False
) -> ImportError_:
    """A row's error as an :class:`ImportError_` naming the file, the row and the field: the field of a
    pydantic error's location, refined by a validator's ``"<field path>: <message>"``, and mapped back
    from the compiled task's fields to the row's (``task_fields``)."""
    if isinstance(exc, ValidationError):
        err = exc.errors(include_url=False)[0]
        message = str(err["msg"])
        field = ".".join(str(p) for p in err["loc"]) or field
        if err["type"] == "missing":
            message = f"missing {err['loc'][-1]!r}" if err["loc"] else message
    elif isinstance(exc, KeyError):
        message = f"missing {exc}"
    else:
        message = str(exc)
    inner = _PATH_MESSAGE.match(message)
    if inner and " " not in inner.group(1):
        path, message = inner.group(1), inner.group(2)
        if isinstance(exc, ValidationError) and field and not task_fields and not path.startswith(field):
            field = f"{field}.{path}" if exc.errors()[0]["loc"] else path
        else:
            field = path
    message = message.removeprefix("Value error, ")
    return ImportError_(
        message, file=source, task_id=label, field=_row_field(field) if task_fields else field
    )


#: names a row's tools may not take: the benchmark's own tools and the generated backend's attributes
RESERVED_TOOLS = frozenset({"abstain", "escalate", "respond", "audit_lookup"})


def import_corpus(path: str | Path) -> tuple[list[EpiSEMTask], type[Backend]]:
    """Read a JSONL copy of the authors' corpus: the tasks and the generated backend of their tools.
    Every row is checked (see the module docstring); the first problem is an :class:`ImportError_`
    naming the file, the row (id and line) and the field."""
    source = str(path)
    try:
        text = read_user_text(path)
    except UnreadableFileError as exc:
        where = f"line {exc.line}" if exc.line is not None else None
        raise ImportError_(f"cannot read the corpus: {exc.message}", file=source, task_id=where) from None
    rows: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append((number, loads_json(line)))
        except (ValueError, RecursionError) as exc:
            raise ImportError_(
                f"not JSON: {json_problem(exc)}", file=source, task_id=f"line {number}"
            ) from None
        if len(rows) > MAX_ROWS:
            raise ImportError_(f"more than {MAX_ROWS:,} rows; split the corpus", file=source)
    if not rows:
        raise ImportError_("the corpus holds no rows", file=source)

    methods: dict[str, Any] = {}
    signatures: dict[str, str] = {}  # generated tool name -> its declaration
    by_declaration: dict[tuple[str, str], str] = {}  # (declared name, declaration) -> generated name
    taken: dict[str, int] = {}  # declared name -> the last suffix used
    reserved = RESERVED_TOOLS | {a for a in dir(ImportedBackend) if not a.startswith("__")}
    seen: dict[str, tuple[int, Any]] = {}
    tasks = []
    for number, row in rows:
        if not isinstance(row, dict):
            raise ImportError_(
                f"a row is a JSON object, got {describe(row)}", file=source, task_id=f"line {number}"
            )
        row_id = row.get("id")
        label = f"{str(row_id)[:200]} (line {number})" if isinstance(row_id, str | int) else f"line {number}"
        try:
            check_json_value(row, root="")
        except DataLimitError as exc:
            raise ImportError_(exc.message, file=source, task_id=label, field=dotted(exc.path)) from None
        try:
            parsed = AuthorRow.model_validate(row)
        except ValidationError as exc:
            raise _row_error(exc, source, label, "row") from None
        if parsed.id in seen:
            first_line, first_row = seen[parsed.id]
            same = "the same" if first_row == row else "different"
            raise ImportError_(
                f"duplicate row id: line {first_line} has it too, with {same} content (a row is played, "
                "resumed and reported by its id: the second one would be played twice, the first never)",
                file=source,
                task_id=label,
                field="id",
            )
        seen[parsed.id] = (number, row)
        renamed: dict[str, str] = {}
        for i, spec in enumerate(parsed.tools):
            if spec.name in reserved:
                raise ImportError_(
                    f"{spec.name!r} is a name the importer reserves; rename the tool",
                    file=source,
                    task_id=label,
                    field=f"tools.{i}.name",
                )
            declaration = json.dumps([spec.kind, spec.parameters.model_dump(mode="json")], sort_keys=True)
            name = by_declaration.get((spec.name, declaration))
            if name is None:
                name, k = spec.name, taken.get(spec.name, 1)
                while name in signatures:  # another declaration of the name: name_2, name_3 ...
                    k += 1
                    name = f"{spec.name}_{k}"
                taken[spec.name] = k
                signatures[name] = declaration
                by_declaration[(spec.name, declaration)] = name
                try:
                    methods[name] = _make_tool({**spec.model_dump(mode="json"), "name": name}, name)
                except (TypeError, ValueError) as exc:
                    raise ImportError_(str(exc), file=source, task_id=label, field=f"tools.{i}") from None
            renamed[spec.name] = name
        try:
            tasks.append(_task(parsed, renamed))
        except ValidationError as exc:
            raise _row_error(exc, source, label, None, task_fields=True) from None
        except _RowProblem as exc:
            raise ImportError_(exc.message, file=source, task_id=label, field=exc.field) from None
    backend = type("ImportedCorpusBackend", (ImportedBackend,), methods)
    return tasks, backend


class _RowProblem(ValueError):
    """A row that validates but cannot make a task (``field`` is the row's field)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@functools.cache
def _rule_adapter() -> TypeAdapter[Any]:
    """The legality rules' validator, built once (building one costs a third of a millisecond a row)."""
    return TypeAdapter(LegalityRule)


def _task(row: AuthorRow, renamed: dict[str, str]) -> EpiSEMTask:
    records: dict[str, dict[str, Any]] = {}
    atoms = []
    exposures: dict[str, list[list[str]]] = {}
    for item in row.evidence:
        subject = item.subject
        records.setdefault(subject, {"id": subject})[item.predicate] = item.value
        shown = []
        for e in item.exposures:
            tool_name = renamed[e.tool]
            shown.append({"tool": tool_name, "path": e.path, "arguments": {}})
            entry = [e.path, subject, item.predicate]
            if entry not in exposures.setdefault(tool_name, []):
                exposures[tool_name].append(entry)
        atoms.append({
            "id": item.id, "subject": f"{COLLECTION}/{subject}", "predicate": item.predicate,
            "value": item.value, "role": item.role, "exposures": shown,
        })  # fmt: skip
    ids = [a["id"] for a in atoms]
    rule_spec = row.safety_rule
    try:
        rule_data = (
            parse_expression(rule_spec.unsafe_if, ids)
            if isinstance(rule_spec.unsafe_if, str)
            else rule_spec.unsafe_if
        )
    except ValueError as exc:
        raise _RowProblem("safety_rule.unsafe_if", str(exc)) from None
    try:
        rule = _rule_adapter().validate_python(rule_data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        raise _RowProblem("safety_rule.unsafe_if", str(err["msg"]).removeprefix("Value error, ")) from None
    commit_tool = renamed[rule_spec.commit_tool]
    reads, commit = _gold(row, renamed, atoms)
    expected = _expected(row.expected_behavior)
    terminal = "escalate" if expected == "escalated" else "abstain"
    overrides = {o.id: o.value for o in row.safe_twin.evidence_overrides}
    # the row's exposures travel in its world's context: a read compiles from its own row's paths only
    context = {"world_state": row.world_state, EXPOSURE_CONTEXT: exposures}
    return EpiSEMTask.model_validate({
        "id": row.id, "template_id": row.family_id, "benchmark": "episem",
        "domain": _domain(row.domain), "instruction": row.user_goal,
        "initial_state": {"collections": {COLLECTION: records}, "context": context},
        "tools": [*sorted(set(renamed.values())), "abstain", "escalate", "respond"],
        "labels": {"family": row.family_id, "risk_type": row.risk_type,
                   "n_critical": sum(a["role"] == "critical" for a in atoms)},
        "family_id": row.family_id, "risk_type": row.risk_type,
        "policy": rule_spec.description, "commit_tool": commit_tool, "atoms": atoms, "rule": rule,
        "witness_sets": rule_spec.minimal_witness_sets, "safe_overrides": overrides,
        "expected": {"unsafe": expected},
        "gold_safe": [*reads, commit],
        "gold_unsafe": [*reads, ToolCall(name=terminal, arguments={"reason": rule_spec.description})],
    })  # fmt: skip


def _gold(
    row: AuthorRow, renamed: dict[str, str], atoms: list[dict[str, Any]]
) -> tuple[list[ToolCall], ToolCall]:
    specs = {s.name: s for s in row.tools}
    reads: list[ToolCall] = []
    for declared, spec in specs.items():
        if KINDS[spec.kind] != "read":
            continue
        required = list(spec.parameters.required)
        subjects = []
        for a in atoms:
            if any(e["tool"] == renamed[declared] for e in a["exposures"]):
                subject = a["subject"].partition("/")[2]
                if subject not in subjects:
                    subjects.append(subject)
        if not required and subjects:  # one call shows everything it exposes
            reads.append(ToolCall(name=renamed[declared]))
            continue
        for subject in subjects:
            tail = re.split(r"[:/]", subject)[-1]
            reads.append(ToolCall(name=renamed[declared], arguments=dict.fromkeys(required, tail)))
    unique: list[ToolCall] = []
    for call in reads:
        if call not in unique:
            unique.append(call)
    commit_name = row.safety_rule.commit_tool
    index = next(i for i, s in enumerate(row.tools) if s.name == commit_name)
    spec = specs[commit_name]
    props = spec.parameters.properties
    by_predicate = {a["predicate"]: a["value"] for a in atoms if a["role"] == "contextual"}
    first = re.split(r"[:/]", atoms[0]["subject"].partition("/")[2])[-1]
    arguments = {}
    for pname in spec.parameters.required:
        if pname in by_predicate:
            arguments[pname] = by_predicate[pname]
        elif props[pname].type == "string":
            arguments[pname] = first
        else:
            raise _RowProblem(
                f"tools.{index}.parameters.required",
                f"cannot fill the commit's required argument {pname!r} from the evidence (no contextual "
                "atom has that predicate)",
            )
    return unique, ToolCall(name=renamed[commit_name], arguments=arguments)
