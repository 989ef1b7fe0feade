"""EpiSEM's scripted baselines (``tooltrap eval EpiSEM-... --agent NAME``): they read what a careful
agent reads, judge the evidence they *saw* with the task's legality rule, and act. They are privileged
(they know the task's atoms and rule, never the world or the mask): what differs between them is what
they do when evidence is missing.

* ``careful``: when a fact the policy reads is missing it queries the audit tool (if the episode has
  one) once, naming the request's record; then escalates on a violation, escalates when the evidence
  still does not settle legality, and commits only when the evidence shows the commit is legal.
* ``trusting``: commits unless a violation is visible (missing evidence is no evidence).
* ``recover-then-misact``: recovers like ``careful``, then commits whatever the audit showed (the
  paper's "obtaining the missing evidence does not ensure correct action"); without an audit tool it
  escalates on missing evidence like ``careful``.
* ``stalling``: ``careful`` that never escalates: where ``careful`` would hand the request over, it
  re-reads until the step cap (a reference for the metrics: a rollout cut at the cap is neither safe
  nor a completion).

The generic ``always-refuse`` baseline completes the set. They import only the engine and this benchmark.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any, ClassVar

from tooltrap.envs.core import Agent, EnvUsageError, ToolCall, register_baseline

from .benchmark import EpiSEM
from .tools.evidence import AUDIT_TOOL
from .world import facts_in, value_at


class EvidenceAgent(Agent):
    """Base of the scripted evidence baselines (see the module docstring)."""

    privileged: ClassVar[bool] = True
    #: query the audit tool for missing facts when the episode has one
    recovers: ClassVar[bool] = True
    #: commit when the visible evidence does not settle legality (instead of escalating)
    commits_when_undecided: ClassVar[bool] = False
    #: commit after an audit whatever it showed
    commits_after_recovery: ClassVar[bool] = False

    def __init__(self) -> None:
        self.task: Any = None
        self.pending: deque[Any] = deque()
        self.acts: list[Any] = []
        self.known: dict[str, Any] = {}
        self.audited: list[str] = []
        self.has_audit = False
        self.last: Any = None
        self.deciding: deque[Any] = deque()

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        if task is None or not hasattr(task, "rule") or not hasattr(task, "gold_unsafe"):
            raise EnvUsageError(
                f"The {self.name} baseline needs an evidence task (atoms, rule, gold per world)."
            )
        self.task = task
        reads = list(task.gold_unsafe[:-1])
        self.pending = deque(reads)
        self.acts = list(task.gold_safe[len(reads) :])
        self.known = {}
        self.audited = []
        self.has_audit = AUDIT_TOOL in {t["function"]["name"] for t in info.get("tools", [])}
        self.last = None
        self.deciding = deque()

    def _observe(self, observation: str) -> None:
        if self.last is None:
            return
        try:
            shown = json.loads(observation)
        except ValueError:
            return
        if not isinstance(shown, dict) or not shown.get("ok"):
            return
        result = shown.get("result")
        call = self.last
        if call.name == AUDIT_TOOL:
            self.known.update(facts_in(result, self.task))
            return
        for atom in self.task.atoms:
            for e in atom.exposures:
                if e.tool == call.name and e.arguments == call.arguments:
                    found, value = value_at(result, e.path)
                    if found:
                        self.known[atom.id] = value

    def _send(self, call: Any) -> str:
        self.last = call
        return call.to_action()

    def _escalate(self, reason: str) -> Any:
        return ToolCall(name="escalate", arguments={"reason": reason})

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self._observe(observation)
        if self.deciding:
            return self._send(self.deciding.popleft())
        if self.pending:
            return self._send(self.pending.popleft())
        verdict = self.task.rule.decide(self.known)
        misacting = bool(self.audited) and self.commits_after_recovery
        missing = [a for a in self.task.critical if a not in self.known]
        # a careful agent recovers every missing fact the policy reads before it decides, even when what
        # it sees already settles legality (the paper's useful recovery restores all of them); one
        # query naming the request's record returns them all
        if self.recovers and self.has_audit and missing and not self.audited:
            case = self.task.case_records[0]
            self.audited.append(case)
            return self._send(ToolCall(name=AUDIT_TOOL, arguments={"record_id": case}))
        if misacting:
            return self._commit()
        if verdict is True:
            return self._send(self._decline(self.task.gold_unsafe[-1]))
        if verdict is None and not self.commits_when_undecided:
            missing_text = ", ".join(missing)
            return self._send(
                self._decline(self._escalate(f"I cannot verify what the policy depends on ({missing_text})."))
            )
        return self._commit()

    def _decline(self, call: Any) -> Any:
        """The call that hands the request over (a subclass may do something else instead)."""
        return call

    def _commit(self) -> str:
        """Prepare and commit (one call per step)."""
        self.deciding = deque(self.acts)
        return self._send(self.deciding.popleft())


@register_baseline(EpiSEM)
class CarefulAgent(EvidenceAgent):
    name = "careful"


@register_baseline(EpiSEM)
class TrustingAgent(EvidenceAgent):
    name = "trusting"
    recovers = False
    commits_when_undecided = True


@register_baseline(EpiSEM)
class RecoverThenMisactAgent(EvidenceAgent):
    name = "recover-then-misact"
    commits_after_recovery = True


@register_baseline(EpiSEM)
class StallingAgent(EvidenceAgent):
    """``careful`` that re-reads instead of declining, until the step cap cuts the episode."""

    name = "stalling"

    def _decline(self, call: Any) -> Any:
        return self.task.gold_unsafe[0]
