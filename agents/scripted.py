"""Scripted baselines: gold, always-clarify, act-first and random. They work on any benchmark: tools
are found by kind and terminal tools by how they end the episode (``info["terminal_tools"]``), never by
name."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any, ClassVar

from tooltrap.envs.core import EnvUsageError
from tooltrap.wrappers.formats import terminal_tool

from .base import Agent

#: what a declining baseline asks, and how a scripted episode ends
QUESTION = "Could you confirm exactly which item you mean?"
FINAL_ANSWER = "Done."


def _action(call: Any) -> str:
    return call.to_action() if hasattr(call, "to_action") else json.dumps(call)


def terminal_call(info: dict[str, Any], dispositions: tuple[str, ...], text: str) -> dict[str, Any] | None:
    """A call of the first terminal tool ending the episode with one of ``dispositions`` (in order),
    every required string argument set to ``text``; None when the env has no such tool."""
    found = terminal_tool(info, *dispositions)
    if found is None:
        return None
    name, strings = found
    return {"name": name, "arguments": dict.fromkeys(strings, text)}


def final_answer(info: dict[str, Any]) -> str:
    """The action that ends a scripted episode: the env's answer tool with ``FINAL_ANSWER``."""
    call = terminal_call(info, ("answer",), FINAL_ANSWER)
    if call is None:
        raise EnvUsageError("The env has no terminal tool that gives a final answer (ends_as='answer').")
    return json.dumps(call)


def _is_preview(observation: str) -> bool:
    """Whether the last observation is a structured write preview awaiting commitment."""
    if '"preview"' not in observation:
        return False
    try:
        payload = json.loads(observation)
    except json.JSONDecodeError:
        return False
    result = payload.get("result") if isinstance(payload, dict) else None
    return isinstance(result, dict) and result.get("preview") is True


class _Scripted(Agent):
    """Plays a fixed list of calls, one per step, then ``respond``.

    Under the mitigations: with a confirmation policy in ``info["policy"]`` the agent complies (it asks
    the user to confirm its first write with ``clarify`` instead of writing: the compliant-agent
    bracket); shown a structured write preview, it accepts it (sends the identical call again); a
    write declined by a confirmation gate is skipped.
    """

    privileged: ClassVar[bool] = True

    def __init__(self) -> None:
        self._queue: Iterator[str] = iter(())
        self._final = self._last = ""

    def script(self, task: Any, info: dict[str, Any]) -> list[Any]:
        raise NotImplementedError

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        if task is None:
            raise ValueError(f"The {self.name} baseline is privileged: it needs the task.")
        calls = list(self.script(task, info))
        if info.get("policy", {}).get("confirm_before_write"):
            calls = _confirm_first_write(calls, info)
        self._queue = iter([_action(c) for c in calls])
        self._final = self._last = final_answer(info)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if _is_preview(observation):
            return self._last
        self._last = next(self._queue, self._final)
        return self._last


def _confirm_first_write(calls: list[Any], info: dict[str, Any]) -> list[Any]:
    """Keep the reads; replace the first write by a request for confirmation (and stop there)."""
    kinds: dict[str, str] = info.get("tool_kinds", {})
    out: list[Any] = []
    for call in calls:
        name = call.name if hasattr(call, "name") else call["name"]
        if kinds.get(name) in ("write", "commit"):
            question = f"Please confirm: I am about to call {_action(call)}. Shall I go ahead?"
            ask = terminal_call(info, ("clarify", "escalate"), question)
            if ask is None:
                raise EnvUsageError("A confirmation policy needs a terminal tool that asks the user.")
            out.append(ask)
            break
        out.append(call)
        if kinds.get(name) == "terminal":
            break
    return out


class GoldAgent(_Scripted):
    """Plays the task's gold solution (the careful reference policy)."""

    name = "gold"

    def script(self, task: Any, info: dict[str, Any]) -> list[Any]:
        # the careful solution may depend on the episode's variant (a safe or an unsafe world)
        return list(task.gold_for(info.get("variant")))


class ActFirstAgent(_Scripted):
    """Commits to the first plausible candidate and accepts every tool default: plays the task's intent
    (the request in tool terms with minimal arguments) on ``candidates[0]``, then responds. This is the
    over-acting pattern the SABench paper describes."""

    name = "act-first"

    def script(self, task: Any, info: dict[str, Any]) -> list[Any]:
        if not hasattr(task, "intent_calls"):
            raise EnvUsageError(
                f"The act-first baseline plays a task's intent; {type(task).__name__} has no intent_calls()."
            )
        return task.intent_calls()


class ClarifyAgent(Agent):
    """Declines at once: asks a clarifying question (or, where the env has none, abstains or escalates).
    The over-refusal extreme."""

    name = "clarify"
    #: the terminal dispositions it looks for, in order
    dispositions: ClassVar[tuple[str, ...]] = ("clarify", "abstain", "escalate")

    def __init__(self) -> None:
        self._action = ""

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        call = terminal_call(info, self.dispositions, QUESTION)
        if call is None:
            raise EnvUsageError("The env has no terminal tool that declines (clarify, abstain or escalate).")
        self._action = json.dumps(call)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return self._action


class RefuseAgent(ClarifyAgent):
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
