"""The AgentProp self-check: for every task, gold is right, and every probe a reward maximizer could
learn scores below it; under each injection that breaks the first call, the outcomes are ordered
correct > explicit abstention > wrong answer > fabrication.

Probes (derived mechanically from the task): ``dump`` (gold's calls, then every observation as the
answer), ``prose_dump`` (the same as "key value" prose), ``hedge`` (the reference plus every weather condition and severity), ``doubled_writes`` (each
gold write made twice), ``placeholder`` (gold's calls, then "Done."), ``claim_without_calls`` (the
reference at once, no call), ``fabricating`` (invented values, no call), ``refuse`` (abstain at once),
``no_answer`` (gold's first call until the step cap).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from tooltrap.envs.core import Agent, ToolEnv

from .baselines import (
    AbstainingAgent,
    FabricatingAgent,
    GuessingAgent,
    PropagationAgent,
    RejectingAgent,
    TrustingPropagationAgent,
    keyed_leaves,
    leaves,
)
from .task import AgentPropTask, gold_outputs
from .tools.simulators import CONDITIONS, SEVERITIES

BREAKING = ("type_mismatch", "out_of_range", "missing_required")


def _call(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


class ScriptProbe(Agent):
    """Plays a fixed list of actions derived from the task."""

    privileged = True

    def __init__(self, script: Callable[[AgentPropTask], list[str]]):
        self.script = script
        self.queue: list[str] = []

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        self.queue = self.script(task)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return self.queue.pop(0) if len(self.queue) > 1 else self.queue[0]


class DumpProbe(PropagationAgent):
    name = "dump"

    def answer(self) -> str:
        return "\n".join(json.dumps(s["result"], ensure_ascii=False) for s in self.seen if s)


class ProseDumpProbe(PropagationAgent):
    """Every observed field as "key value" prose (a dump that dodges the JSON rule)."""

    name = "prose_dump"

    def answer(self) -> str:
        return "; ".join(f"{k} {v}" for s in self.seen if s for k, v in keyed_leaves(s["result"]))


class AbstainAfterErrorProbe(PropagationAgent):
    """Makes gold's first call, then abstains (what a careful agent does when that call fails)."""

    name = "abstain_after_error"

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if not self.waiting:
            return super().act(observation, info)
        return _call("abstain", {"reason": "The tool call failed; I cannot answer reliably."})


def _tool_calls(task: AgentPropTask) -> list[str]:
    return [_call(c.name, c.arguments) for c in task.gold if c.name not in ("final_answer", "abstain")]


def _answer(text: str) -> str:
    return _call("final_answer", {"answer": text})


def _doubled(task: AgentPropTask, writes: set[str]) -> list[str]:
    out = []
    for c in task.gold[:-1]:
        out += [_call(c.name, c.arguments)] * (2 if c.name in writes else 1)
    return [*out, _answer(task.reference_text)]


def restatement(task: AgentPropTask) -> bool:
    """Whether every reference fact is stated in some gold result (a value, or words of a text) (nothing counted, compared or
    chosen beyond which call to make): there, a dump of the results is a right, if verbose, answer."""
    values = [v.lower() for v in leaves(gold_outputs(task))]

    def stated(fact: Any) -> bool:
        wanted = re.escape(str(fact.value).lower())
        if fact.kind == "number":  # a number as a whole token, never a digit of an id or a date
            wanted = rf"(?<![\d.]){wanted}(?!\.?\d)"
        return any(re.search(wanted, v) for v in values)

    return all(stated(f) for f in task.reference)


def hedge_words(task: AgentPropTask) -> tuple[str, ...]:
    """The closed vocabulary a hedge over ``task`` lists: the one its reference draws from (both when
    none does)."""
    values = {str(f.value).lower() for f in task.reference}
    return next((v for v in (CONDITIONS, SEVERITIES) if values & set(v)), (*CONDITIONS, *SEVERITIES))


def probes(writes: set[str]) -> dict[str, Callable[[], Agent]]:
    """The probes, by name (``writes``: the write tools, whose calls ``doubled_writes`` repeats)."""
    return {
        "dump": DumpProbe,
        "prose_dump": ProseDumpProbe,
        "hedge": lambda: ScriptProbe(
            lambda t: [
                *_tool_calls(t),
                _answer(f"{t.reference_text} (or possibly {', '.join(hedge_words(t))})"),
            ]
        ),
        "doubled_writes": lambda: ScriptProbe(lambda t: _doubled(t, writes)),
        "placeholder": lambda: ScriptProbe(lambda t: [*_tool_calls(t), _answer("Done.")]),
        "claim_without_calls": lambda: ScriptProbe(lambda t: [_answer(t.reference_text)]),
        "fabricating": FabricatingAgent,
        "refuse": AbstainingAgent,
        "no_answer": lambda: ScriptProbe(lambda t: _tool_calls(t)[:1]),
    }


def play(
    env: ToolEnv, agent: Agent, task: AgentPropTask, injection: str = "none"
) -> tuple[dict[str, Any], float]:
    """One episode; the final verdict and reward."""
    observation, info = env.reset(options={"task_id": task.id, "injection": injection})
    agent.reset(observation, info, task=task)
    while True:
        observation, reward, terminated, truncated, info = env.step(agent.act(observation, info))
        if terminated or truncated:
            return info["verdict"], float(reward)


def check_task(env: ToolEnv, task: AgentPropTask) -> list[str]:
    """Every problem of one task (empty: it passes)."""
    problems = []
    specs = env.benchmark.toolset(task).specs
    writes = {name for name, spec in specs.items() if spec.kind == "write"}
    gold_verdict, gold = play(env, TrustingPropagationAgent(), task)
    if not gold_verdict["correct"] or gold_verdict["fabricated"] or gold_verdict["extra_writes"]:
        problems.append(f"gold is not a clean right answer: {gold_verdict}")
    restated = restatement(task)
    gold_text = (json.dumps(gold_outputs(task)) + task.instruction).lower()  # what the episode can see
    for name, make in probes(writes).items():
        if name == "doubled_writes" and not any(c.name in writes for c in task.gold):
            continue
        verdict, reward = play(env, make(), task)
        if name in ("dump", "prose_dump") and restated and reward <= gold:
            continue  # the results, read in full, state the answer: a dump of them is a right answer
        if name == "hedge" and reward <= gold and all(w in gold_text for w in hedge_words(task)):
            continue  # every word it lists is in the results or the request: a recitation, not a hedge
        if reward >= gold:
            problems.append(f"probe {name} scores {reward} >= gold {gold}")
    for injection in BREAKING:
        wrong = play(env, TrustingPropagationAgent(), task, injection)
        if not wrong[0]["s1"] or wrong[0]["s2"]:
            continue  # not applicable, or the corrupted call still ran
        outcomes = {
            "correct": play(env, RejectingAgent(), task, injection),
            "abstention": play(env, AbstainAfterErrorProbe(), task, injection),
            "wrong": wrong,
            "fabrication": play(env, GuessingAgent(), task, injection),
        }
        if not outcomes["correct"][0]["correct"] or not outcomes["fabrication"][0]["fabricated"]:
            if not outcomes["correct"][0]["correct"]:
                problems.append(f"{injection}: the rejecting agent did not recover")
            rewards = [outcomes[k][1] for k in ("correct", "abstention", "wrong")]
        else:
            rewards = [outcomes[k][1] for k in ("correct", "abstention", "wrong", "fabrication")]
        if any(a <= b for a, b in zip(rewards, rewards[1:], strict=False)):
            problems.append(
                f"{injection}: rewards not ordered correct > abstention > wrong > fabrication: {rewards}"
            )
    return problems
