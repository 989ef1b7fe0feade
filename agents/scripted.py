"""Generic scripted baselines: gold, act-first, clarify, always-refuse and random. They work on any
benchmark: tools are found by kind and terminal tools by how they end the episode
(``info["terminal_tools"]``), never by name. Their machinery (:class:`~tooltrap.envs.core.ScriptedAgent`,
:class:`~tooltrap.envs.core.DecliningAgent`) is the engine's, shared with benchmarks' own baselines."""

from __future__ import annotations

import json
import random
from typing import Any, ClassVar

from tooltrap.envs.core import Agent, DecliningAgent, EnvUsageError, ScriptedAgent


class GoldAgent(ScriptedAgent):
    """Plays the task's gold solution (the careful reference policy)."""

    name = "gold"
    #: the reference policy knows the episode's variant (a safe or an unsafe world): its careful solution
    #: depends on it; no other agent is handed it (``tooltrap._episode.privileged_info``)
    knows_variant = True

    def script(self, task: Any, info: dict[str, Any]) -> list[Any]:
        # the careful solution may depend on the episode's variant (a safe or an unsafe world)
        return list(task.gold_for(info.get("variant")))


class ActFirstAgent(ScriptedAgent):
    """Commits to the first plausible candidate and accepts every tool default: plays the task's intent
    (the request in tool terms with minimal arguments) on the first plausible target, then responds:
    the over-acting pattern. Generic: any task model that declares ``intent_calls()`` gets it."""

    name = "act-first"

    def script(self, task: Any, info: dict[str, Any]) -> list[Any]:
        if not hasattr(task, "intent_calls"):
            raise EnvUsageError(
                f"The act-first baseline plays a task's intent; {type(task).__name__} has no intent_calls()."
            )
        return task.intent_calls()


class ClarifyAgent(DecliningAgent):
    """Declines at once: asks a clarifying question (or, where the env has none, abstains or escalates).
    The over-refusal extreme."""

    name = "clarify"
    dispositions: ClassVar[tuple[str, ...]] = ("clarify", "abstain", "escalate")


class RefuseAgent(DecliningAgent):
    """Refuses at once: abstains (or escalates, or asks) without reading anything. Reaches a perfect
    safety score with no usefulness: the bracket every safety metric is read against."""

    name = "always-refuse"
    dispositions: ClassVar[tuple[str, ...]] = ("abstain", "escalate", "clarify")


class RandomAgent(Agent):
    """Samples schema-valid calls: random tools, arguments drawn from the schema, entity ids and
    addresses drawn from the task's state. Ends with a terminal call with probability ``p_terminal``."""

    name = "random"
    privileged: ClassVar[bool] = True

    def __init__(self, p_terminal: float = 0.15, seed: int = 0):
        self.p_terminal = p_terminal
        self.base_seed = seed
        self.rng = random.Random(seed)
        self.tools: list[dict[str, Any]] = []
        self.terminals: set[str] = set()
        self.ids: list[str] = []
        self.addresses: list[str] = []

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        self.rng = random.Random(f"{self.base_seed}:{seed}:{getattr(task, 'id', '')}")
        self.tools = [t["function"] for t in info.get("tools", [])]
        self.terminals = set(info.get("terminal_tools", {}))
        self.ids, self.addresses = [], []
        if task is not None:
            for collection in task.initial_state.collections.values():
                for entity_id, record in collection.items():
                    self.ids.append(entity_id)
                    for key in ("organizer", "sender", "requester", "assignee"):
                        if isinstance(record.get(key), str):
                            self.addresses.append(record[key])
        self.addresses = sorted(set(self.addresses)) or ["someone@example.com"]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "p_terminal": self.p_terminal, "seed": self.base_seed}

    def _value(self, name: str, schema: dict[str, Any]) -> Any:
        rng = self.rng
        if "anyOf" in schema:
            options = [s for s in schema["anyOf"] if s.get("type") != "null"]
            return self._value(name, rng.choice(options)) if options else None
        if "enum" in schema:
            return rng.choice(schema["enum"])
        kind = schema.get("type")
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "integer":  # the default draw when the declared bounds allow it, else inside them
            low, high = int(schema.get("minimum", 1)), int(schema.get("maximum", 10))
            if low <= 1 and high >= 10:
                return rng.randint(1, 10)
            return rng.randint(low, max(low, min(high, low + 9)))
        if kind == "number":
            low_f, high_f = float(schema.get("minimum", 0)), float(schema.get("maximum", 10))
            if low_f <= 0 and high_f >= 10:
                return round(rng.uniform(0, 10), 2)
            return round(rng.uniform(low_f, max(low_f, min(high_f, low_f + 10))), 2)
        if kind == "array":
            return [
                self._value(name, schema.get("items", {"type": "string"})) for _ in range(rng.randint(1, 2))
            ]
        if name.endswith("_id") or name == "target":
            return rng.choice(self.ids) if self.ids else "x_1"
        if name in ("to", "cc", "emails", "email", "sender", "assignee"):
            return rng.choice(self.addresses)
        if "date" in name:
            return f"2026-03-{rng.randint(1, 28):02d}"
        if name in ("start", "end"):
            return f"{rng.randint(8, 17):02d}:{rng.choice(('00', '30'))}"
        return rng.choice(("ok", "please handle this", "update", "thanks"))

    def act(self, observation: str, info: dict[str, Any]) -> str:
        terminals = [t for t in self.tools if t["name"] in self.terminals]
        others = [t for t in self.tools if t not in terminals]
        tool = self.rng.choice(terminals if (self.rng.random() < self.p_terminal or not others) else others)
        params = tool["parameters"]
        required = set(params.get("required", []))
        arguments = {
            name: self._value(name, schema)
            for name, schema in params.get("properties", {}).items()
            if name in required or self.rng.random() < 0.5
        }
        return json.dumps({"name": tool["name"], "arguments": arguments})
