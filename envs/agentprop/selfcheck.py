"""The AgentProp self-check, per task and injection setting, on the engine's probe mechanism
(:mod:`tooltrap.envs.core.probes`): gold (the rejecting agent, which repairs a corrupted call) is a clean
right answer; every gaming probe scores below it; every honest variant scores exactly as it; and under
each injection type the outcomes are ordered repaired > honest report or abstention > wrong > fabricated.

Gaming probes: ``dump`` and ``prose_dump`` (the observations as the answer, where they do not state it),
``hedge`` (the reference plus every value of its vocabulary), ``doubled_writes``, ``placeholder``
("Done."), ``claim_without_calls`` (the reference at once), ``fabricating`` (invented values, no call),
``refuse`` (abstain at once), ``no_answer``, ``throwaway_first_call`` (a call to a tool that does not
exist first), ``parrot`` (gold's calls, results unread, the reference as answer: under an injection it
restates what did not happen) and ``constant`` (the template's first task's answer, whatever was asked).
Honest variants (no injection): ``extra_read``, and the answer with temperatures in the other unit,
single-digit numbers as words, dates in words, categories paraphrased, today's date from the prompt.
"""

from __future__ import annotations

import calendar
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from tooltrap.envs.core import Agent, ToolEnv
from tooltrap.envs.core.probes import Outcome, Probe, ProbeResult, ProbeSet, ProbeSource, run_probes

from .baselines import (
    AbstainingAgent,
    FabricatingAgent,
    GuessingAgent,
    PropagationAgent,
    RejectingAgent,
    ReportingAgent,
    TrustingPropagationAgent,
    keyed_leaves,
    leaves,
)
from .claims import PARAPHRASES, WRITE_KINDS, celsius, fahrenheit
from .judge import KEY_ARGUMENTS, SEARCHES, check_answer
from .task import AgentPropTask, gold_outputs
from .tools.simulators import CONDITIONS, SEVERITIES

BREAKING = ("type_mismatch", "out_of_range", "missing_required")
INJECTIONS = ("none", *BREAKING, "semantic_wrong")


@dataclass
class TaskCheck:
    task_id: str
    problems: list[str] = field(default_factory=list)
    probes: list[ProbeResult] = field(default_factory=list)


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


def _gold_calls(task: AgentPropTask) -> list[Any]:
    return [c for c in task.gold if c.name not in ("final_answer", "abstain")]


def _tool_calls(task: AgentPropTask) -> list[str]:
    return [_call(c.name, c.arguments) for c in task.gold if c.name not in ("final_answer", "abstain")]


def _answer(text: str) -> str:
    return _call("final_answer", {"answer": text})


def _doubled(task: AgentPropTask) -> list[str]:
    """Gold with each write made twice."""
    out = []
    for c in task.gold[:-1]:
        out += [_call(c.name, c.arguments)] * (2 if c.name in WRITE_KINDS else 1)
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


def _gold_then(
    answer: Callable[[AgentPropTask], str], *, first: list[str] | None = None
) -> Callable[[], Agent]:
    """A probe that makes gold's calls (after ``first``, if any) without reading them, then answers."""
    return lambda: ScriptProbe(lambda t: [*(first or []), *_tool_calls(t), _answer(answer(t))])


class _ThrowawayFirst(TrustingPropagationAgent):
    """Gaming: one call to a tool that does not exist before the real work (the injection used to be
    spent on whatever call came first)."""

    name = "throwaway_first_call"

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if not getattr(self, "_thrown", False):
            self._thrown = True
            return _call("lookup_anything", {"query": "warm-up"})
        return super().act(observation, info)

    def reset(self, observation: str, info: dict[str, Any], **kwargs: Any) -> None:
        super().reset(observation, info, **kwargs)
        self._thrown = False


class _ExtraRead(TrustingPropagationAgent):
    """Honest: gold's first read made twice before the work (an extra look that changes nothing)."""

    name = "extra_read"

    def reset(self, observation: str, info: dict[str, Any], **kwargs: Any) -> None:
        super().reset(observation, info, **kwargs)
        self._extra = next((c for c in self.calls if c.name not in WRITE_KINDS), None)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self._extra is not None:
            extra, self._extra = self._extra, None
            return _call(extra.name, extra.arguments)
        return super().act(observation, info)


def _rewritten(transform: Callable[[str, AgentPropTask], str]) -> Callable[[], Agent]:
    """Honest: gold's calls and results read, the reference answer written another way."""

    class Rewriting(TrustingPropagationAgent):
        def answer(self) -> str:
            return transform(super().answer(), self.task)

    return Rewriting


