"""Episode variants: how one task is played (a world, a mask, an injected payload, an injection type).

A benchmark declares its variant as a pydantic model (``Benchmark.variant_model``); its fields are the
keys ``reset(options=...)`` accepts besides the task selectors, and the keys of ``tooltrap eval
--variant KEY=VALUE``. The variant reaches state construction, every hook, the executor the oracle
replays with, and the judge; it is stored on the trace and in every episodes.jsonl record.

    class EvidenceVariant(Variant):
        world: Literal["unsafe", "safe"] = "unsafe"
        condition: Literal["full", "suppressed", "recoverable"] = "full"
        mask: tuple[str, ...] | None = None  # None: the benchmark fills a task-dependent default

Task-dependent defaults and checks live in ``Benchmark.resolve_variant``.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import EnvUsageError, UnknownOptionError, VariantError, did_you_mean
from .usage import describe, describe_type


class Variant(BaseModel):
    """Base of every benchmark's variant model: frozen, strict about unknown keys. The empty variant
    (a benchmark without variants) has no fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready values of every field."""
        return self.model_dump(mode="json")


def variant_key(values: Mapping[str, Any]) -> str:
    """Canonical JSON of a variant's values (the resume key of an evaluation grid point)."""
    return json.dumps(dict(values), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _allowed(model: type[Variant], key: str) -> tuple[Any, ...]:
    """The literal values a field accepts (empty when it takes free values)."""
    out: list[Any] = []
    pending = [model.model_fields[key].annotation]
    while pending:
        hint = pending.pop(0)
        origin = typing.get_origin(hint)
        if origin is typing.Literal:
            out.extend(typing.get_args(hint))
        elif origin is typing.Union or origin is types.UnionType:
            pending.extend(typing.get_args(hint))
    return tuple(out)


def parse_variant(
    model: type[Variant],
    values: Mapping[str, Any],
    *,
    base: Variant | None = None,
    valid_keys: tuple[str, ...] = (),
) -> Variant:
    """Validate ``values`` into ``model`` (on top of ``base``'s values).

    Raises:
        UnknownOptionError: A key is not a field of ``model`` (the message lists ``valid_keys`` and the
            variant's keys, with a did-you-mean).
        VariantError: A value is invalid; names the key and the allowed values.
    """
    fields = model.model_fields
    for key in values:
        if key not in fields:
            raise UnknownOptionError(key, (*valid_keys, *fields))
    merged = {**(base.model_dump() if base is not None else {}), **values}
    try:
        return model.model_validate(merged)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        key = str(err["loc"][0]) if err["loc"] else None
        message = err["msg"]
        if key in fields:
            allowed = _allowed(model, key)
            given = merged.get(key)
            if allowed and isinstance(given, str | int | float | bool | None):
                message = f"{given!r} is not one of {', '.join(map(repr, allowed))}." + did_you_mean(
                    str(given), [str(a) for a in allowed]
                )
            else:  # name what was given and what the key takes (a bare pydantic message names neither)
                message = (
                    f"{key} takes {describe_type(fields[key].annotation)}, got {describe(given)} ({message})."
                )
        raise VariantError(message, key=key) from None


def parse_key_values(
    pairs: Sequence[str] | None, *, flag: str = "--env-arg", repeat: bool = False
) -> dict[str, Any]:
    """``KEY=VALUE`` pairs (env kwargs, variant values, agent options) to a dict; values are JSON when
    they parse (numbers, booleans, lists), else strings. With ``repeat``, every key maps to the list
    of its values in order. A pair without ``=`` raises :class:`EnvUsageError` naming ``flag``."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise EnvUsageError(f"{flag} takes KEY=VALUE, got {pair!r}")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        if repeat:
            out.setdefault(key, []).append(value)
        else:
            out[key] = value
    return out
