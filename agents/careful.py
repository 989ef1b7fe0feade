"""``careful``: the careful scripted reference of the benchmark the task belongs to (EpiSEM's evidence
tasks: :class:`~tooltrap.agents.evidence.CarefulAgent`; SentryBench's scenarios:
:class:`~tooltrap.agents.instructed.CarefulOperatorAgent`), chosen at reset from the task."""

from __future__ import annotations

from typing import Any, ClassVar

from tooltrap.envs.core import EnvUsageError

from .base import Agent
from .evidence import CarefulAgent as EvidenceCareful
from .instructed import CarefulOperatorAgent


class CarefulAgent(Agent):
    """Delegates to the careful baseline that fits the task (see the module docstring)."""

    name = "careful"
    privileged: ClassVar[bool] = True

    def __init__(self) -> None:
        self.delegate: Agent | None = None

    def reset(
        self, observation: str, info: dict[str, Any], *, task: Any = None, seed: int | None = None
    ) -> None:
        if hasattr(task, "rule") and hasattr(task, "atoms"):
            self.delegate = EvidenceCareful()
        elif hasattr(task, "outcome") and hasattr(task, "attack"):
            self.delegate = CarefulOperatorAgent()
        else:
            raise EnvUsageError("The careful baseline knows EpiSEM evidence tasks and SentryBench scenarios.")
        self.delegate.reset(observation, info, task=task, seed=seed)

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self.delegate is None:
            raise EnvUsageError("Call reset() first.")
        return self.delegate.act(observation, info)
