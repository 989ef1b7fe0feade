"""Worlds, masks and the audit: the mechanics every EpiSEM family shares.

* :func:`world_collections` builds a twin's records: the task's records with the safe twin's overrides
  written into the records the atoms name (the unsafe world is the records as authored).
* Which result fields show an atom is decided in two ways (:func:`hidden_paths`, the one definition
  the episode hook, :meth:`EpiSEM.dependence` and the self-check share):

  - **perturbation**: the same read call is executed on the state with the atom's field changed
    (type-preserving: a number moved, a string extended, a flag flipped), and every result path whose
    value differs depends on the atom (:func:`changed_paths`). This holds for any arguments the agent
    passes, for listings, for records embedded in others and for the stored field itself, with no
    per-tool annotation that could go stale;
  - **declaration**, for a value a tool *derives* from the atom that one perturbation need not move
    (a threshold ``limit >= amount``, a bucketed label, a count of list items matching, a clamped sum,
    a word taken from a text): the tool declares it, ``@tool("read", derived={"limit_covers_amount":
    ("payment_limit", "amount")})`` (keys: a result key matched at any depth, or a path with ``[*]``
    for list items; values: the record fields it is computed from), and every path the pattern matches
    is hidden whenever an atom with one of those fields is masked (over-removal across records that
    share a field name is accepted: omitting never falsifies).

  The task data lists the exposures found this way for every read call of the task
  (``Atom.exposures``). The self-check proves them complete by comparing masked observations across
  alternative worlds (the twin, the perturbation and boundary values for each masked atom): an
  undeclared derived value shows up as an observation that changes with a masked value.
* A **mask** omits those paths from the result (:func:`masked_result`): the field is removed, never
  falsified, and the mask holds for the whole rollout (every read is masked again).
* The **audit** tool (``recoverable`` condition only) answers one valid query, naming the record the
  request is about (:attr:`EpiSEMTask.case_records`), with every masked atom and its authoritative value
  (the paper's "returns all omitted facts"); a query naming any other record returns nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from tooltrap.envs.core import State, ToolSpec
from tooltrap.envs.core.trace import omit_path, parse_path

from .task import Atom, EpiSEMTask

#: context key of the audit index (:func:`audit_index`)
AUDIT_CONTEXT = "audit"


def world_collections(task: EpiSEMTask, world: str) -> dict[str, dict[str, dict[str, Any]]]:
    """The records of ``world`` (``unsafe``: as authored; ``safe``: with the overrides). Collections
    the overrides do not touch are the task's own objects (never mutated: the state copies on write)."""
    collections = dict(task.initial_state.collections)
    if world != "safe":
        return collections
    for atom_id, value in task.safe_overrides.items():
        atom = task.atom(atom_id)
        records = collections[atom.collection] = dict(collections[atom.collection])
        records[atom.record_id] = {**records[atom.record_id], atom.predicate: value}
    return collections


def existing_records(task: EpiSEMTask, world: str) -> frozenset[tuple[str, str]]:
    """The ``(collection, id)`` of every record ``world`` holds before an episode."""
    return frozenset((c, k) for c, records in world_collections(task, world).items() for k in records)


def world_state(task: EpiSEMTask, world: str) -> State:
    """A fresh initial state of ``world``."""
    s = task.initial_state
    return State(world_collections(task, world), now=s.now, context=s.context)


def perturb(value: Any, salt: int = 0) -> Any:
    """A value of the same type that differs from ``value`` (flags flip, numbers move, strings and lists
    grow): tools that compare, sort or format it still run, and every result field it reaches
    changes."""
    offset = 7919 + salt
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + offset
    if isinstance(value, float):
        return value + offset + 0.5
    if isinstance(value, str):
        return f"{value}~{salt}"
    if isinstance(value, list):
        return [*value, f"~{salt}"]
    if isinstance(value, dict):
        return {**value, f"~{salt}": salt}
    return f"~{salt}"


