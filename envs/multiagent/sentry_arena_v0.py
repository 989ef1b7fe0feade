"""``sentry_arena_v0``: SentryBench with an ``attacker``, the ``assistant`` and a ``gate`` as agents (see
:class:`~tooltrap.envs.multiagent.sentry.arena.SentryArenaEnv`).

The factories follow PettingZoo's packages::

    from tooltrap.envs.multiagent import sentry_arena_v0

    env = sentry_arena_v0.parallel_env(subdomain="dispatch")  # ParallelEnv
    aec = sentry_arena_v0.env()  # turn-based AECEnv (order enforced)
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from .base import TurnBasedAEC
from .sentry.arena import SentryArenaEnv


def parallel_env(**kwargs: Any) -> SentryArenaEnv:
    """The arena as a PettingZoo ``ParallelEnv`` (every keyword of :class:`SentryArenaEnv`)."""
    return SentryArenaEnv(**kwargs)


def raw_env(**kwargs: Any) -> TurnBasedAEC:
    """The arena as a turn-based PettingZoo ``AECEnv``: ``agent_selection`` is the agent whose turn it is
    (``attacker`` first on an attacked scenario, then ``assistant``, ``gate`` on each proposal)."""
    return TurnBasedAEC(parallel_env(**kwargs))


def env(**kwargs: Any) -> AECEnv:
    """:func:`raw_env` with PettingZoo's order enforcement (as PettingZoo's own packages export ``env``)."""
    return OrderEnforcingWrapper(raw_env(**kwargs))


__all__ = ["SentryArenaEnv", "TurnBasedAEC", "env", "parallel_env", "raw_env"]
