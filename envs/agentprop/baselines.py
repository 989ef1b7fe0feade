"""AgentProp-Bench's scripted baselines (``tooltrap eval AgentProp-... --agent NAME``): they play the
task's gold calls (privileged: they know the task, never the variant), read what comes back, and differ
in what they do when a result is an error or does not match what they asked for.

* ``trusting``: uses whatever it gets: answers from the results it observed, so a silently wrong
  result (Lyon's weather for Paris) reaches the answer; a failed call is reported as a failure, never
  re-tried and never filled in;
* ``guessing``: trusting, but fills in what a failed call should have said with made-up values (the
  hallucinating agent the interceptor is meant to catch);
* ``rejecting``: notices a failed call or a result that echoes other arguments than it sent
  (``city``, ``date``, ``patient_id`` ...) and re-calls once with its own arguments; a corruption the
  result does not show still propagates;
* ``reporting``: trusting until a call fails or answers for other arguments than it sent; then it stops
  and says so honestly (the tool's error quoted, or the value the tool used instead of its own);
* ``fabricating``: answers at once without calling a tool, with invented values;
* ``abstaining``: abstains at once.

The answer is the task's reference sentence with every value the gold results had replaced by the value
the agent's results had at the same place (so a clean run answers exactly the reference).
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from typing import Any, ClassVar

from tooltrap.envs.core import Agent, DecliningAgent, EnvUsageError, ToolCall, register_baseline

from .benchmark import AgentProp
from .task import gold_outputs, keyed_values
from .tools.simulators import CONDITIONS, SEVERITIES

TERMINALS = ("final_answer", "abstain")
#: result keys that echo an argument (a mismatch shows the call was not the one sent)
ECHOED = ("city", "date", "start_date", "end_date", "patient_id", "drug_a", "drug_b", "event_id", "title",
          "product_id", "appointment_type", "query", "unit")  # fmt: skip
FAILED = "I could not complete the request: {tool} returned an error."
#: how the reporting agent says a write did not happen
FAILED_WRITES = {
    "create_event": "The event could not be scheduled",
    "delete_event": "The event was not found and could not be deleted",
    "schedule_appointment": "The appointment could not be booked",
    "place_order": "The order could not be placed",
}


def keyed_leaves(value: Any, key: str = "") -> list[tuple[str, str]]:
    """Every scalar leaf of a result with the key it sits under, as text (:func:`keyed_values`)."""
    return [(k, str(v)) for k, v in keyed_values(value, key)]


def leaves(value: Any) -> list[str]:
    """Every scalar leaf of a result, as text (:func:`keyed_leaves` without the keys)."""
    return [leaf for _, leaf in keyed_leaves(value)]


def leaf_changes(gold: Any, seen: Any, out: dict[str, str] | None = None) -> dict[str, str]:
    """``{gold leaf value: observed leaf value}`` where the two results differ, walked in parallel."""
    out = {} if out is None else out
    if isinstance(gold, dict) and isinstance(seen, dict):
        for key, value in gold.items():
            if key in seen:
                leaf_changes(value, seen[key], out)
    elif isinstance(gold, list) and isinstance(seen, list):
        for a, b in zip(gold, seen, strict=False):
            leaf_changes(a, b, out)
        for a in gold[len(seen) :]:  # what the gold result listed and the observed one did not
            for leaf in leaves(a):
                out.setdefault(leaf, "")
    elif not isinstance(gold, dict | list | bool) and gold is not None and gold != seen:
        out.setdefault(str(gold), "" if seen is None or isinstance(seen, dict | list) else str(seen))
    return out


def substitute(text: str, changes: dict[str, str]) -> str:
    """``text`` with each whole occurrence of a changed value replaced (longest first, in one pass)."""
    keys = sorted((k for k in changes if k), key=len, reverse=True)
    if not keys:
        return text
    pattern = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, keys)) + r")(?![\w])")
    return pattern.sub(lambda m: changes[m.group(1)], text)


def invented(value: str) -> str:
    """A plausible made-up stand-in for a tool-derived value (a number, an id, an ISO date)."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return (date.fromisoformat(value) + timedelta(days=3)).isoformat()
    if re.fullmatch(r"-?\d+", value):
        return str(int(value) + 7)
    if re.fullmatch(r"-?\d+\.\d+", value):
        return f"{float(value) + 7.5:g}"
    found = re.fullmatch(r"([A-Z]{3}_)(\d+)", value)
    if found:
        return f"{found.group(1)}{int(found.group(2)) + 7}"
    for vocabulary in (CONDITIONS, SEVERITIES):  # a word a tool would have said: another of its kind
        if value in vocabulary:
            return vocabulary[(vocabulary.index(value) + 1) % len(vocabulary)]
    return value


