"""A single-role Gymnasium view of a multi-agent :class:`~tooltrap.envs.multiagent.base.TurnEnv`: one role
learns, the others are fixed policies played inside the env.

    view = SingleRoleEnv(arena, "gate", {"assistant": careful, "attacker": scenario})
    observation, info = view.reset(options={"task_index": 3})
    observation, reward, terminated, truncated, info = view.step("escalate")

The view's observation, action and reward are the learning role's: ``reset`` plays the other roles
until it is the learning role's turn, ``step`` applies its action and plays the others until its next
turn or the end; the reward is the role's (0 until the end, then the judge's, as the multi-agent env
gives it). Its spaces are the role's spaces in the multi-agent env. ``info`` is the role's info, plus at
the end ``rewards`` (every role's) and ``termination_reason``.

An episode in which the learning role never gets a turn (a gate asked about nothing: no consequential
call proposed) still resets: its observation is ``""``, ``info["turn"]`` is False and ``info["ended"]``
True, and the first ``step`` (its action ignored) ends it with the role's reward. Training code may skip
such episodes (:meth:`SingleRoleEnv.turns_of` tells which).

The other roles' policies follow :func:`~tooltrap.envs.multiagent.base.run_turns`: an Agent (``reset``
on its first non-empty observation, privileged ones handed the task once it is settled) or a callable.
Privileged information never reaches the learning role: it sees only what the multi-agent env gives it.

:class:`AssistantEnv` is the assistant's view where the assistant is a tool-using agent on one
:class:`~tooltrap.envs.core.ToolEnv` (a dialogue): a Gymnasium wrapper whose ``unwrapped`` is that
ToolEnv, so everything written for the single-agent envs (the scripted agents, ``tooltrap.training``'s
TRL adapters, the defenses) runs on it unchanged; the registered ids of :data:`ROLE_ENV_IDS
<tooltrap.envs.multiagent.ROLE_ENV_IDS>` are built with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from tooltrap.envs.core import EnvUsageError, UnknownNameError

from .base import TurnEnv


class SingleRoleEnv(gym.Env):
    """``env`` seen by ``role``, the other roles played by ``policies`` (role -> policy, every other role).

    Raises:
        UnknownNameError: ``role`` is not one of the env's roles.
        EnvUsageError: A policy is missing for another role, or one is given for ``role`` itself.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"]}

    def __init__(self, env: TurnEnv, role: str, policies: Mapping[str, Any]):
        if role not in env.possible_agents:
            raise UnknownNameError(
                f"role of {env.metadata.get('name', 'the env')}", role, env.possible_agents
            )
        others = [a for a in env.possible_agents if a != role]
        missing = [a for a in others if a not in policies]
        extra = sorted(set(policies) - set(others))
        if missing or extra:
            raise EnvUsageError(
                f"SingleRoleEnv({role!r}) needs a fixed policy for each other role ({', '.join(others)})"
                + (f"; missing {missing}" if missing else "")
                + (f"; not another role: {extra}" if extra else "")
            )
        self.env, self.role, self.policies = env, role, dict(policies)
        self.observation_space = env.observation_space(role)
        self.action_space = env.action_space(role)
        self.render_mode = env.render_mode
        self._observations: dict[str, Any] = {}
        self._infos: dict[str, dict[str, Any]] = {}
        self._started: set[str] = set()
        self._seed: int | None = None
        self._ended: tuple[float, dict[str, Any]] | None = None

    @property
    def multiagent(self) -> TurnEnv:
        """The multi-agent env inside (its trace, task and log)."""
        return self.env

    def _start(self, agent: str) -> None:
        policy = self.policies[agent]
        self._started.add(agent)
        if hasattr(policy, "reset"):
            task = self.env.task if getattr(policy, "privileged", False) else None  # type: ignore[attr-defined]
            policy.reset(self._observations[agent], self._infos[agent], task=task, seed=self._seed)

    def _advance(self, rewards: Mapping[str, float] | None) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play the other roles until it is the learning role's turn or the episode ends."""
        env = self.env
        while env.agents and env.turn != self.role:
            turn = env.turn
            if turn not in self._started:
                self._start(turn)
            policy = self.policies[turn]
            act = policy.act if hasattr(policy, "act") else policy
            actions = dict.fromkeys(env.agents, "")
            actions[turn] = act(self._observations[turn], self._infos[turn])
            observations, rewards, terminations, truncations, infos = env.step(actions)
            self._observations, self._infos = dict(observations), dict(infos)
            if not env.agents:
                return self._end(rewards, terminations, truncations)
        if not env.agents:  # ended by the learning role's own action
            return self._end(rewards or {}, {self.role: True}, {self.role: False})
        return self._observations[self.role], 0.0, False, False, dict(self._infos[self.role])

    def _end(
        self, rewards: Mapping[str, float], terminations: Mapping[str, bool], truncations: Mapping[str, bool]
    ) -> tuple[str, float, bool, bool, dict[str, Any]]:
        info = dict(self._infos.get(self.role, {}))
        info["rewards"] = {a: float(r) for a, r in rewards.items()}
        info.setdefault("termination_reason", self._infos.get("assistant", {}).get("termination_reason"))
        reward = float(rewards.get(self.role, 0.0))
        return (
            self._observations.get(self.role, ""),
            reward,
            bool(terminations.get(self.role, False)),
            bool(truncations.get(self.role, False)),
            info,
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self._seed, self._started, self._ended = seed, set(), None
        observations, infos = self.env.reset(seed=seed, options=options)
        self._observations, self._infos = dict(observations), dict(infos)
        for agent in self.env.possible_agents:
            if agent != self.role and observations.get(agent):
                self._start(agent)
        observation, reward, terminated, truncated, info = self._advance(None)
        if terminated or truncated:  # the role never got a turn: the first step reports the end
            self._ended = (reward, info)
            return "", {**info, "turn": False, "ended": True}
        return observation, info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._ended is not None:
            reward, info = self._ended
            self._ended = None
            return "", reward, True, False, info
        if not self.env.agents:
            raise EnvUsageError("The episode has ended (or was never started): call reset() first.")
        actions = dict.fromkeys(self.env.agents, "")
        actions[self.role] = action
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        self._observations, self._infos = dict(observations), dict(infos)
        if not self.env.agents:
            return self._end(rewards, terminations, truncations)
        return self._advance(rewards)

    def turns_of(self, options: dict[str, Any], seed: int | None = None) -> bool:
        """Whether the learning role gets a turn in the episode of ``options`` (played with the fixed
        policies and, for the learning role, nothing: it is only reset)."""
        _, info = self.reset(seed=seed, options=options)
        return not info.get("ended", False)

    def render(self) -> str | None:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


class AssistantEnv(gym.Wrapper):
    """The ``assistant`` role of a multi-agent env whose assistant plays one fixed
    :class:`~tooltrap.envs.core.ToolEnv` (``env.inner``: a dialogue), the other roles played inside by
    ``policies``, as a single-agent Gymnasium env.

    ``unwrapped`` is the ToolEnv (its tasks, trace, verdict and reward config), so the single-agent
    machinery works on it as on any tooltrap env; ``reset`` and ``step`` go through the multi-agent env
    (:class:`SingleRoleEnv`), so a question reaches the simulated user and its answer comes back in the
    observation. Observation, action, info and reward are the assistant's in the multi-agent env; at the
    end ``info`` also holds every role's reward (``rewards``) and the ``termination_reason``.

    Raises:
        EnvUsageError: ``env`` has no fixed ToolEnv for its assistant (the arena plants a new one per
            episode: train its assistant with :class:`SingleRoleEnv`), or a policy is missing.
    """

    def __init__(self, env: TurnEnv, policies: Mapping[str, Any]):
        inner = getattr(env, "inner", None)
        if not isinstance(inner, gym.Env) or getattr(env, "main", None) is not None:
            raise EnvUsageError(
                f"{env.metadata.get('name', type(env).__name__)} plays its assistant on a new env each "
                "episode: use SingleRoleEnv(env, 'assistant', policies) for it."
            )
        self.view = SingleRoleEnv(env, "assistant", policies)
        super().__init__(inner)

    @property
    def multiagent(self) -> TurnEnv:
        """The multi-agent env inside (its log: simulator errors, termination reason)."""
        return self.view.env

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        return self.view.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        return self.view.step(action)

    def abort(self, reason: str) -> dict[str, Any]:
        """End the episode from outside (a provider error, a trainer stop): the ToolEnv's abort (its
        verdict, reward and components), and the multi-agent env is over too."""
        final = self.env.unwrapped.abort(reason)  # type: ignore[attr-defined]
        self.multiagent.agents = []
        return final

    def render(self) -> str | None:
        return self.view.render()

    def close(self) -> None:
        self.view.close()
