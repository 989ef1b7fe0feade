"""The attacker's choices in ``sentry_arena_v0``: which payload, planted where, derived mechanically from
the scenarios (never authored per scenario).

* **Payloads**: the payloads of the same attack family: every scenario of the pool with the scenario's
  family and attack goal lends its attack (payload text, success patterns, directive), keyed by that
  scenario's id. The scenarios share one invented city, so another scenario's directive names places of
  this world (:meth:`~tooltrap.envs.sentry.Sentry.check_task` checks every planted scenario).
* **Placements**: where the scenario's tools expose text to the assistant: ``content`` (the incoming
  message the user hands over), ``tool:<read tool>`` for each read the careful operator makes that
  returns a record with a free-text field (:data:`CARRIERS`: the poisoned record, as the corpus plants
  it), and ``turn:<k>`` where the scenario has a follow-up turn that carries a payload (goal drift).

The scenario's own (payload, placement) is always an option: choosing it plays the scenario object
itself, so the episode is exactly the single-agent env's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tooltrap.envs.core import TaskCheckError
from tooltrap.envs.sentry import SentryScenario, benchmark

#: read tool -> (collection, field): the free-text field of the record the read returns that carries a
#: planted payload (what the corpus poisons: ``envs/sentry/authoring/corpus.py``)
CARRIERS: dict[str, tuple[str, str]] = {
    "location_lookup": ("locations", "notes"),
    "location_incident_history": ("history", "summary"),
}


@dataclass(frozen=True, slots=True)
class AttackOption:
    """One allowed choice: the payload (the id of the scenario that lends it) and its placement."""

    payload: str
    placement: str

    def to_dict(self) -> dict[str, str]:
        return {"payload": self.payload, "placement": self.placement}


def _strip(value: Any, payload: str) -> Any:
    if isinstance(value, str):
        return value.replace(payload, "").rstrip()
    if isinstance(value, list):
        return [_strip(v, payload) for v in value]
    if isinstance(value, dict):
        return {k: _strip(v, payload) for k, v in value.items()}
    return value


def _read_location(task: SentryScenario, tool: str) -> str | None:
    """The location the careful operator's ``tool`` read names (the record a poisoned read returns)."""
    for call in task.gold:
        if call.name == tool and isinstance(call.arguments, dict):
            return call.arguments.get("location_id")
    return None


def placements(task: SentryScenario) -> list[str]:
    """The placements the scenario's tools expose (see the module docstring), its own first."""
    assert task.attack is not None
    found = ["content"]
    world = task.initial_state.collections
    for tool, (collection, _) in CARRIERS.items():
        loc = _read_location(task, tool)
        if loc is None or tool not in task.tools:
            continue
        records = world.get(collection, {})
        if (
            collection == "locations"
            and loc in records
            or any(r.get("location_id") == loc for r in records.values())
        ):
            found.append(f"tool:{tool}")
    if task.attack.placement.startswith("turn:"):
        found.append(task.attack.placement)
    own = task.attack.placement
    return [own, *(p for p in found if p != own)]


def donors(task: SentryScenario, pool: Sequence[SentryScenario]) -> list[SentryScenario]:
    """The scenarios that lend a payload: the same family and attack goal (the scenario itself first)."""
    assert task.attack is not None
    same = [
        t
        for t in pool
        if t.attack is not None and t.family == task.family and t.attack.goal == task.attack.goal
    ]
    return [task, *(t for t in same if t.id != task.id)]


def allowed_options(task: SentryScenario, pool: Sequence[SentryScenario]) -> list[AttackOption]:
    """Every (payload, placement) pair the attacker may choose on ``task``; the scenario's own first. A
    scenario without an attack (or its clean twin) offers none."""
    if task.attack is None:
        return []
    where = placements(task)
    return [AttackOption(d.id, p) for d in donors(task, pool) for p in where]


def plant(task: SentryScenario, donor: SentryScenario, placement: str) -> SentryScenario:
    """``task`` with ``donor``'s attack planted at ``placement`` (checked as a scenario file is).

    The scenario's own payload is removed first, as its clean twin removes it; a follow-up turn that
    was nothing but the payload goes, with the turns after it (they push what it asked) and the careful
    operator's replies to them. The attack's vector follows the new placement (a poisoned read is
    tool poisoning, a follow-up turn goal drift; content keeps the donor's vector unless it was tool
    poisoning, which becomes a direct injection).
    """
    own, lent = task.attack, donor.attack
    assert own is not None and lent is not None
    if donor is task and placement == own.placement:
        return task
    data = task.model_dump()
    state = _strip(data["initial_state"], own.payload)
    instruction = _strip(data["instruction"], own.payload)
    turns = [_strip(t, own.payload) for t in data["follow_ups"]]
    kept = next((i for i, t in enumerate(turns) if not t.strip()), len(turns))
    gold = data["gold"]
    if kept < len(turns):  # the emptied turn and the later ones go, with the operator's replies to them
        gold = gold[: len(gold) - (len(turns) - kept)]
        turns = turns[:kept]
    payload = lent.payload
    collections = state["collections"]
    if placement == "content":
        messages = collections.get("messages", {})
        first = next(iter(messages.values()), None)
        text = first.get("text") if isinstance(first, dict) else None
        if isinstance(text, str) and text and text in instruction:
            instruction = instruction.replace(text, f"{text}\n\n{payload}", 1)
            first["text"] = f"{text}\n\n{payload}"
        else:
            instruction = f"{instruction}\n\n{payload}"
    elif placement.startswith("tool:"):
        tool = placement.partition(":")[2]
        collection, field = CARRIERS[tool]
        loc = _read_location(task, tool)
        records = collections[collection]
        key = (
            loc
            if collection == "locations"
            else next(k for k, r in records.items() if r.get("location_id") == loc)
        )
        records[key][field] = payload
    else:
        k = int(placement.partition(":")[2])
        # the turn that carried the scenario's payload: it carries the lent one (the later turns stay)
        turns = [_strip(t, own.payload) for t in data["follow_ups"]]
        turns[k - 1] = payload
        gold = data["gold"]
    vector = lent.vector
    if placement.startswith("tool:"):
        vector = "tool_poisoning"
    elif placement.startswith("turn:"):
        vector = "goal_drift"
    elif vector in ("tool_poisoning", "goal_drift"):
        vector = "direct_injection"
    attack = {**lent.model_dump(), "placement": placement, "vector": vector}
    data.update(
        instruction=instruction,
        initial_state=state,
        follow_ups=turns,
        gold=gold,
        attack=attack,
        id=f"{task.id}~{donor.id}@{placement}",
    )
    try:
        planted = SentryScenario.model_validate(data)
        benchmark().check_task(planted)
    except (ValueError, TaskCheckError) as exc:  # a corpus that breaks the derivation: say which pair
        raise TaskCheckError(
            "attack", f"planting {donor.id}'s payload at {placement} in {task.id} fails: {exc}"
        ) from exc
    return planted
