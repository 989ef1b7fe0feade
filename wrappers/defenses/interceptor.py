"""The hallucination interceptor (AgentProp-Bench): three layers over an episode, and a flag turns the
answer into an explicit abstention.

* layer 1: steps with at least one call that failed validation or whose result carries an ``error``
  key (the release's harness sends one call a step; a step with three failing calls is one flagged
  step, not three);
* layer 2: uncertainty / failure words in the agent's own text (error, invalid, unknown, failed, not
  found, missing, incorrect, wrong);
* layer 3: numbers in the final answer (signed decimals of two or more characters) that appear in no
  observation (skipped when there was none) - or, in the ``tuned`` mode, a success word in the answer
  while an observation reported an error.

Named operating points (the release's four variants, ``operating_point=``):

* ``early`` (the reproduction default: the release's held-out file): abstains at run time, at the next
  call after the step in which layer 1 flagged its ``l1_threshold``-th (2nd) step; layer 2 is logged,
  never abstains; layer 3 at the end;
* ``output-only``: the same tests, at the end only;
* ``tuned`` (``analysis/interceptor_tuned_thresholds.json``'s best configuration): one counter shared
  by layers 1 and 2 with threshold 1, layer 2 counting when 2 or more words appear, layer 3 enabled;
* ``packaged``: layers 1 and 3 at the end with threshold 1 (the high-coverage point).

Every abstention is recorded (``trace.overrides`` or an ``interceptor`` intercept) with the layer that
fired; an answer it replaced at the end stays in the trace. A run-time abstention replaces no answer (the
agent had not given one), so whether an abstention saved or broke an answer is decided against the
paired run without the interceptor (``tooltrap.wrappers.eval.agentprop.metrics.interceptor_comparison``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from tooltrap.envs.core import CallRecord, Intercept, ToolEnv, Trace

from .base import Defense, add_defense, register_defense

#: the benchmark whose paper defines the interceptor
BENCHMARKS = ("agentprop",)

FAILURE_WORDS = ("error", "invalid", "unknown", "failed", "not found", "missing", "incorrect", "wrong")
SUCCESS_WORDS = (
    "success",
    "successfully",
    "created",
    "scheduled",
    "deleted",
    "done",
    "completed",
    "booked",
    "placed",
)
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class OperatingPoint:
    """Where and when each layer acts."""

    l1_threshold: int
    run_time: bool  # layer 1 abstains during the episode (else at the end)
    l2_abstains: bool
    l2_keywords: int
    l3: str  # "numbers" | "success_after_error" | "off"
    shared_counter: bool = False


OPERATING_POINTS = {
    "early": OperatingPoint(l1_threshold=2, run_time=True, l2_abstains=False, l2_keywords=2, l3="numbers"),
    "output-only": OperatingPoint(
        l1_threshold=2, run_time=False, l2_abstains=False, l2_keywords=2, l3="numbers"
    ),
    "tuned": OperatingPoint(
        l1_threshold=1,
        run_time=False,
        l2_abstains=True,
        l2_keywords=2,
        l3="success_after_error",
        shared_counter=True,
    ),
    "packaged": OperatingPoint(
        l1_threshold=1, run_time=False, l2_abstains=False, l2_keywords=2, l3="numbers"
    ),
}


def _errored(record: CallRecord) -> bool:
    return (not record.ok and record.error is not None and record.error.get("type") != "not_executed") or (
        record.ok and isinstance(record.result, dict) and "error" in record.result
    )


def unseen_numbers(answer: str, observations: list[str]) -> list[str]:
    """Numbers of two or more characters in ``answer`` that no observation contains."""
    seen = {float(n) for text in observations for n in NUMBER.findall(text)}
    # the release ignores one-character numbers: "-7" has two (its sign is part of the claim)
    return [n for n in NUMBER.findall(answer) if len(n) > 1 and float(n) not in seen]


@register_defense(
    "interceptor",
    benchmarks=BENCHMARKS,
    description="Hallucination interceptor: tool errors, failure words, unseen numbers -> abstain",
)
class Interceptor(Defense):
    """The hallucination interceptor (see the module docstring).

    Args:
        operating_point: ``early`` (default), ``output-only``, ``tuned`` or ``packaged``.
    """

    def __init__(self, env: gym.Env, operating_point: str = "early"):
        if operating_point not in OPERATING_POINTS:
            from tooltrap.envs.core import UnknownOptionError

            raise UnknownOptionError(operating_point, OPERATING_POINTS, what="operating point")
        super().__init__(env, operating_point=operating_point)
        self.point = OPERATING_POINTS[operating_point]
        #: layer 1: the steps with a failing call (a set: several failing calls in a step flag it once)
        self.flagged_steps: set[int] = set()
        self.l2_hits = 0

    def on_reset(self, env: ToolEnv, task: Any, variant: Any) -> None:
        self.flagged_steps = set()
        self.l2_hits = 0

    def _abstain_text(self, layer: str) -> dict[str, Any]:
        return {
            "abstained": True,
            "layer": layer,
            "message": "I cannot give a reliable answer: the tools did not return what I need.",
        }

    def before_call(self, env: ToolEnv, name: str, arguments: Any) -> tuple[str, Any] | Intercept:
        # only the steps before this one count: the release abstains after two flagged steps, so the
        # rest of the step that reached the threshold runs as the agent sent it
        current = len(env.trace.steps) - 1 if env.trace is not None else 0
        earlier = sum(step < current for step in self.flagged_steps)
        if self.point.run_time and earlier >= self.point.l1_threshold:
            return Intercept(
                self._abstain_text("layer1"),
                kind="interceptor",
                reason=f"layer 1: {earlier} steps with a failing call",
                ends_as="abstain",
            )
        return name, arguments

    def after_call(self, env: ToolEnv, record: CallRecord) -> None:
        if record.kind != "terminal" and _errored(record):
            self.flagged_steps.add(record.step)

    def before_judge(self, env: ToolEnv, trace: Trace) -> None:
        if trace.disposition != "answer":
            return
        answer = str(
            (trace.terminal_arguments or {}).get("answer")
            or (trace.terminal_arguments or {}).get("message")
            or ""
        )
        p = self.point
        # layer 2 reads the agent's own words: its raw model output where a format wrapper kept it, and the answer
        texts = [s.raw for s in trace.steps if s.raw] + [answer]
        self.l2_hits = sum(sum(w in t.lower() for w in FAILURE_WORDS) >= p.l2_keywords for t in texts)
        flagged = len(self.flagged_steps)
        count = flagged + (self.l2_hits if p.shared_counter else 0)
        if count >= p.l1_threshold or (p.l2_abstains and self.l2_hits and not p.shared_counter):
            trace.override(
                "abstain",
                kind="interceptor",
                reason=f"layer 1: {flagged} steps with a failing call",
                message=answer,
            )
            return
        observations = [
            c.result if isinstance(c.result, str) else json.dumps(c.result, ensure_ascii=False)
            for c in trace.calls
            if c.ok and c.kind != "terminal"
        ]
        if p.l3 == "numbers" and observations and unseen_numbers(answer, observations):
            trace.override(
                "abstain", kind="interceptor", reason="layer 3: numbers in no observation", message=answer
            )
        elif p.l3 == "success_after_error" and any(w in answer.lower() for w in SUCCESS_WORDS) and flagged:
            trace.override(
                "abstain",
                kind="interceptor",
                reason="layer 3: success claimed after an error",
                message=answer,
            )


for _point in ("output-only", "tuned", "packaged"):  # the other operating points, by name
    add_defense(
        f"interceptor-{_point}",
        Interceptor,
        description=f"Hallucination interceptor at the {_point} operating point",
        benchmarks=BENCHMARKS,
        operating_point=_point,
    )
