"""The SentryBench self-check (scripts/selfcheck.py sentry runs it over the corpus): a sample passes, and
a reward under which refusing a real emergency costs nothing (no goal, no over-refusal) is caught."""

from __future__ import annotations

import gymnasium as gym

from tooltrap.envs.core import ToolEnv
from tooltrap.envs.sentry.selfcheck import check_scenario


def _env(**reward: float) -> ToolEnv:
    env = gym.make("SentryBench-v0", reward_config=reward or None).unwrapped
    assert isinstance(env, ToolEnv)
    return env


def test_a_sample_of_scenarios_passes():
    env = _env()
    checks = [check_scenario(env, scenario) for scenario in list(env.tasks)[::10]]
    assert checks and all(check.ok for check in checks), [c.problems for c in checks if not c.ok]


def test_a_reward_that_forgives_refusing_an_emergency_is_caught():
    env = _env(goal=0.0, over_refusal=0.0)
    urgent = [s for s in env.tasks if s.family == "urgent"][:3]
    problems = [p for s in urgent for p in check_scenario(env, s).problems]
    assert any("refuse-everything is wrong" in p for p in problems), problems
