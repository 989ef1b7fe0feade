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
from .sabench.users import ScriptedUser
from .single_role import AssistantEnv

#: role -> name -> ``"module:attribute"`` of the scripted policies ``tooltrap eval`` offers for each role
#: (resolved by :mod:`tooltrap.agents.roles`, so that a policy living above the envs can be named here)
ROLE_POLICIES: dict[str, dict[str, str]] = {
    "assistant": {
        "gold": "tooltrap.envs.multiagent.sabench.baselines:DialogueGold",
        "act-first": "tooltrap.envs.multiagent.sabench.baselines:ActFirst",
        "clarify-then-act": "tooltrap.envs.multiagent.sabench.baselines:ClarifyThenAct",
    },
    "user": {"scripted": "tooltrap.envs.multiagent.sabench.users:ScriptedUser"},
}
#: the policy of each role the command does not set: the env's deterministic reference
DEFAULT_POLICIES: dict[str, str] = {"assistant": "gold", "user": "scripted"}

#: the system prompt of a model playing a text role (its observations carry the task itself)
ROLE_PROMPTS: dict[str, str] = {
    "user": (
        "You are the user of an assistant that acts on your email, calendar and tickets. Your first "
        "message says what you asked and what you meant. When the assistant asks a question, answer "
        "it in one short sentence that says which item you meant, in your own words: never name a tool, "
        "an argument or a call. Send ###STOP### to end the conversation."
    ),
}


def assistant_env(*, user: Any = None, **kwargs: Any) -> AssistantEnv:
    """The assistant's side as a single-agent Gymnasium env (``gym.make("SABench-Dialogue-v0")``): the
    dialogue with ``user`` (default :class:`ScriptedUser`; any policy of the user's observation) played
    inside; every other keyword of :class:`SABenchDialogueEnv`."""
    return AssistantEnv(parallel_env(**kwargs), {"user": user if user is not None else ScriptedUser()})


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


__all__ = [
    "DEFAULT_POLICIES",
    "AssistantEnv",
    "ROLE_POLICIES",
    "ROLE_PROMPTS",
    "SABenchDialogueEnv",
    "TurnBasedAEC",
    "assistant_env",
    "env",
    "parallel_env",
    "raw_env",
]
