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

Errors are :class:`~tooltrap.envs.core.TaskValidationError` naming the file, the row (line and id)
and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from tooltrap.envs.core import Backend, TaskValidationError, ToolCall, ToolCallError, did_you_mean, tool
from tooltrap.envs.core.trace import parse_path

from ..rules import LegalityRule
from ..task import EpiSEMTask
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
    """An ``unsafe_if`` expression as this library's rule data (see the module docstring)."""
    tokens = _tokens(text)
    pos = 0

    def peek() -> tuple[str, str] | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> tuple[str, str]:
        nonlocal pos
        if pos >= len(tokens):
            raise ValueError("the expression ends too early")
        pos += 1
        return tokens[pos - 1]

    def literal() -> Any:
        kind, text_ = take()
        if kind == "num":
            return float(text_) if "." in text_ else int(text_)
        if kind == "str":
            return text_[1:-1]
        if kind == "word" and text_ in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[text_]
        if text_ == "[":
            items = []
            while peek() != ("op", "]"):
                items.append(literal())
                if peek() == ("op", ","):
                    take()
            take()
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
        if peek() == ("op", "("):
            take()
            inner = disjunction()
            if take() != ("op", ")"):
                raise ValueError("missing ')'")
            return inner
        if peek() == ("word", "not"):
            take()
            return {"type": "not", "rule": comparison()}
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
    """Base of the generated backend of an imported corpus."""

    domain = "imported"
    #: declared tool name -> [(path, atom subject record id, predicate)]
    exposures: dict[str, list[tuple[str, str, str]]] = {}

    def compile_result(self, tool_name: str, arguments: Mapping[str, Any]) -> dict:
        named = {str(v) for v in arguments.values()}
        by_path: dict[str, list[tuple[str, str]]] = {}
        for path, subject, predicate in self.exposures.get(tool_name, []):
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


def _set_path(result: dict[str, Any], path: str, value: Any) -> None:
    parts = parse_path(path)
    node: Any = result
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        nxt: Any = [] if not last and isinstance(parts[i + 1], int) else {}
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


# -- rows -----------------------------------------------------------------------------------------------------
def _domain(name: str) -> str:
    normal = re.sub(r"[\s\-]+", "_", str(name).strip().lower())
    normal = {"cloud_ops": "cloudops", "documents": "document_access", "document": "document_access"}.get(
        normal, normal
    )
    if normal not in DOMAINS:
        raise ValueError(f"unknown domain {name!r}.{did_you_mean(normal, DOMAINS)}")
    return normal


def _expected(text: Any) -> str:
    word = str(text or "escalate").lower()
    return "abstained" if any(w in word for w in ("abstain", "refus", "declin")) else "escalated"


def import_corpus(path: str | Path) -> tuple[list[EpiSEMTask], type[Backend]]:
    """Read a JSONL copy of the authors' corpus: the tasks and the generated backend of their tools."""
    source = str(path)
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportError_(f"cannot read the corpus: {exc}", file=source) from None
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except ValueError as exc:
            raise ImportError_(f"line {number} is not JSON: {exc}", file=source) from None
    if not rows:
        raise ImportError_("the corpus holds no rows", file=source)

    methods: dict[str, Any] = {}
    signatures: dict[str, str] = {}
    exposures: dict[str, list[tuple[str, str, str]]] = {}
    tasks = []
    for number, row in rows:
        label = f"{row.get('id', '?')} (line {number})" if isinstance(row, dict) else f"line {number}"
        field = "row"
        try:
            if not isinstance(row, dict):
                raise ValueError("a row is a JSON object")
            field = "tools"
            renamed: dict[str, str] = {}
            for spec in row["tools"]:
                signature = json.dumps([spec.get("kind"), spec.get("parameters")], sort_keys=True)
                name, k = spec["name"], 1
                while name in signatures and signatures[name] != signature:
                    k += 1
                    name = f"{spec['name']}_{k}"
                if name not in signatures:
                    signatures[name] = signature
                    methods[name] = _make_tool({**spec, "name": name}, name)
                renamed[spec["name"]] = name
            field = "evidence"
            tasks.append(_task(row, renamed, exposures))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ValidationError):
                err = exc.errors(include_url=False)[0]
                where = ".".join(str(p) for p in err["loc"]) or field
                raise ImportError_(
                    err["msg"].removeprefix("Value error, "), file=source, task_id=label, field=where
                ) from None
            detail = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
            raise ImportError_(detail, file=source, task_id=label, field=field) from None
    backend = type("ImportedCorpusBackend", (ImportedBackend,), {**methods, "exposures": exposures})
    return tasks, backend


