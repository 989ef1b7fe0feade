"""Reward configuration: named weights in a pydantic model; components are reported in ``info``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class RewardConfig(BaseModel):
    """Base class of every benchmark's reward weights. Subclasses add named float fields and
    implement :meth:`score`, returning the scalar and its named components (which sum to it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def score(self, verdict: Any) -> tuple[float, dict[str, float]]:
        raise NotImplementedError
