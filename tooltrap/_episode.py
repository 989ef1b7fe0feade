"""One episode of an evaluation: an env, an agent, the running reward, and the record it ends with."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym

from tooltrap.agents import Agent
from tooltrap.envs.core import abort_episode, make_safe

#: one point of an evaluation grid: variant key -> value
Point = dict[str, Any]


def _raw(agent: Agent) -> tuple[str | None, int]:
    """The agent's raw output as the trace stores it (text UTF-8 can encode), and how many code points
    were replaced to make it so (an agent that read its output through ``make_safe`` already: none)."""
    raw = getattr(agent, "last_raw", None)
    if raw is None:
        return None, 0
    if isinstance(raw, str):
        return make_safe(raw)
    # a message as JSON text: its escapes, a tool call's arguments included, decode safely too
    return make_safe(json.dumps(raw, ensure_ascii=False, default=repr), json_escapes=True)


def _record(
    env: gym.Env, total: float, final: dict[str, Any], seed: int, system_outcome: str | None, point: Point
) -> dict[str, Any]:
    base = env.unwrapped
    task = base.task  # type: ignore[attr-defined]
    trace = base.trace.to_dict()  # type: ignore[attr-defined]
    return {
        "task_id": task.id,
        "template_id": task.template_id,
        "domain": task.domain,
        **task.label_dict(),
        "benchmark": base.benchmark.name,  # type: ignore[attr-defined]
        # the variant played, every default filled in (the trace's), and the grid point as asked (the
        # resume key: a task-dependent default cannot be known before the episode is reset)
        "variant": dict(trace["variant"]),
        "point": dict(point),
        "instruction": task.instruction,
        "seed": seed,
        "reward": total,
        "reward_components": final["reward_components"],
        "verdict": final["verdict"],
        "system_outcome": system_outcome,
        "trace": trace,
    }


def privileged_info(env: gym.Env, info: dict[str, Any], agent: Agent) -> dict[str, Any]:
    """What ``agent`` gets at reset: ``info``, and for the one kind of scripted agent that must know the
    episode's variant (``knows_variant``: the gold reference, whose careful solution depends on the
    world) the variant too. Every other agent, privileged scripted baselines included, must infer the
    world from what it reads."""
    if not getattr(agent, "knows_variant", False):
        return info
    return {**info, "variant": env.unwrapped.episode_variant}  # type: ignore[attr-defined]


class Episode:
    """One episode in progress: the env, the agent slot, the running reward."""

    def __init__(self, env: gym.Env, agent: Agent, task_id: str, seed: int, point: Point | None = None):
        self.env, self.agent, self.seed, self.point = env, agent, seed, dict(point or {})
        self.observation, self.info = env.reset(seed=seed, options={**self.point, "task_id": task_id})
        task = env.unwrapped.task  # type: ignore[attr-defined]
        agent.reset(
            self.observation,
            privileged_info(env, self.info, agent),
            task=task if agent.privileged else None,
            seed=seed,
        )
        self.total = 0.0
        self.record: dict[str, Any] | None = None

    def advance(self, action: str) -> bool:
        """Apply one action; return True when the episode has ended (``self.record`` is then set)."""
        steps = self.env.unwrapped.trace.steps  # type: ignore[attr-defined]
        before = len(steps)
        self.observation, reward, terminated, truncated, self.info = self.env.step(action)
        # only a step this action added, and only when no format wrapper recorded its raw text already
        # (a prompted format may answer a reply without stepping the env: a nudge adds no step)
        if len(steps) > before:
            step = steps[-1]
            step.escaped += getattr(self.agent, "last_escaped", 0)  # replaced before the env saw it
            if step.raw is None:
                raw, escaped = _raw(self.agent)
                if raw is not None:
                    step.raw, step.format = raw, getattr(self.agent, "last_format", None)
                    step.escaped += escaped
        self.total += float(reward)
        if terminated or truncated:
            self.record = _record(self.env, self.total, self.info, self.seed, None, self.point)
            return True
        return False

    def fail(self, kind: str) -> None:
        """End the episode as a system-level outcome (provider error, content filter)."""
        final = abort_episode(self.env, f"system:{kind}")
        self.total += final["reward"]
        self.record = _record(self.env, self.total, final, self.seed, kind, self.point)


def run_episode(
    env: gym.Env, agent: Agent, task_id: str, seed: int, point: Point | None = None
) -> dict[str, Any]:
    """Play one episode of ``task_id`` (as grid point ``point``); return its JSON-ready record
    (verdict, reward and components, trace)."""
    from tooltrap.agents.llm import ProviderError

    episode = Episode(env, agent, task_id, seed, point)
    while True:
        try:
            action = agent.act(episode.observation, episode.info)
        except ProviderError as err:
            episode.fail(err.kind)
            break
        if episode.advance(action):
            break
    assert episode.record is not None
    return episode.record