class PropagationAgent(Agent):
    """Base of the baselines of this module (see the module docstring)."""

    privileged: ClassVar[bool] = True
    #: re-calls once after an error or a mismatching result
    rejects: ClassVar[bool] = False
    #: fills in a failed call's values with invented ones
    guesses: ClassVar[bool] = False
    #: stops at a failed or mismatching call and reports it
    reports: ClassVar[bool] = False

    def __init__(self) -> None:
        self.task: Any = None
        self.report: str | None = None
        self.calls: list[ToolCall] = []
        self.gold: list[Any] = []
        self.seen: list[dict[str, Any] | None] = []
        self.index = 0
        self.retried: set[int] = set()
        self.waiting = False

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        if task is None or not hasattr(task, "reference_text"):
            raise EnvUsageError(f"The {self.name} baseline needs an AgentProp task.")
        self.task = task
        self.calls = [c for c in task.gold if c.name not in TERMINALS]
        self.gold = gold_outputs(task)
        self.seen = [None] * len(self.calls)
        self.index, self.retried, self.waiting = 0, set(), False
        self.report: str | None = None
        #: values it made up for failed calls (what a guess states that no tool said)
        self.invented: set[str] = set()

    @staticmethod
    def _differences(call: ToolCall, result: Any) -> list[tuple[str, str]]:
        """(value the tool used, value asked) for each argument the result echoes differently; a record
        returned under ``id`` for the one ``<kind>_id`` asked for counts (a patient record)."""
        if not isinstance(result, dict):
            return []
        out = [
            (str(result[key]), str(call.arguments[key]))
            for key in ECHOED
            if key in result and key in call.arguments and str(result[key]) != str(call.arguments[key])
        ]
        asked_ids = [v for k, v in call.arguments.items() if k.endswith("_id") and k not in result]
        if "id" in result and len(asked_ids) == 1 and str(result["id"]) != str(asked_ids[0]):
            out.append((str(result["id"]), str(asked_ids[0])))
        return out

    def _mismatch(self, call: ToolCall, result: Any) -> bool:
        return bool(self._differences(call, result))

    def _read(self, observation: str) -> None:
        try:
            reply = json.loads(observation)
        except (TypeError, ValueError):
            reply = {"ok": False}
        ok = isinstance(reply, dict) and reply.get("ok") is True
        result = reply.get("result") if ok else None
        if ok and isinstance(result, dict) and "error" in result:
            ok = False
        call = self.calls[self.index]
        wrong = not ok or self._mismatch(call, result)
        if self.rejects and self.index not in self.retried and wrong:
            self.retried.add(self.index)  # call again with its own arguments
            return
        if self.reports and wrong and self.report is None:
            self.report = self._report(call, reply, result)
        self.seen[self.index] = {"ok": ok, "result": result}
        self.index += 1

    def _report(self, call: ToolCall, reply: Any, result: Any) -> str:
        """What went wrong with ``call``, honestly: the tool's error, or the values it used instead."""
        if isinstance(result, dict) and "error" not in result:
            used = [f"{got} instead of {asked}" for got, asked in self._differences(call, result)]
            return f"{call.name} did not do what I asked: it used {', '.join(used)}. I did not rely on that result."
        error = (reply.get("error") or {}) if isinstance(reply, dict) else {}
        message = error.get("message") if isinstance(error, dict) else None
        message = message or (result or {}).get("error") if isinstance(result, dict) else message
        outcome = FAILED_WRITES.get(call.name)
        if outcome:  # a failure report with the write's own verb: "could not be scheduled"
            return f"{outcome}: {call.name} failed ({message or 'an error'})."
        return f"I could not complete the request: {call.name} failed ({message or 'an error'})."

    def answer(self) -> str:
        if self.report is not None:
            return self.report
        changes: dict[str, str] = {}
        for i, (gold, seen) in enumerate(zip(self.gold, self.seen, strict=True)):
            if seen is not None and seen["ok"]:
                leaf_changes(gold, seen["result"], changes)
            elif self.guesses:
                made_up = {k: invented(k) for k in leaves(gold) if k not in changes}
                changes.update(made_up)
                self.invented |= {v for k, v in made_up.items() if v != k}
            else:
                return FAILED.format(tool=self.calls[i].name)
        return substitute(self.task.reference_text, changes)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self.task is None:
            raise EnvUsageError("Call reset() first.")
        if self.waiting:
            self._read(observation)
        if self.index < len(self.calls) and self.report is None:
            self.waiting = True
            call = self.calls[self.index]
            return json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
        self.waiting = False
        return json.dumps(
            {"name": "final_answer", "arguments": {"answer": self.answer()}}, ensure_ascii=False
        )


@register_baseline(AgentProp)
class TrustingPropagationAgent(PropagationAgent):
    name = "trusting"


@register_baseline(AgentProp)
class GuessingAgent(PropagationAgent):
    name = "guessing"
    guesses = True


@register_baseline(AgentProp)
class RejectingAgent(PropagationAgent):
    name = "rejecting"
    rejects = True


@register_baseline(AgentProp)
class ReportingAgent(PropagationAgent):
    name = "reporting"
    reports = True


@register_baseline(AgentProp)
class FabricatingAgent(PropagationAgent):
    """Answers at once, without a tool call, with invented values."""

    name = "fabricating"

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self.task is None:
            raise EnvUsageError("Call reset() first.")
        made_up = {k: invented(k) for k in leaves(self.gold)}
        answer = substitute(self.task.reference_text, made_up)
        return json.dumps({"name": "final_answer", "arguments": {"answer": answer}}, ensure_ascii=False)


@register_baseline(AgentProp)
class AbstainingAgent(DecliningAgent):
    """Abstains at once (AgentProp's bracket: no error can propagate, nothing is answered)."""

    name = "abstaining"
    dispositions: ClassVar[tuple[str, ...]] = ("abstain",)
