"""The single-role Gymnasium view: one role learns, the others are fixed policies inside; its rewards are
the multi-agent env's, and the privileged views of the others never reach it."""

from __future__ import annotations

import json

import pytest

from tooltrap.envs.core import EnvUsageError, UnknownNameError
from tooltrap.envs.multiagent import sabench_dialogue_v0, sentry_arena_v0
from tooltrap.envs.multiagent.base import run_turns
from tooltrap.envs.multiagent.sabench.baselines import make_assistant as dialogue_assistant
from tooltrap.envs.multiagent.sabench.users import ScriptedUser
from tooltrap.envs.multiagent.sentry.baselines import ScenarioAttacker, make_assistant
from tooltrap.envs.multiagent.single_role import SingleRoleEnv
from tooltrap.wrappers.defenses import TGCCGatePolicy


def _gate_view(env):
    return SingleRoleEnv(
        env, "gate", {"assistant": make_assistant("obedient"), "attacker": ScenarioAttacker()}
    )


def _play(view, policy, options):
    observation, info = view.reset(options=options)
    if hasattr(policy, "reset"):
        policy.reset(observation, info)
    total, done = 0.0, False
    while not done:
        observation, reward, terminated, truncated, info = view.step(
            policy.act(observation, info) if not info.get("ended") else ""
        )
        total += reward
        done = terminated or truncated
    return total, info


def test_the_gate_view_gives_the_arena_rewards_of_the_same_episode():
    arena, view = sentry_arena_v0.parallel_env(), _gate_view(sentry_arena_v0.parallel_env())
    for i in range(0, 200, 17):
        reward, info = _play(view, TGCCGatePolicy(), {"task_index": i})
        policies = {
            "assistant": make_assistant("obedient"),
            "attacker": ScenarioAttacker(),
            "gate": TGCCGatePolicy(),
        }
        rewards, _ = run_turns(arena, policies, options={"task_index": i})
        assert reward == rewards["gate"] and info["rewards"] == rewards


def test_the_gate_sees_its_proposal_only():
    view = _gate_view(sentry_arena_v0.parallel_env())
    for i in range(200):
        if view.turns_of({"task_index": i}):
            observation, info = view.reset(options={"task_index": i})
            seen = json.loads(observation)
            assert set(seen) >= {"tool", "arguments", "provenance", "decide"} and info["turn"]
            assert "options" not in seen and "payloads" not in seen  # the attacker's brief stays with it
            return
    pytest.fail("no gate turn in the corpus")


def test_an_episode_without_a_gate_turn_resets_and_ends_on_the_first_step():
    view = _gate_view(sentry_arena_v0.parallel_env())
    quiet = next(i for i in range(200) if not view.turns_of({"task_index": i}))
    observation, info = view.reset(options={"task_index": quiet})
    assert observation == "" and info["ended"] and not info["turn"]
    _, reward, terminated, _, info = view.step("approve")
    assert terminated and reward == info["rewards"]["gate"]


def test_the_assistant_view_of_the_dialogue_is_the_dialogue():
    env = sabench_dialogue_v0.parallel_env(ambiguous=True)
    view = SingleRoleEnv(
        sabench_dialogue_v0.parallel_env(ambiguous=True), "assistant", {"user": ScriptedUser()}
    )
    for i in range(0, 45, 11):
        agent = dialogue_assistant("gold")
        observation, info = view.reset(options={"task_index": i})
        agent.reset(observation, info, task=view.multiagent.task)
        done, total = False, 0.0
        while not done:
            observation, reward, terminated, truncated, info = view.step(agent.act(observation, info))
            total, done = total + reward, terminated or truncated
        rewards, _ = run_turns(
            env, {"assistant": dialogue_assistant("gold"), "user": ScriptedUser()}, options={"task_index": i}
        )
        assert total == rewards["assistant"] == 1.0 and info["verdict"]["goal_after_clarification"]


def test_misuse_names_the_role():
    arena = sentry_arena_v0.parallel_env()
    with pytest.raises(UnknownNameError, match="Did you mean 'gate'"):
        SingleRoleEnv(arena, "gat", {})
    with pytest.raises(EnvUsageError, match="missing \\['attacker'\\]"):
        SingleRoleEnv(arena, "gate", {"assistant": make_assistant("careful")})
