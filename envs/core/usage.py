"""Checks of what a user hands the engine: env constructor kwargs and reset options (checked against
what they accept, with did-you-mean for unknown names), and the limits of user data files (nesting
depth, string sizes, row counts, no NaN or infinity), so that a bad value is a typed error that names
it, what was given and what is accepted, at the moment it is given, never a bare ``TypeError`` later.

* :func:`checked_init` wraps an env class's ``__init__`` (``ToolEnv`` does it for every subclass):
  an unknown kwarg is an :class:`~tooltrap.envs.core.errors.UnknownOptionError` with a did-you-mean,
  a value of a type the signature does not accept is an :class:`OptionTypeError`.
* :func:`accepts` and :func:`describe_type` read the annotations (unions, literals, containers).
* :func:`check_json_value` walks decoded user data once, iteratively (no recursion to exhaust), and
  :func:`loads_json` decodes text refusing NaN and infinity (``json.loads`` takes them by default).
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import os
import re
import reprlib
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import EnvUsageError, UnknownOptionError, did_you_mean

_SHORT = reprlib.Repr()
_SHORT.maxstring = 60
_SHORT.maxother = 60
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxset = _SHORT.maxdict = 4
_SHORT.maxlevel = 2


def describe(value: Any) -> str:
    """A short, safe description of a given value for an error message: its type and a shortened repr
    (a 2-million-character string or a 5,000-digit integer must not become the message)."""
    kind = type(value).__name__
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an int of {len(str(value)) if value.bit_length() < 14_000 else 'over 4,300'} digits"
    try:
        shown = _SHORT.repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails is still described by its type
        shown = f"<{kind} object>"
    if isinstance(value, str | bytes) and len(value) > _SHORT.maxstring:
        return f"{kind} of {len(value):,} characters {shown}"
    return f"{kind} {shown}"


class OptionTypeError(EnvUsageError):
    """An env kwarg or a reset option was given a value of a type it does not take. Names the option,
    what was given and what is accepted (``option``, ``given``, ``accepted``)."""

    def __init__(self, option: str, given: Any, accepted: str, *, where: str = "env kwarg", hint: str = ""):
        self.option = option
        self.given = given
        self.accepted = accepted
        super().__init__(
            f"{where} {option!r} takes {accepted}, got {describe(given)}." + (f" {hint}" if hint else "")
        )


# -- types from annotations ------------------------------------------------------------------------
_UNION_TYPES = (typing.Union, types.UnionType)


def accepts(value: Any, hint: Any) -> bool:
    """Whether ``value`` fits the annotation ``hint`` (unions, ``Literal``, ``None``, ``str``, ``int``
    (not ``bool``), ``float``, paths, lists, tuples, sequences (not a ``str``), mappings and classes;
    container items are checked). What this cannot judge (a bare ``TypeVar``, ``Any``) is accepted."""
    if hint is Any or hint is object or isinstance(hint, typing.TypeVar):
        return True
    if hint is None or hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in _UNION_TYPES:
        return any(accepts(value, h) for h in args)
    if origin is typing.Literal:
        # True == 1: a literal's value and type both match (a bool is not the literal 1)
        return any(value == a and type(value) is type(a) for a in args)
    if origin is typing.Annotated:
        return accepts(value, args[0])
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin in (list, tuple, Sequence) or hint in (list, tuple, Sequence):
        # a list annotation takes a tuple too; a Sequence any sequence (a TaskSet) but never a string
        if isinstance(value, str | bytes) or not isinstance(value, list | tuple | Sequence):
            return False
        if origin is tuple and args and args[-1] is not Ellipsis:
            return len(value) == len(args) and all(accepts(v, h) for v, h in zip(value, args, strict=True))
        item = args[0] if args else Any
        return all(accepts(v, item) for v in value)
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        if not isinstance(value, Mapping):
            return False
        key, item = args if len(args) == 2 else (Any, Any)
        return all(accepts(k, key) and accepts(v, item) for k, v in value.items())
    if isinstance(origin, type):  # a subscripted generic class (Benchmark[Any, Any, Any])
        return isinstance(value, origin)
    if isinstance(hint, type):
        if hint in (os.PathLike,) or issubclass(hint, os.PathLike):
            return isinstance(value, os.PathLike)
        return isinstance(value, hint)
    return True


def describe_type(hint: Any) -> str:
    """An annotation in words: ``str | list[str] | None`` -> ``a str, a list of str or None``."""
    if hint is Any or hint is object:
        return "any value"
    if hint is None or hint is type(None):
        return "None"
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in _UNION_TYPES:
        parts = list(dict.fromkeys(describe_type(h) for h in args))
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin is typing.Annotated:
        return describe_type(args[0])
    if origin in (list, tuple, Sequence):
        item = args[0] if args else Any
        if typing.get_origin(item) in _UNION_TYPES:
            return "a list of " + " or ".join(_bare(h) for h in typing.get_args(item))
        return f"a list of {_bare(item)}" if item is not Any else "a list"
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        return "a dict" if not args or args[1] is Any else f"a dict of {_bare(args[1])}"
    if hint in (list, tuple, Sequence):
        return "a list"
    if isinstance(origin, type):
        return f"a {origin.__name__}"
    if isinstance(hint, type):
        if issubclass(hint, os.PathLike):
            return "a path"
        return {"int": "a whole number", "float": "a number", "bool": "True or False"}.get(
            hint.__name__, f"a {hint.__name__}"
        )
    return str(hint)


def _literals(hint: Any) -> list[Any]:
    """Every literal value an annotation names (through unions)."""
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return list(typing.get_args(hint))
    if origin in _UNION_TYPES:
        return [a for h in typing.get_args(hint) for a in _literals(h)]
    return []


def _bare(hint: Any) -> str:
    text = describe_type(hint)
    return text[2:] if text.startswith("a ") else text


# -- env constructors --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Signature:
    """What a constructor accepts: its parameters (without ``self``) and their resolved annotations."""

    name: str
    parameters: tuple[inspect.Parameter, ...]
    hints: Mapping[str, Any]
    var_keyword: bool
    max_positional: int | None


@functools.cache
def _signature(init: Callable[..., None], owner: str) -> _Signature:
    params = tuple(inspect.signature(init).parameters.values())[1:]  # without self
    try:
        hints = typing.get_type_hints(init)
    except Exception:  # noqa: BLE001 - a hint that does not resolve: check the ones that do
        hints = {}
        namespace = getattr(init, "__globals__", {})
        for p in params:
            annotation = init.__annotations__.get(p.name)
            try:  # our own source's annotations, resolved as typing.get_type_hints would
                hints[p.name] = eval(annotation, namespace) if isinstance(annotation, str) else annotation  # noqa: S307
            except Exception:  # noqa: BLE001
                continue
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return _Signature(
        name=owner,
        parameters=params,
        hints=hints,
        var_keyword=any(p.kind is p.VAR_KEYWORD for p in params),
        max_positional=None if any(p.kind is p.VAR_POSITIONAL for p in params) else len(positional),
    )


def check_arguments(
    init: Callable[..., None], owner: str, args: Sequence[Any], kwargs: Mapping[str, Any]
) -> None:
    """Check a constructor call before it runs: unknown kwargs (with did-you-mean), too many positional
    arguments, and every value against its annotation.

    Raises:
        UnknownOptionError: A kwarg the constructor does not take.
        OptionTypeError: A value of a type its annotation does not accept.
        EnvUsageError: Too many positional arguments.
    """
    sig = _signature(init, owner)
    by_name = {p.name: p for p in sig.parameters}
    keywords = [p.name for p in sig.parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if not sig.var_keyword:
        for key in kwargs:
            if key not in by_name or by_name[key].kind is inspect.Parameter.POSITIONAL_ONLY:
                raise UnknownOptionError(key, keywords, what=f"{owner} argument")
    if sig.max_positional is not None and len(args) > sig.max_positional:
        raise EnvUsageError(
            f"{owner} takes at most {sig.max_positional} positional arguments, got {len(args)}; pass the "
            f"others by name ({', '.join(keywords)})."
        )
    given: list[tuple[str, Any]] = [(p.name, v) for p, v in zip(sig.parameters, args, strict=False)]
    given += list(kwargs.items())
    for name, value in given:
        hint = sig.hints.get(name)
        if hint is not None and not accepts(value, hint):
            names = [a for a in _literals(hint) if isinstance(a, str)]
            hint_text = did_you_mean(value, names).strip() if isinstance(value, str) and names else ""
            if isinstance(value, str | os.PathLike) and f"{name}_file" in keywords:
                hint_text = f"To load a file, pass {name}_file={str(value)[:80]!r}."  # --env-arg tasks=PATH
            raise OptionTypeError(name, value, describe_type(hint), where=f"{owner} argument", hint=hint_text)


def checked_init(init: Callable[..., None]) -> Callable[..., None]:
    """Wrap an env class's ``__init__`` with :func:`check_arguments` (the signature, docstring and
    annotations stay those of ``init``: ``inspect.signature`` and ``help`` show them)."""
    if getattr(init, "__tooltrap_checked__", False):
        return init
    owner = init.__qualname__.rpartition(".")[0] or init.__qualname__

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        check_arguments(init, owner, args, kwargs)
        init(self, *args, **kwargs)

    __init__.__tooltrap_checked__ = True  # type: ignore[attr-defined]
    return __init__


# -- user data files ---------------------------------------------------------------------------------
#: deepest nesting of objects and lists a user data file may have (tasks and rows nest a few levels; a
#: thousand levels only exhausts recursion in whatever reads the value next)
MAX_DEPTH = 64
#: the longest string a user data file may hold (prompts are limited to 1,000,000 characters in all)
MAX_STRING_CHARS = 100_000
#: the most items (list items and object keys together) in one value
MAX_ITEMS = 1_000_000
#: the most rows (tasks, corpus rows, dataset rows) one user file may hold
MAX_ROWS = 100_000


class DataLimitError(ValueError):
    """A user data value is past a limit or not JSON data (``path`` is where, ``$.a[0].b``)."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def dotted(path: str) -> str | None:
    """A :class:`DataLimitError` path as a task field (``$.gold[0].arguments`` -> ``gold.0.arguments``),
    the style task errors name fields in; None for the root."""
    text = re.sub(r"\[(\d+)\]", r".\1", path).lstrip("$").lstrip(".")
    parts = text.split(".")
    if len(parts) > 12:  # a path into a deep nest: its start says where, the rest is noise
        text = ".".join(parts[:6]) + f"... ({len(parts)} levels)"
    return text or None