def changed_paths(a: Any, b: Any, path: str = "$") -> list[str]:
    """The outermost paths where two JSON values differ (a list whose length differs is one path)."""
    if type(a) is not type(b):
        return [path]
    if isinstance(a, dict):
        out: list[str] = []
        for key in a.keys() | b.keys():
            sub = f"{path}.{key}"
            if key not in a or key not in b:
                out.append(sub)
            elif not _same_scalar(a[key], b[key]):  # equal scalars (most fields) need no call
                out.extend(changed_paths(a[key], b[key], sub))
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [path]
        return [
            p for i, (x, y) in enumerate(zip(a, b, strict=True)) for p in changed_paths(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [path]


_SCALARS = (str, int, float, bool, type(None))


def _same_scalar(x: Any, y: Any) -> bool:
    """Whether two values are the same scalar (equal and of one type: ``1`` is not ``1.0``)."""
    return x is y or (type(x) is type(y) and type(x) in _SCALARS and x == y)


def removal_order(paths: Iterable[str]) -> list[str]:
    """Paths sorted so that removing them in order never shifts a later one: list indexes descending,
    and a path before any path inside it is not needed (the inner one is dropped)."""
    unique = sorted(set(paths), key=len)
    kept = [p for i, p in enumerate(unique) if not any(_inside(p, q) for q in unique[:i])]

    def key(path: str) -> tuple[Any, ...]:
        return tuple((0, -p) if isinstance(p, int) else (1, p) for p in parse_path(path))

    return sorted(kept, key=key)


def _inside(path: str, outer: str) -> bool:
    return path != outer and (path.startswith(outer + ".") or path.startswith(outer + "["))


def perturbed_state(state: State, atoms: Iterable[Atom]) -> State:
    """A scratch fork of ``state`` with each atom's field perturbed (distinct salts, so perturbations
    of several atoms never cancel)."""
    fork = state.fork()
    for salt, atom in enumerate(atoms):
        record = fork.get(atom.collection, atom.record_id)
        if record is not None:
            fork.update(
                atom.collection, atom.record_id, **{atom.predicate: perturb(record.get(atom.predicate), salt)}
            )
    return fork


#: runs a read call on a given state and returns its result (or raises)
RunOn = Callable[[State], Any]


def read_runner(benchmark: Any, task: EpiSEMTask, variant: Any, name: str, arguments: Any) -> RunOn:
    """The call ``name(arguments)`` as a function of the state it runs on (the same validation and tool
    as the episode), for the perturbation runs."""
    from tooltrap.envs.core import Executor

    kwargs = benchmark.toolset(task, variant)[name].validate(arguments)

    def run_on(state: State) -> Any:
        return Executor(benchmark, task, state=state, variant=variant).bound_tool(name)(**kwargs)

    return run_on


def dependent_paths(
    run_on: RunOn, state: State, atoms: Collection[Atom], result: Any, perturbed: State | None = None
) -> list[str] | None:
    """The result paths of a call (``result`` on ``state``) that depend on any of ``atoms``; None when
    the call fails once they are perturbed (then nothing of it can be shown safely). ``perturbed``:
    ``perturbed_state(state, atoms)`` when the caller already has it (read calls never write, so one
    perturbed state serves every call on ``state``)."""
    if not atoms:
        return []
    try:
        other = run_on(perturbed if perturbed is not None else perturbed_state(state, atoms))
    except Exception:
        return None
    return changed_paths(result, other)


def whole_result(result: Any) -> list[str]:
    """Every top-level path of a result: what is hidden of a call that cannot run without the masked
    facts (nothing of it can be shown safely)."""
    if isinstance(result, Mapping):
        return [f"$.{k}" for k in result]
    if isinstance(result, list):
        return [f"$[{i}]" for i in range(len(result))]
    return []  # a bare value has no field to omit (read tools return objects)


def hidden_paths(
    spec: ToolSpec,
    run_on: RunOn,
    state: State,
    atoms: Collection[Atom],
    result: Any,
    perturbed: State | None = None,
) -> list[str]:
    """The result paths a mask of ``atoms`` omits from a read call (``result`` of ``spec``'s tool on
    ``state``), in removal order: the paths perturbation finds (:func:`dependent_paths`; ``perturbed``
    as there) and the paths
    the tool declares as derived from the atoms' fields (``@tool(..., derived=...)``); the whole result
    when the call fails once the atoms are perturbed. The one definition of what a mask hides: the
    episode hook and the self-check both call it."""
    if not atoms:
        return []
    paths = dependent_paths(run_on, state, atoms, result, perturbed)
    if paths is None:
        return removal_order(whole_result(result))
    paths += spec.derived_paths(result, {a.predicate for a in atoms})
    return removal_order(paths)


def masked_result(
    spec: ToolSpec, run_on: RunOn, state: State, atoms: Collection[Atom], perturbed: State | None = None
) -> Any:
    """What the read call shows on ``state`` under a mask of ``atoms`` (raises when the call fails);
    ``perturbed`` as for :func:`dependent_paths`."""
    result = run_on(state)
    for path in hidden_paths(spec, run_on, state, atoms, result, perturbed):
        result, _ = omit_path(result, path)
    return result


def audit_index(task: EpiSEMTask, mask: Collection[str]) -> dict[str, Any]:
    """What the audit tool answers: ``case`` (the record ids a valid query may name) and ``facts``
    (``[record id, field]`` of every masked atom, all returned by one valid query)."""
    return {
        "case": task.case_records,
        "facts": [[a.record_id, a.predicate] for a in task.atoms if a.id in mask],
    }


def facts_in(result: Any, task: EpiSEMTask) -> dict[str, Any]:
    """The atoms an audit result restores: ``{atom id: value}`` for each fact it lists."""
    if not isinstance(result, Mapping):
        return {}
    by_field = {(a.record_id, a.predicate): a.id for a in task.atoms}
    out = {}
    for fact in result.get("facts") or []:
        if not isinstance(fact, Mapping):
            continue
        atom_id = by_field.get((fact.get("record_id"), fact.get("field")))
        if atom_id is not None:
            out[atom_id] = fact.get("value")
    return out


def value_at(result: Any, path: str | tuple[str | int, ...]) -> tuple[bool, Any]:
    """``(True, value)`` when ``path`` (JSONPath text, or its parts) resolves in ``result``,
    ``(False, None)`` otherwise."""
    node = result
    for part in parse_path(path) if isinstance(path, str) else path:
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                return False, None
        elif not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def leaves(value: Any, path: str = "$") -> Iterable[tuple[str, Any]]:
    """Every ``(path, scalar)`` of a JSON value (lists and dicts walked)."""
    if isinstance(value, Mapping):
        for key, sub in value.items():
            yield from leaves(sub, f"{path}.{key}")
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            yield from leaves(sub, f"{path}[{i}]")
    else:
        yield path, value


__all__ = [
    "AUDIT_CONTEXT",
    "audit_index",
    "changed_paths",
    "dependent_paths",
    "existing_records",
    "facts_in",
    "hidden_paths",
    "leaves",
    "masked_result",
    "perturb",
    "perturbed_state",
    "removal_order",
    "value_at",
    "whole_result",
    "world_collections",
    "world_state",
]
