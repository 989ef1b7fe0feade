"""Deterministic, copy-on-write simulated state.

The state is a mapping ``collection -> entity id -> record`` of JSON values. A fresh state shares the
(never mutated) task data: ``reset`` costs one shallow dict copy. The first write to a collection copies
that collection's index; every update stores a new shallow copy of the record, so no record object is
ever mutated once stored (they are snapshots, shared with forks, the log and traces). Every mutation goes through
:meth:`State.insert`, :meth:`State.update` or :meth:`State.delete`, which append a :class:`Change` to a
log: the log is the basis of write extraction, per-entity diffs and rollback of a failed call.

No wall clock and no global RNG: new ids come from per-prefix counters held in the state itself, and
the current time is the task's fixed ``now``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

Record = dict[str, Any]
Collections = dict[str, dict[str, Record]]
_MISSING = object()


def copy_json(value: Any) -> Any:
    """Deep copy of a JSON value (much faster than ``copy.deepcopy``)."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


def json_strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value, in document order (for searching results as text without the
    escaping ``json.dumps`` adds)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from json_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from json_strings(v)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(slots=True)
class Change:
    """One entity-level mutation. ``before`` is the record before (None for a create)."""

    collection: str
    entity_id: str
    op: str  # "create" | "update" | "delete"
    fields: tuple[str, ...]
    before: Record | None

    @property
    def entity(self) -> str:
        return f"{self.collection}/{self.entity_id}"


class State:
    """Simulated backends' data. See the module docstring."""

    __slots__ = ("_data", "_owned_collections", "counters", "now", "log", "context")

    def __init__(
        self,
        collections: Mapping[str, Mapping[str, Record]],
        *,
        now: str = "2026-01-05T09:00:00",
        counters: Mapping[str, int] | None = None,
        context: Mapping[str, Any] | None = None,
    ):
        self._data: Collections = dict(collections)  # type: ignore[arg-type]
        self._owned_collections: set[str] = set()
        self.counters: dict[str, int] = dict(counters or {})
        self.now = now
        self.log: list[Change] = []
        #: read-only facts about the world that are not entities (the acting user, org domain)
        self.context: Mapping[str, Any] = dict(context or {})

    # -- reads ---------------------------------------------------------------------------------------
    def get(self, collection: str, entity_id: str) -> Record | None:
        """Return the record (treat it as read-only) or None."""
        return self._data.get(collection, {}).get(entity_id)

    def collection(self, collection: str) -> Mapping[str, Record]:
        """Read-only view of one collection (id -> record), in insertion order."""
        return self._data.get(collection, {})

    def records(self, collection: str) -> Iterator[Record]:
        return iter(self._data.get(collection, {}).values())

    def collections(self) -> list[str]:
        return list(self._data)

    # -- writes --------------------------------------------------------------------------------------
    def _own_collection(self, collection: str) -> dict[str, Record]:
        if collection not in self._owned_collections:
            self._data[collection] = dict(self._data.get(collection, {}))
            self._owned_collections.add(collection)
        return self._data[collection]

    def new_id(self, prefix: str) -> str:
        """Next sequential id for ``prefix`` (e.g. ``msg_7``); counters are part of the state."""
        n = self.counters.get(prefix, 0) + 1
        self.counters[prefix] = n
        return f"{prefix}_{n}"

    def insert(self, collection: str, record: Record, *, prefix: str) -> str:
        """Create an entity with a fresh id (stored under ``record['id']``); return the id.

        The state takes ownership of ``record`` (tools build it fresh and do not touch it afterwards): it
        is stored without a copy.
        """
        table = self._own_collection(collection)
        entity_id = self.new_id(prefix)
        while entity_id in table:  # task data may already use low numbers
            entity_id = self.new_id(prefix)
        stored = record
        stored["id"] = entity_id
        table[entity_id] = stored
        self.log.append(Change(collection, entity_id, "create", tuple(sorted(stored)), None))
        return entity_id

    def update(self, collection: str, entity_id: str, **changes: Any) -> tuple[str, ...]:
        """Set fields; fields whose value does not change are skipped. Returns the changed fields.

        An update stores a new record (a shallow copy with the new values) and never mutates the old
        one, nor any value in place: every record object the state ever held is a snapshot, shared
        freely with the task data, forks, the change log and the trace.
        """
        table = self._own_collection(collection)
        before = table[entity_id]
        changed = tuple(k for k, v in changes.items() if before.get(k, _MISSING) != v)
        if not changed:
            return ()
        record = table[entity_id] = dict(before)
        for name in changed:
            record[name] = copy_json(changes[name])
        self.log.append(Change(collection, entity_id, "update", changed, before))
        return changed

    def delete(self, collection: str, entity_id: str) -> None:
        table = self._own_collection(collection)
        before = table.pop(entity_id)
        self.log.append(Change(collection, entity_id, "delete", tuple(sorted(before)), before))

    # -- transactions --------------------------------------------------------------------------------
    def mark(self) -> tuple[int, dict[str, int]]:
        """A point to roll back to."""
        return len(self.log), dict(self.counters)

    def rollback(self, mark: tuple[int, dict[str, int]]) -> None:
        """Undo every change after ``mark`` (used when a tool call fails half-way)."""
        position, counters = mark
        while len(self.log) > position:
            change = self.log.pop()
            table = self._own_collection(change.collection)
            if change.before is None:
                table.pop(change.entity_id, None)
            else:
                table[change.entity_id] = change.before
        self.counters = counters

    def fork(self) -> State:
        """A scratch copy for what-if execution (previews). O(#collections): the fork shares data
        copy-on-write, and this state forgets its ownership so neither can see the other's writes."""
        child = State(self._data, now=self.now, counters=self.counters, context=self.context)
        self._owned_collections.clear()
        return child

    # -- whole-state views ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable deep copy (collections, counters, now)."""
        return {"collections": copy_json(self._data), "counters": dict(self.counters), "now": self.now}

    def hash(self) -> str:
        """SHA-256 of the canonical JSON of the state; equal states hash equal."""
        data = {k: v for k, v in self._data.items() if v}
        payload = canonical_json({"collections": data, "counters": self.counters})
        # surrogatepass: a lone surrogate an agent wrote into the state still hashes (and deterministically)
        return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()

    def diff(self, other: State) -> dict[str, tuple[str, ...]]:
        """Entity-level diff: ``"collection/id" -> changed fields`` (all fields for creates/deletes)."""
        out: dict[str, tuple[str, ...]] = {}
        for collection in sorted(set(self._data) | set(other._data)):
            mine = self._data.get(collection, {})
            theirs = other._data.get(collection, {})
            if mine is theirs:
                continue
            for entity_id in sorted(set(mine) | set(theirs)):
                a, b = mine.get(entity_id), theirs.get(entity_id)
                if a is b or a == b:
                    continue
                if a is None or b is None:
                    out[f"{collection}/{entity_id}"] = tuple(sorted(a or b or {}))
                else:
                    keys = sorted(set(a) | set(b))
                    out[f"{collection}/{entity_id}"] = tuple(
                        k for k in keys if a.get(k, _MISSING) != b.get(k, _MISSING)
                    )
        return out
