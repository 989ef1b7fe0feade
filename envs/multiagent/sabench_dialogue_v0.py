"""``sabench_dialogue_v0``: SABench's clarification dialogue between a tool-using ``assistant`` and a
simulated ``user`` (see :class:`~tooltrap.envs.multiagent.sabench.dialogue.SABenchDialogueEnv`).

The factories follow PettingZoo's packages::

    from tooltrap.envs.multiagent import sabench_dialogue_v0

    env = sabench_dialogue_v0.parallel_env(ambiguous=True)  # ParallelEnv
    aec = sabench_dialogue_v0.env(ambiguous=True)  # AECEnv (order enforced)
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils.conversions import parallel_to_aec

from .sabench.dialogue import SABenchDialogueEnv


def parallel_env(**kwargs: Any) -> SABenchDialogueEnv:
    """The dialogue as a PettingZoo ``ParallelEnv`` (every keyword of :class:`SABenchDialogueEnv`)."""
    return SABenchDialogueEnv(**kwargs)


def raw_env(**kwargs: Any) -> AECEnv:
    """The dialogue as a PettingZoo ``AECEnv`` (``parallel_to_aec`` of :func:`parallel_env`): the agents
    are asked in turn, ``assistant`` then ``user``; the action of the one whose turn it is not is ignored."""
    return parallel_to_aec(parallel_env(**kwargs))


#: the AEC env, as PettingZoo packages export it (``parallel_to_aec`` already enforces the call order)
env = raw_env

__all__ = ["SABenchDialogueEnv", "env", "parallel_env", "raw_env"]