def _task(
    row: dict[str, Any], renamed: dict[str, str], exposures: dict[str, list[tuple[str, str, str]]]
) -> EpiSEMTask:
    evidence = row["evidence"]
    records: dict[str, dict[str, Any]] = {}
    atoms = []
    for item in evidence:
        subject = str(item["subject"])
        records.setdefault(subject, {"id": subject})[item["predicate"]] = item["value"]
        shown = []
        for e in item.get("exposures") or []:
            tool_name = renamed.get(e["tool"])
            if tool_name is None:
                raise ValueError(f"evidence {item['id']}: exposure names an undeclared tool {e['tool']!r}")
            shown.append({"tool": tool_name, "path": e["path"], "arguments": {}})
            entry = (e["path"], subject, item["predicate"])
            if entry not in exposures.setdefault(tool_name, []):
                exposures[tool_name].append(entry)
        atoms.append({
            "id": item["id"], "subject": f"{COLLECTION}/{subject}", "predicate": item["predicate"],
            "value": item["value"], "role": item.get("role", "critical"), "exposures": shown,
        })  # fmt: skip
    ids = [a["id"] for a in atoms]
    rule_spec = row["safety_rule"]
    unsafe_if = rule_spec["unsafe_if"]
    rule = TypeAdapter(LegalityRule).validate_python(
        parse_expression(unsafe_if, ids) if isinstance(unsafe_if, str) else unsafe_if
    )
    commit_tool = renamed.get(rule_spec["commit_tool"])
    if commit_tool is None:
        raise ValueError(f"safety_rule.commit_tool {rule_spec['commit_tool']!r} is not a declared tool")
    reads, commit = _gold(row, renamed, atoms)
    terminal = "escalate" if _expected(row.get("expected_behavior")) == "escalated" else "abstain"
    overrides = {o["id"]: o["value"] for o in (row.get("safe_twin") or {}).get("evidence_overrides", [])}
    return EpiSEMTask.model_validate({
        "id": str(row["id"]), "template_id": str(row["family_id"]), "benchmark": "episem",
        "domain": _domain(row["domain"]), "instruction": str(row["user_goal"]),
        "initial_state": {"collections": {COLLECTION: records}, "context": {"world_state": row.get("world_state")}},
        "tools": [*sorted(set(renamed.values())), "abstain", "escalate", "respond"],
        "labels": {"family": str(row["family_id"]), "risk_type": str(row["risk_type"]),
                   "n_critical": sum(a["role"] == "critical" for a in atoms)},
        "family_id": str(row["family_id"]), "risk_type": str(row["risk_type"]),
        "policy": str(rule_spec.get("description", "")), "commit_tool": commit_tool, "atoms": atoms, "rule": rule,
        "witness_sets": rule_spec["minimal_witness_sets"], "safe_overrides": overrides,
        "expected": {"unsafe": _expected(row.get("expected_behavior"))},
        "gold_safe": [*reads, commit],
        "gold_unsafe": [*reads, ToolCall(name=terminal, arguments={"reason": str(rule_spec.get("description", ""))})],
    })  # fmt: skip


def _gold(
    row: dict[str, Any], renamed: dict[str, str], atoms: list[dict[str, Any]]
) -> tuple[list[ToolCall], ToolCall]:
    specs = {s["name"]: s for s in row["tools"]}
    reads: list[ToolCall] = []
    for declared, spec in specs.items():
        if KINDS.get(spec.get("kind", "read")) != "read":
            continue
        required = list((spec.get("parameters") or {}).get("required") or [])
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
    commit_name = row["safety_rule"]["commit_tool"]
    spec = specs[commit_name]
    props = (spec.get("parameters") or {}).get("properties") or {}
    required = (spec.get("parameters") or {}).get("required") or []
    by_predicate = {a["predicate"]: a["value"] for a in atoms if a["role"] == "contextual"}
    first = re.split(r"[:/]", atoms[0]["subject"].partition("/")[2])[-1]
    arguments = {}
    for pname in required:
        if pname in by_predicate:
            arguments[pname] = by_predicate[pname]
        elif props.get(pname, {}).get("type", "string") == "string":
            arguments[pname] = first
        else:
            raise ValueError(f"cannot fill the commit's required argument {pname!r} from the evidence")
    return unique, ToolCall(name=renamed[commit_name], arguments=arguments)
