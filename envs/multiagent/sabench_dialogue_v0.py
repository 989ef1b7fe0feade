"""``sabench_dialogue_v0``: SABench's clarification dialogue between a tool-using ``assistant`` and a
simulated ``user`` (see :class:`~tooltrap.envs.multiagent.sabench.dialogue.SABenchDialogueEnv`).

The factories follow PettingZoo's packages::

    from tooltrap.envs.multiagent import sabench_dialogue_v0

    env = sabench_dialogue_v0.parallel_env(ambiguous=True)  # ParallelEnv
    aec = sabench_dialogue_v0.env(ambiguous=True)  # turn-based AECEnv (order enforced)
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from .base import TurnBasedAEC
from .sabench.dialogue import SABenchDialogueEnv


def parallel_env(**kwargs: Any) -> SABenchDialogueEnv:
    """The dialogue as a PettingZoo ``ParallelEnv`` (every keyword of :class:`SABenchDialogueEnv`)."""
    return SABenchDialogueEnv(**kwargs)


def raw_env(**kwargs: Any) -> TurnBasedAEC:
    """The dialogue as a turn-based PettingZoo ``AECEnv``: ``agent_selection`` is the agent whose turn
    it is (``assistant`` first, ``user`` after each question)."""
    return TurnBasedAEC(parallel_env(**kwargs))


def env(**kwargs: Any) -> AECEnv:
    """:func:`raw_env` with PettingZoo's order enforcement (as PettingZoo's own packages export ``env``)."""
    return OrderEnforcingWrapper(raw_env(**kwargs))


__all__ = ["SABenchDialogueEnv", "TurnBasedAEC", "env", "parallel_env", "raw_env"]
