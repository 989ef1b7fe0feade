"""Families: the authored form of the corpus (``envs/episem/authoring/families/<domain>/<family>.json``).

A family is one scenario (a user request, the tools, one commit tool, a legality rule over named atoms,
its minimal witness sets) played in five twin pairs that vary the entities, the values and the wording.
Each pair gives the unsafe world's records and the safe twin's values of the atoms that differ.
Strings in ``request``, ``decline_reason``, atom subjects and call arguments may name the pair's
``slots`` as ``{slot}``. :func:`compile_family` turns a family into :class:`EpiSEMTask` s (one per pair);
the benchmark derives every atom's exposures by running the read tools (see :mod:`.world`).

    {
      "id": "fin-payment-approval-limit", "domain": "finance", "risk_type": "authorization_limit",
      "title": "...", "policy": "...", "request": "Please release invoice {invoice} ...",
      "tools": ["finance_get_invoice", ...], "commit_tool": "finance_release_payment",
      "rule": {"type": "exceeds", "value": "amount", "limit": "approver_limit"},
      "atoms": [{"id": "approver_limit", "subject": "employees/{approver}", "field": "approval_limit",
                 "role": "critical"}, ...],
      "witness_sets": [["approver_limit"]],
      "reads": [{"name": "finance_get_invoice", "arguments": {"invoice_id": "{invoice}"}}, ...],
      "prepare": [...], "commit": {"name": "finance_release_payment", "arguments": {...}},
      "decline_reason": "...",
      "pairs": [{"slots": {...}, "records": {...}, "safe": {"approver_limit": 50000}}, ...]
    }
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from tooltrap.envs.core import InitialState, TaskValidationError, ToolCall
from tooltrap.envs.core.tasks import Strict

from ..rules import LegalityRule
from ..task import Atom, EpiSEMTask, Role

#: twin pairs per family
PAIRS_PER_FAMILY = 5
#: the terminal tools every task has beside its domain tools
DECISION_TOOLS: tuple[str, ...] = ("abstain", "escalate", "respond")


class AtomSpec(Strict):
    """One fact of the family's scenario: ``subject`` (``collection/{slot}``)'s ``field``."""

    id: str
    subject: str
    field: str
    role: Role


class PairSpec(Strict):
    """One twin pair: the unsafe world's records and the safe twin's values of the atoms that differ."""

    #: values named as ``{slot}`` in the family's strings; an argument that is exactly ``"{slot}"`` takes
    #: the slot's value with its type (a number stays a number)
    slots: dict[str, str | int | float | bool] = Field(default_factory=dict)
    #: this pair's wording of the request (default: the family's, with the slots filled)
    request: str | None = None
    now: str | None = None
    records: dict[str, dict[str, dict[str, Any]]]
    safe: dict[str, Any] = Field(min_length=1)


class FamilySpec(Strict):
    id: str
    domain: str
    risk_type: str
    title: str
    #: the rule as the organization states it (the agent is told it)
    policy: str
    request: str
    #: who the assistant acts for
    user: str
    org: str
    now: str = "2026-03-02T09:00:00"
    tools: list[str] = Field(min_length=2)
    commit_tool: str
    rule: LegalityRule
    atoms: list[AtomSpec] = Field(min_length=2)
    witness_sets: list[list[str]] = Field(min_length=1)
    #: the read calls a careful agent makes (in order)
    reads: list[ToolCall] = Field(min_length=1)
    #: calls that prepare the commit (drafts), made only when the commit is legal
    prepare: list[ToolCall] = Field(default_factory=list)
    commit: ToolCall
    unsafe_expected: Literal["escalated", "abstained"] = "escalated"
    #: the reason the careful agent gives when it escalates or abstains in the unsafe world
    decline_reason: str
    pairs: list[PairSpec] = Field(min_length=PAIRS_PER_FAMILY, max_length=PAIRS_PER_FAMILY)


Slots = dict[str, str | int | float | bool]
_WHOLE_SLOT = re.compile(r"^\{(\w+)\}$")


class _Slots(dict):
    def __missing__(self, key: str) -> str:
        raise KeyError(key)


def fill(text: str, slots: Slots) -> str:
    """``text`` with ``{slot}`` replaced (a literal brace is written ``{{``)."""
    return string.Formatter().vformat(text, (), _Slots(slots))


def _fill_value(value: Any, slots: Slots) -> Any:
    if isinstance(value, str):
        whole = _WHOLE_SLOT.match(value)
        if whole:
            if whole.group(1) not in slots:
                raise KeyError(whole.group(1))
            return slots[whole.group(1)]
        return fill(value, slots)
    if isinstance(value, list):
        return [_fill_value(v, slots) for v in value]
    if isinstance(value, dict):
        return {k: _fill_value(v, slots) for k, v in value.items()}
    return value


def _call(call: ToolCall, slots: Slots) -> ToolCall:
    return ToolCall(name=call.name, arguments=_fill_value(call.arguments, slots))


def pair_task(family: FamilySpec, index: int) -> dict[str, Any]:
    """The raw task of pair ``index`` (0-based), atoms without exposures (the benchmark derives them)."""
    pair = family.pairs[index]
    slots = pair.slots
    records = pair.records
    atoms = []
    for i, spec in enumerate(family.atoms):
        try:
            subject = fill(spec.subject, slots)
        except KeyError as exc:
            raise _FieldError(f"atoms.{i}.subject", f"unknown slot {exc.args[0]!r}") from None
        collection, _, record_id = subject.partition("/")
        record = records.get(collection, {}).get(record_id)
        if record is None:
            raise _FieldError(f"atoms.{i}.subject", f"{subject} is not in pairs.{index}.records")
        if spec.field not in record:
            raise _FieldError(f"atoms.{i}.field", f"{subject} has no field {spec.field!r}")
        atoms.append(
            Atom(id=spec.id, subject=subject, predicate=spec.field, value=record[spec.field], role=spec.role)
        )
    try:
        reads = [_call(c, slots) for c in family.reads]
        acts = [_call(c, slots) for c in (*family.prepare, family.commit)]
        request = fill(pair.request or family.request, slots)
        reason = fill(family.decline_reason, slots)
    except KeyError as exc:
        raise _FieldError(f"pairs.{index}.slots", f"no slot {exc.args[0]!r}") from None
    terminal = "escalate" if family.unsafe_expected == "escalated" else "abstain"
    critical = sum(a.role == "critical" for a in atoms)
    return {
        "id": f"{family.id}-{index + 1}",
        "template_id": family.id,
        "benchmark": "episem",
        "domain": family.domain,
        "instruction": request,
        "initial_state": InitialState(
            collections=records,
            now=pair.now or family.now,
            context={"user": family.user, "org": family.org},
        ),
        "tools": [*family.tools, *DECISION_TOOLS],
        "labels": {"family": family.id, "risk_type": family.risk_type, "n_critical": critical},
        "family_id": family.id,
        "risk_type": family.risk_type,
        "policy": family.policy,
        "commit_tool": family.commit_tool,
        "atoms": atoms,
        "rule": family.rule,
        "witness_sets": family.witness_sets,
        "safe_overrides": pair.safe,
        "expected": {"unsafe": family.unsafe_expected},
        "gold_safe": [*reads, *acts],
        "gold_unsafe": [*reads, ToolCall(name=terminal, arguments={"reason": reason})],
    }


class _FieldError(ValueError):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


def _validation_message(exc: ValidationError) -> tuple[str | None, str]:
    err = exc.errors(include_url=False)[0]
    field = ".".join(str(p) for p in err["loc"]) or None
    message = err["msg"].removeprefix("Value error, ")
    if field is None and ": " in message:
        field, message = message.split(": ", 1)
    return field, message


def compile_family(family: FamilySpec, *, source: str) -> list[EpiSEMTask]:
    """The family's tasks (atoms without exposures); errors name the file, family, pair and field."""
    tasks = []
    for index in range(len(family.pairs)):
        label = f"{family.id}-{index + 1}"
        try:
            raw = pair_task(family, index)
        except _FieldError as exc:
            raise TaskValidationError(exc.message, file=source, task_id=label, field=exc.field) from None
        try:
            tasks.append(EpiSEMTask.model_validate(raw))
        except ValidationError as exc:
            field, message = _validation_message(exc)
            raise TaskValidationError(message, file=source, task_id=label, field=field) from None
    return tasks


def load_family(path: str | Path) -> FamilySpec:
    """Read and validate one family file (errors name the file, the family and the field)."""
    path = Path(path)
    source = str(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise TaskValidationError(f"cannot read the family file: {exc}", file=source) from None
    family_id = raw.get("id") if isinstance(raw, dict) else None
    try:
        family = FamilySpec.model_validate(raw)
    except ValidationError as exc:
        field, message = _validation_message(exc)
        raise TaskValidationError(message, file=source, task_id=family_id, field=field) from None
    expected = path.stem
    if family.id != expected:
        raise TaskValidationError(
            f"the family id {family.id!r} is not the file's name {expected!r}", file=source, field="id"
        )
    return family


#: where the packaged families live
FAMILIES_DIR = Path(__file__).parent / "families"


def family_files(root: Path = FAMILIES_DIR) -> list[Path]:
    """Every family file under ``root`` (``<domain>/<family>.json``), sorted."""
    return sorted(root.glob("*/*.json"))
