"""The release's parameter-injection rules (the P2 protocol), applied to the agent's first tool call
before validation. Pure: :func:`inject` returns the arguments to execute and whether anything changed.

The release sets its "injected" flag whenever the tool name is known, even when no rule applied (an
unchanged call). Here such a call is ``applicable=False`` ("not applicable"), a documented fix; the
release's flag is kept as ``release_flag`` for the reproduction path.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

INJECTION_TYPES: tuple[str, ...] = (
    "none",
    "type_mismatch",
    "out_of_range",
    "missing_required",
    "semantic_wrong",
)
_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
CITY_SWAPS = {
    "Paris": "Lyon", "London": "Manchester", "Tokyo": "Osaka", "New York": "Los Angeles",
    "Sao Paulo": "Rio de Janeiro", "Berlin": "Munich", "Sydney": "Melbourne", "Toronto": "Vancouver",
    "Chicago": "Houston", "Mumbai": "Delhi", "Lagos": "Abuja",
}  # fmt: skip
PATIENT_ROTATION = {"P001": "P002", "P002": "P003", "P003": "P004", "P004": "P005", "P005": "P001"}
APPOINTMENT_SWAPS = {
    "checkup": "follow_up",
    "follow_up": "specialist",
    "specialist": "checkup",
    "emergency": "checkup",
}
DRUG_SWAPS = {
    "metformin": "glipizide", "lisinopril": "losartan", "ibuprofen": "naproxen", "sertraline": "fluoxetine",
    "sumatriptan": "rizatriptan", "albuterol": "ipratropium", "aspirin": "acetaminophen", "warfarin": "heparin",
    "atorvastatin": "simvastatin", "cetirizine": "loratadine", "fluticasone": "budesonide",
}  # fmt: skip
DATE_ARGUMENTS = ("date", "start_date", "end_date")
#: how far ``date_plus_180`` moves a date; a date too late to move forward (on or after 9999-07-05:
#: ``date.max`` is 9999-12-31) moves back by as much instead (``date_minus_180``), still a wrong date
DATE_SHIFT = timedelta(days=180)
#: the largest integer an episode record can hold: JSON writes an integer through ``str``, which refuses
#: more digits than Python's limit (4,300 by default; 0 disables it). An injected integer stays within it.
_DIGIT_LIMIT = sys.get_int_max_str_digits()
MAX_STORABLE_INT: int | None = 10**_DIGIT_LIMIT - 1 if _DIGIT_LIMIT else None
DRUG_ARGUMENTS = ("drug_a", "drug_b")


@dataclass(frozen=True)
class Injection:
    """The outcome of injecting into one call.

    Attributes:
        arguments: What is executed.
        applicable: Whether a rule changed the call (False: nothing changed, "not applicable").
        rule: Which rule applied (``integer_to_word``, ``city_swap`` ...), or ``none``.
        release_flag: The release's "injected" flag (True for every known tool, changed or not).
    """

    arguments: dict[str, Any]
    applicable: bool
    rule: str
    release_flag: bool


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _storable(value: int) -> int:
    """``value`` clamped to the integers a record can store (:data:`MAX_STORABLE_INT`, either sign): an
    agent may send an integer of 4,300 digits, which JSON decodes, and a thousand times it does not
    encode, so an unclamped injection would make the episode impossible to write."""
    if MAX_STORABLE_INT is None or -MAX_STORABLE_INT <= value <= MAX_STORABLE_INT:
        return value
    return MAX_STORABLE_INT if value > 0 else -MAX_STORABLE_INT


def _type_mismatch(args: dict[str, Any], schema: Mapping[str, Any]) -> str:
    for key, value in args.items():
        if _is_int(value):
            args[key] = _WORDS[value - 1] if 1 <= value <= 10 else str(value)
            return "integer_to_word"
    for key, value in args.items():
        if isinstance(value, bool):
            args[key] = "true" if value else "false"
            return "boolean_to_string"
    for key, value in args.items():
        if isinstance(value, str):
            args[key] = 0
            return "string_to_zero"
    return "none"


def _out_of_range(args: dict[str, Any], schema: Mapping[str, Any]) -> str:
    props = schema.get("properties", {})
    for key, value in args.items():
        if _is_int(value) and "maximum" in props.get(key, {}):
            args[key] = props[key]["maximum"] * 10
            return "above_maximum"
    for key, value in args.items():
        if _is_int(value) and "minimum" in props.get(key, {}):
            args[key] = props[key]["minimum"] - 100
            return "below_minimum"
    for key in args:
        if "enum" in props.get(key, {}):
            args[key] = "INVALID_ENUM"
            return "invalid_enum"
    for key, value in args.items():
        if _is_int(value):
            args[key] = _storable(value * 1000)
            return "integer_times_1000"
    return "none"


def _missing_required(args: dict[str, Any], schema: Mapping[str, Any]) -> str:
    for key in schema.get("required", []):
        if key in args:
            del args[key]
            return "drop_required"
    return "none"


def _semantic_wrong(args: dict[str, Any], schema: Mapping[str, Any]) -> str:
    if isinstance(args.get("city"), str):
        args["city"] = CITY_SWAPS.get(args["city"], "Reykjavik")
        return "city_swap"
    for key in DATE_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str):
            try:
                parsed = date.fromisoformat(value)
            except ValueError:
                continue
            if parsed > date.max - DATE_SHIFT:
                args[key] = (parsed - DATE_SHIFT).isoformat()
                return "date_minus_180"
            args[key] = (parsed + DATE_SHIFT).isoformat()
            return "date_plus_180"
    if isinstance(args.get("patient_id"), str):
        args["patient_id"] = PATIENT_ROTATION.get(args["patient_id"], "P999")
        return "patient_rotation"
    if isinstance(args.get("appointment_type"), str) and args["appointment_type"] in APPOINTMENT_SWAPS:
        args["appointment_type"] = APPOINTMENT_SWAPS[args["appointment_type"]]
        return "appointment_swap"
    for key in DRUG_ARGUMENTS:
        if isinstance(args.get(key), str):
            args[key] = DRUG_SWAPS.get(args[key].lower(), "acetaminophen")
            return "drug_swap"
    if "event_id" in args:
        args["event_id"] = "EVT_9999"
        return "event_id"
    for key, value in args.items():
        if isinstance(value, str):
            args[key] = value + "_WRONG"
            return "append_wrong"
    return "none"


_RULES = {
    "type_mismatch": _type_mismatch,
    "out_of_range": _out_of_range,
    "missing_required": _missing_required,
    "semantic_wrong": _semantic_wrong,
}


def inject(kind: str, arguments: Any, schema: Mapping[str, Any] | None) -> Injection:
    """Apply injection ``kind`` to a call's ``arguments`` given its tool's parameter ``schema`` (None:
    the tool is unknown, nothing is injected)."""
    if kind not in INJECTION_TYPES:
        raise ValueError(f"unknown injection {kind!r}; one of {', '.join(INJECTION_TYPES)}")
    original = dict(arguments) if isinstance(arguments, Mapping) else {}
    if kind == "none" or schema is None or not isinstance(arguments, Mapping):
        return Injection(original, False, "none", False)
    changed = dict(original)
    rule = _RULES[kind](changed, schema)
    return Injection(changed, changed != original, rule if changed != original else "none", True)
