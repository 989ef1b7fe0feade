"""Through a real ``tooltrap serve`` process, an episode is the in-process episode byte for byte: for
sampled tasks of every benchmark (EpiSEM in both worlds, SentryBench with and without the attack,
AgentProp clean and injected), a malformed action, an unknown tool, then the gold calls: observation,
reward, terminated, truncated and the info's JSON (tools and messages at reset, the verdict and reward
components at the end) are equal. And the episode variant is never sent while the episode runs."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import tooltrap
from tooltrap.client import Client

from .conftest import served

gym.register_envs(tooltrap)

#: env id -> the variants played (SABench has none)
CASES = {
    "SABench-v0": [{}],
    "EpiSEM-Finance-v0": [{"world": "safe"}, {"world": "unsafe"}],
    "SentryBench-v0": [{"attack": "on"}, {"attack": "off"}],
    "AgentProp-v0": [{"injection": "none"}, {"injection": "type_mismatch"}],
}
HOSTILE = ["{not json", '{"name": "no_such_tool", "arguments": {}}']
SEED = 7


def _sample(task_ids: list[str]) -> list[str]:
    return sorted({task_ids[0], task_ids[len(task_ids) // 2], task_ids[-1]})


def _key(result: tuple[str, Any, bool, bool, dict[str, Any]]) -> tuple[str, str, bool, bool, str]:
    obs, reward, terminated, truncated, info = result
    return obs, json.dumps(reward), terminated, truncated, json.dumps(info, ensure_ascii=False)


def _play_in_process(env_id: str, task_id: str, variant: dict[str, Any]) -> tuple[list, list, dict]:
    """The in-process episode: its results, the actions played (text, or a tool call object) and the
    episode variant."""
    env = gym.make(env_id)
    try:
        obs, info = env.reset(seed=SEED, options={"task_id": task_id, **variant})
        results = [(obs, None, False, False, info)]
        unwrapped = env.unwrapped
        gold = unwrapped.task.gold_for(unwrapped.episode_variant)
        actions: list[Any] = [*HOSTILE, *({"name": c.name, "arguments": c.arguments} for c in gold)]
        played = []
        for action in actions:
            text = action if isinstance(action, str) else json.dumps(action, sort_keys=True)
            results.append(env.step(text))
            played.append(action)
            if results[-1][2] or results[-1][3]:
                break
        return results, played, unwrapped.episode_variant
    finally:
        env.close()


def _variant_pairs(variant: dict[str, Any]) -> list[str]:
    """How each of the variant's keys would look in the JSON the server sends."""
    return [json.dumps({k: v}, ensure_ascii=False)[1:-1] for k, v in variant.items()]


def _keys_anywhere(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value).union(*(_keys_anywhere(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_keys_anywhere(v) for v in value))
    return set()


@pytest.mark.parametrize("env_id", list(CASES))
def test_served_episodes_equal_in_process_byte_for_byte(env_id):
    probe = gym.make(env_id)
    task_ids = _sample(list(probe.unwrapped.tasks.ids))
    probe.close()
    compared = 0
    with served(env_id) as url, Client(url) as client:
        for variant in CASES[env_id]:
            for task_id in task_ids:
                expected, actions, episode_variant = _play_in_process(env_id, task_id, variant)
                got = [client.reset(seed=SEED, task_id=task_id, **variant)]
                for action in actions:
                    got.append(client.step(action))
                got_keys = [_key((r.observation, r.reward, r.terminated, r.truncated, r.info)) for r in got]
                assert got_keys == [_key(r) for r in expected], (env_id, task_id, variant)
                assert got[-1].done and "verdict" in got[-1].info and "reward_components" in got[-1].info
                # privileged: while the episode runs, no variant key is anywhere in what the server sent
                # (the final verdict is the judge's, and carries it as it does in process)
                for result in got[:-1]:
                    sent = json.dumps(result.info, ensure_ascii=False)
                    assert not set(episode_variant) & _keys_anywhere(result.info), (
                        task_id,
                        result.info.keys(),
                    )
                    assert not any(pair in sent for pair in _variant_pairs(episode_variant))
                state = json.dumps(client.state())
                assert not any(pair in state for pair in _variant_pairs(episode_variant))
                compared += 1
    assert compared == len(task_ids) * len(CASES[env_id])


def test_the_variant_check_would_see_a_leak():
    """The privileged check above is not vacuous: the pairs it looks for are what a leak would send."""
    variant = {"world": "unsafe", "mask": ["amount"]}
    leak = json.dumps({"info": {"verdict": variant}}, ensure_ascii=False)
    assert all(pair in leak for pair in _variant_pairs(variant))
    assert set(variant) <= _keys_anywhere({"a": [{"world": 1, "b": {"mask": 2}}]})