def _child(path: str, key: Any) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"


def check_json_value(
    value: Any,
    *,
    max_depth: int = MAX_DEPTH,
    max_string: int = MAX_STRING_CHARS,
    max_items: int = MAX_ITEMS,
    root: str = "$",
) -> None:
    """Check decoded user data once, iteratively: nesting at most ``max_depth``, strings at most
    ``max_string`` characters, at most ``max_items`` items, numbers finite, keys strings, only JSON
    types (a pydantic model stands for its JSON data). Raises :class:`DataLimitError` naming the path
    of the first problem. Paths are built only for containers, so a row of a few hundred values costs
    tens of microseconds (an importer checks thousands)."""
    pending: list[tuple[Any, str, int]] = [(value, root, 0)]
    n_items = 0
    while pending:
        node, path, depth = pending.pop()
        kind = type(node)
        if kind is dict or kind is list or kind is tuple or isinstance(node, Mapping | list | tuple):
            if depth >= max_depth:
                raise DataLimitError(path, f"nested deeper than {max_depth} levels")
            n_items += len(node)
            if n_items > max_items:
                raise DataLimitError(path, f"more than {max_items:,} items in all")
            mapping = kind is dict or (kind is not list and kind is not tuple and isinstance(node, Mapping))
            for key, sub in node.items() if mapping else enumerate(node):
                if mapping and type(key) is not str:
                    raise DataLimitError(path, f"an object key must be a string, got {describe(key)}")
                sub_kind = type(sub)
                if sub_kind is str:
                    if len(sub) > max_string:
                        raise DataLimitError(
                            _child(path, key),
                            f"a string of {len(sub):,} characters; the limit is {max_string:,}",
                        )
                elif sub_kind is int or sub_kind is bool or sub is None:
                    continue
                elif sub_kind is float:
                    if sub - sub != 0.0:  # NaN and infinity (and only they) fail this
                        raise DataLimitError(_child(path, key), f"{sub!r} is not a number a task may hold")
                else:
                    pending.append((sub, _child(path, key), depth + 1))
        elif kind is str:
            if len(node) > max_string:
                raise DataLimitError(
                    path, f"a string of {len(node):,} characters; the limit is {max_string:,}"
                )
        elif kind is float:
            if not math.isfinite(node):
                raise DataLimitError(path, f"{node!r} is not a number a task may hold (NaN or infinity)")
        elif isinstance(node, str | int | float) or node is None:  # bool, str and int subclasses
            if isinstance(node, float) and not math.isfinite(node):
                raise DataLimitError(path, f"{node!r} is not a number a task may hold (NaN or infinity)")
            if isinstance(node, str) and len(node) > max_string:
                raise DataLimitError(
                    path, f"a string of {len(node):,} characters; the limit is {max_string:,}"
                )
        else:
            dump = getattr(node, "model_dump", None)
            if callable(dump):
                pending.append((dump(mode="json"), path, depth))
                continue
            raise DataLimitError(path, f"{describe(node)} is not JSON data")


