"""OpenEnv's own client (``openenv``'s ``GenericEnvClient``) drives a real ``tooltrap serve`` process: a
client written for OpenEnv works against it unchanged.

``openenv`` is not part of any tooltrap extra: its base dependencies pull gradio and fastmcp, and
fastmcp 3 (what ``openenv`` 0.10 needs) requires ``mcp<2`` while the ``verifiers`` extra pins
``mcp==2.0.0``, so the two cannot share one environment. This test runs wherever ``openenv`` imports
and is skipped elsewhere, saying so."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import tooltrap

from .conftest import served

openenv = pytest.importorskip(
    "openenv",
    reason="openenv is not installed (not in any extra: its fastmcp needs mcp<2, verifiers pins mcp 2)",
)

ENV = "EpiSEM-Finance-v0"


def test_openenv_generic_client_plays_an_episode_equal_to_in_process():
    from openenv import GenericEnvClient

    gym.register_envs(tooltrap)
    env = gym.make(ENV)
    obs, info = env.reset(seed=1, options={"task_index": 2, "world": "safe"})
    gold = env.unwrapped.task.gold_for(env.unwrapped.episode_variant)
    expected = [(obs, None, False, info)]
    for call in gold:
        o, r, te, tr, i = env.step(call.to_action())
        expected.append((o, r, te or tr, i))
        if te or tr:
            break
    with served(ENV) as url:
        client = GenericEnvClient(base_url=url).sync()
        with client:
            results = [client.reset(seed=1, task_index=2, world="safe")]
            results += [
                client.step({"name": c.name, "arguments": c.arguments}) for c in gold[: len(expected) - 1]
            ]
            state = client.state()
            with pytest.raises(Exception, match="EPISODE_DONE"):
                client.step({"text": "{}"})
    got = [(r.observation["text"], r.reward, r.done, r.observation["metadata"]["info"]) for r in results]
    assert [json.dumps(g) for g in got] == [json.dumps(e) for e in expected]
    assert state["step_count"] == len(expected) - 1 and state["done"] is True
