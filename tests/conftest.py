from __future__ import annotations

import json
import os

import gymnasium as gym
import pytest

import tooltrap

os.environ.setdefault("HF_HUB_OFFLINE", "1")
gym.register_envs(tooltrap)


@pytest.fixture
def calendar_env():
    env = gym.make("SABench-Calendar-v0")
    yield env
    env.close()


def act(name: str, **arguments) -> str:
    return json.dumps({"name": name, "arguments": arguments})