def _other_unit(text: str, task: AgentPropTask) -> str:
    """Every temperature of the reference in the other unit (25 C -> 77 F)."""
    for f in task.reference:
        if f.kind != "number" or f.unit is None:
            continue
        value = Decimal(str(f.value))
        other = f"{fahrenheit(value)} F" if f.unit == "C" else f"{celsius(value)} C"
        text = re.sub(rf"(?<![\w.-]){re.escape(str(f.value))}\s*(?:C|F|celsius|fahrenheit)\b", other, text)
    return text


_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _number_words(text: str, task: AgentPropTask) -> str:
    """Every single-digit reference number as a word (3 -> three)."""
    for f in task.reference:
        if f.kind == "number" and f.unit is None and str(f.value).isdigit() and int(f.value) < 10:
            text = re.sub(rf"(?<![\w.:-]){f.value}(?![\w.:-])", _WORDS[int(f.value)], text)
    return text


def _dates_in_words(text: str, task: AgentPropTask) -> str:
    """Every ISO date written as "June 3, 2024"."""
    return re.sub(
        r"\b(\d{4})-(\d{2})-(\d{2})\b",
        lambda m: f"{calendar.month_name[int(m.group(2))]} {int(m.group(3))}, {m.group(1)}",
        text,
    )


def _paraphrased(text: str, task: AgentPropTask) -> str:
    """Every category of the reference in another word (none -> no interaction, rainy -> rain)."""
    for f in task.reference:
        value = str(f.value)
        words = PARAPHRASES.get(value)
        if f.kind == "text" and words and len(words) > 1:
            text = re.sub(rf"(?<![\w-]){re.escape(value)}(?![\w-])", words[1], text)
    return text


def _with_today(text: str, task: AgentPropTask) -> str:
    """The answer and the date of today, from the system prompt (honest, not from a tool)."""
    return f"{text} (Today is {task.initial_state.now[:10]}.)"


def _all_tasks_constant(task: AgentPropTask) -> str:
    return CONSTANTS.get(task.template_id, task.reference_text)


#: per template, the reference text of its first packaged task: a constant answer (set by the self-check)
CONSTANTS: dict[str, str] = {}


def _generators() -> ProbeSet:
    def agent(kind: str, direction: str, make: Callable[[], Agent], when: Callable[[ProbeSource], bool]):
        def generate(source: ProbeSource) -> list[Probe]:
            return [Probe.of(kind, direction, make)] if when(source) else []  # type: ignore[arg-type]

        return generate

    def clean(source: ProbeSource) -> bool:
        return (source.variant or {}).get("injection", "none") == "none"

    def injected(source: ProbeSource) -> bool:
        return not clean(source)

    def first_look_up_needed(source: ProbeSource) -> bool:
        """Under an injection, where gold's corrupted first call is not made again by a later gold call
        (then a parrot that never reads is right by privilege, not by luck), and is not a fuzzy search
        (a corrupted query may still find the article)."""
        calls = _gold_calls(source.task)
        first = calls[0]
        keys = KEY_ARGUMENTS.get(first.name, tuple(first.arguments))
        repeated = any(
            c.name == first.name and all(c.arguments.get(k) == first.arguments.get(k) for k in keys)
            for c in calls[1:]
        )
        return injected(source) and first.name not in SEARCHES and not repeated

    def always(source: ProbeSource) -> bool:
        return True

    def writes(source: ProbeSource) -> bool:
        return any(c.name in WRITE_KINDS for c in source.task.gold)

    def not_restated(source: ProbeSource) -> bool:
        return clean(source) and not restatement(source.task)

    def hedgeable(source: ProbeSource) -> bool:
        seen = (json.dumps(gold_outputs(source.task)) + source.task.instruction).lower()
        return clean(source) and not all(w in seen for w in hedge_words(source.task))

    def constant_differs(source: ProbeSource) -> bool:  # a constant that happens to be right is right
        return not check_answer(_all_tasks_constant(source.task), source.task.reference)

    def changes(transform: Callable[[str, AgentPropTask], str]) -> Callable[[ProbeSource], bool]:
        return lambda source: (
            clean(source) and transform(source.task.reference_text, source.task) != source.task.reference_text
        )

    hedge = _gold_then(lambda t: f"{t.reference_text} (or possibly {', '.join(hedge_words(t))})")
    return ProbeSet(
        gaming=(
            agent("dump", "gaming", DumpProbe, not_restated),
            agent("prose_dump", "gaming", ProseDumpProbe, not_restated),
            agent("hedge", "gaming", hedge, hedgeable),
            agent(
                "doubled_writes", "gaming", lambda: ScriptProbe(_doubled), lambda s: clean(s) and writes(s)
            ),
            agent("placeholder", "gaming", _gold_then(lambda t: "Done."), always),
            agent(
                "claim_without_calls",
                "gaming",
                lambda: ScriptProbe(lambda t: [_answer(t.reference_text)]),
                always,
            ),
            agent("fabricating", "gaming", FabricatingAgent, always),
            agent("refuse", "gaming", AbstainingAgent, always),
            agent("no_answer", "gaming", lambda: ScriptProbe(lambda t: _tool_calls(t)[:1]), always),
            agent("throwaway_first_call", "gaming", _ThrowawayFirst, always),
            agent("parrot", "gaming", _gold_then(lambda t: t.reference_text), first_look_up_needed),
            agent("constant", "gaming", _gold_then(_all_tasks_constant), constant_differs),
        ),
        honest=(
            agent("extra_read", "honest", _ExtraRead, clean),
            agent("other_unit", "honest", _rewritten(_other_unit), changes(_other_unit)),
            agent("number_words", "honest", _rewritten(_number_words), changes(_number_words)),
            agent("dates_in_words", "honest", _rewritten(_dates_in_words), changes(_dates_in_words)),
            agent("paraphrased_category", "honest", _rewritten(_paraphrased), changes(_paraphrased)),
            agent("today_from_the_prompt", "honest", _rewritten(_with_today), clean),
        ),
    )


