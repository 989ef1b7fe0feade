"""Baselines whose behaviour depends on the benchmark: ``careful`` and ``trusting`` delegate, at reset,
to the baseline of that name for the task's benchmark (EpiSEM's evidence tasks, SentryBench's
scenarios, AgentProp's corrupted-call tasks)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from tooltrap.envs.core import EnvUsageError

from .base import Agent
from .evidence import CarefulAgent as EvidenceCareful
from .evidence import TrustingAgent as EvidenceTrusting
from .instructed import CarefulOperatorAgent
from .propagation import TrustingPropagationAgent


def _evidence_task(task: Any) -> bool:
    return hasattr(task, "rule") and hasattr(task, "atoms")


def _scenario(task: Any) -> bool:
    return hasattr(task, "outcome") and hasattr(task, "attack")


def _corrupted_call_task(task: Any) -> bool:
    return hasattr(task, "reference_text")


class TaskDispatchAgent(Agent):
    """Delegates to the first baseline of :attr:`delegates` whose test accepts the task."""

    privileged: ClassVar[bool] = True
    #: (a test of the task, the baseline for such tasks), in order
    delegates: ClassVar[tuple[tuple[Callable[[Any], bool], type[Agent]], ...]] = ()
    #: what the error says the baseline knows
    knows: ClassVar[str] = ""

    def __init__(self) -> None:
        self.delegate: Agent | None = None

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        cls = next((cls for test, cls in self.delegates if test(task)), None)
        if cls is None:
            raise EnvUsageError(f"The {self.name} baseline knows {self.knows}.")
        self.delegate = cls()
        self.delegate.reset(observation, info, task=task, seed=seed)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self.delegate is None:
            raise EnvUsageError("Call reset() first.")
        return self.delegate.act(observation, info)


class CarefulAgent(TaskDispatchAgent):
    """The careful reference: EpiSEM's evidence-seeking agent, SentryBench's careful operator."""

    name = "careful"
    delegates = ((_evidence_task, EvidenceCareful), (_scenario, CarefulOperatorAgent))
    knows = "EpiSEM evidence tasks and SentryBench scenarios"


class TrustingAgent(TaskDispatchAgent):
    """Uses what it is given: EpiSEM's trusting agent, AgentProp's trusting agent."""

    name = "trusting"
    delegates = ((_evidence_task, EvidenceTrusting), (_corrupted_call_task, TrustingPropagationAgent))
    knows = "EpiSEM evidence tasks and AgentProp tasks"
