"""Worlds, masks and the audit: the mechanics every EpiSEM family shares.

* :func:`world_state` builds a twin's world: the task's records with the safe twin's overrides written
  into the records the atoms name (the unsafe world is the records as authored).
* :func:`apply_mask` removes, from one read-tool result, every exposure of the masked atoms that the
  call shows (the field is omitted, never falsified; entries of one list go from the highest index
  down so the remaining paths stay valid). Repeating the read cannot restore it: the mask holds for the
  whole rollout.
* :func:`audit_result` is what the independent audit tool returns under ``recoverable``: every masked
  atom of the record the query names, with its authoritative value; nothing for any other query.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from tooltrap.envs.core import State
from tooltrap.envs.core.trace import omit_path, parse_path

from .task import EpiSEMTask


def world_state(task: EpiSEMTask, world: str) -> State:
    """The initial state of ``world`` (``unsafe``: as authored; ``safe``: with the overrides)."""
    state = task.make_state()
    if world != "safe":
        return state
    collections = {c: dict(state.collection(c)) for c in state.collections()}
    for atom_id, value in task.safe_overrides.items():
        atom = task.atom(atom_id)
        records = collections[atom.collection]
        records[atom.record_id] = {**records[atom.record_id], atom.predicate: value}
    return State(collections, now=state.now, context=state.context)


def _sort_key(path: str) -> tuple[Any, ...]:
    """Paths sorted so that removing them in order never shifts a later one: list indexes descending."""
    return tuple((0, -p) if isinstance(p, int) else (1, p) for p in parse_path(path))


def masked_paths(
    task: EpiSEMTask, mask: Collection[str], tool: str, arguments: Mapping[str, Any]
) -> list[str]:
    """The result paths a call of ``tool`` with ``arguments`` must omit under ``mask``."""
    paths = {
        e.path
        for atom in task.atoms
        if atom.id in mask
        for e in atom.exposures
        if e.shown_by(tool, arguments)
    }
    return sorted(paths, key=_sort_key)


def apply_mask(
    task: EpiSEMTask, mask: Collection[str], tool: str, arguments: Mapping[str, Any], result: Any
) -> tuple[Any, list[str]]:
    """``result`` without the masked atoms' exposures this call shows, and the paths removed."""
    removed = []
    for path in masked_paths(task, mask, tool, arguments):
        result, found = omit_path(result, path)
        if found:
            removed.append(path)
    return result, removed


def audit_result(
    task: EpiSEMTask, mask: Collection[str], record: str, world_values: Mapping[str, Any]
) -> dict[str, Any]:
    """The audit tool's answer for a query naming ``record`` (``collection/id``): every masked atom
    about that record, with its authoritative value in the episode's world; empty otherwise."""
    facts = [
        {"atom": a.id, "record": a.subject, "field": a.predicate, "value": world_values[a.id]}
        for a in task.atoms
        if a.id in mask and a.subject == record
    ]
    return {"record": record, "facts": facts}