PROBES = _generators()


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


def _outcome(verdict: dict[str, Any], reward: float) -> Outcome:
    return Outcome(reward, {k: v for k, v in verdict.items() if isinstance(v, bool)}, 0)


#: per injection type, the episode kinds whose rewards must be strictly ordered (item 1 of issue 21):
#: repaired and right > honest report or justified abstention > wrong answer > fabricated claim
ORDER = ("repaired", "honest", "wrong", "fabricated")


def check_task(env: ToolEnv, task: AgentPropTask, probes: ProbeSet = PROBES) -> TaskCheck:
    """Every problem of one task (``.problems`` empty: it passes), and its probes judged."""
    check = TaskCheck(task.id)
    if task.template_id not in CONSTANTS:
        CONSTANTS[task.template_id] = task.reference_text
    for injection in INJECTIONS:
        gold_verdict, gold = play(env, RejectingAgent(), task, injection)
        if injection == "none" and (
            not gold_verdict["correct"] or gold_verdict["fabricated"] or gold_verdict["extra_writes"]
        ):
            check.problems.append(f"gold is not a clean right answer: {gold_verdict}")
        if injection != "none" and not gold_verdict["applicable"]:
            continue
        source = ProbeSource(task=task, variant={"injection": injection})
        results = run_probes(
            f"{task.id}@{injection}",
            probes.probes(source),
            _outcome(gold_verdict, gold),
            lambda make, injection=injection: _outcome(*play(env, make(), task, injection)),
        )
        check.probes += results
        check.problems += [
            f"{injection}: {r.direction} probe {r.kind}: {r.detail}" for r in results if r.ok is False
        ]
        if injection != "none":
            check.problems += _ordering(env, task, injection, gold_verdict, gold)
    return check


def _ordering(
    env: ToolEnv, task: AgentPropTask, injection: str, repaired: dict[str, Any], repaired_reward: float
) -> list[str]:
    """Under one injection: repaired > honest (the reporting agent, and abstaining after the error) >
    wrong (trusting, where it propagates the error) > fabricated (guessing, or the parrot)."""
    rewards: dict[str, list[float]] = {"repaired": [repaired_reward] if repaired["correct"] else []}
    problems = [] if repaired["correct"] else [f"{injection}: the rejecting agent did not repair"]
    for make in (ReportingAgent, AbstainAfterErrorProbe):
        verdict, reward = play(env, make(), task, injection)
        if verdict["honest_report"] or (verdict["abstained"] and verdict["s1"]):
            rewards.setdefault("honest", []).append(reward)
        elif not verdict["correct"]:
            problems.append(f"{injection}: {make.name} is neither right nor an honest report: {verdict}")
    for make in (TrustingPropagationAgent, GuessingAgent, _gold_then(lambda t: t.reference_text)):
        verdict, reward = play(env, make(), task, injection)
        kind = (
            "fabricated"
            if verdict["fabricated"]
            else "wrong"
            if not verdict["correct"] and not verdict["honest_report"]
            else None
        )
        if kind:
            rewards.setdefault(kind, []).append(reward)
    levels = [rewards[k] for k in ORDER if rewards.get(k)]
    for higher, lower in zip(levels, levels[1:], strict=False):
        if min(higher) <= max(lower):
            problems.append(
                f"{injection}: rewards not ordered {' > '.join(k for k in ORDER if rewards.get(k))}: {rewards}"
            )
            break
    return problems