#: the largest user data file read whole (a larger one is refused before it fills memory)
MAX_FILE_BYTES = 512 * 1024 * 1024


class UnreadableFileError(ValueError):
    """A user file cannot be read as text: missing, a folder, too large, or not UTF-8 (``line`` is the
    line of the first undecodable byte)."""

    def __init__(self, message: str, *, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line


def read_user_text(path: str | os.PathLike[str], *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The text of a user's data file (UTF-8, a leading byte-order mark dropped). Raises
    :class:`UnreadableFileError` saying why it cannot be read, with the line of a non-UTF-8 byte."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise UnreadableFileError(f"cannot read the file: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise UnreadableFileError(f"the file is over {max_bytes:,} bytes; split it")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UnreadableFileError(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} on line {line} ({exc.reason}); save the file "
            "as UTF-8",
            line=line,
        ) from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a task may hold (JSON has no NaN or Infinity)")


def loads_json(text: str) -> Any:
    """``json.loads`` without NaN/Infinity. Raises ``ValueError`` (bad JSON, NaN, an integer past
    Python's 4,300-digit limit) or ``RecursionError`` (nesting too deep to decode)."""
    return json.loads(text, parse_constant=_no_constant)


def json_problem(exc: BaseException) -> str:
    """A decoding error in a few words, for a message that also names the file and the line."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} (column {exc.colno})"
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    text = str(exc)
    if "digits" in text and "integer" in text:
        return "a number has more than 4,300 digits"
    return text
