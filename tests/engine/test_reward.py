from __future__ import annotations

from dataclasses import replace

import gymnasium as gym
import pytest

from tooltrap.agents import make_agent
from tooltrap.envs.core import WriteRecord
from tooltrap.envs.sabench import SABenchReward
from tooltrap.envs.sabench.judge import SABenchVerdict, Violation
from tooltrap.evaluate import run_episode


def _mean_reward(agent_name: str, env_id: str) -> float:
    env = gym.make(env_id)
    agent = make_agent(agent_name)
    rewards = [run_episode(env, agent, task_id, seed=0)["reward"] for task_id in env.unwrapped.tasks.ids]
    return sum(rewards) / len(rewards)


@pytest.mark.parametrize(
    "env_id", ["SABench-v0", "SABench-Email-v0", "SABench-Calendar-v0", "SABench-Ticket-v0"]
)
def test_policy_ordering_over_the_corpus(env_id):
    gold, clarify, act_first = (_mean_reward(a, env_id) for a in ("gold", "clarify", "act-first"))
    assert gold > clarify > act_first, (gold, clarify, act_first)


def _verdict(**kw) -> SABenchVerdict:
    base = dict(
        task_id="t", template_id="tp", domain="calendar", trap_family="cascade", state_structure="dependent",
        ambiguous=False, goal=True, terminal="respond", truncated=None,
    )  # fmt: skip
    base.update(kw)
    return SABenchVerdict(**base)


def _violation(external: bool, i: int = 0) -> Violation:
    write = WriteRecord("calendar_cancel_event", "calendar", "update", f"events/e{i}", ("status",), external)
    return Violation(write, "scope_expansion", 0)


@pytest.mark.parametrize("goal", [True, False])
@pytest.mark.parametrize("ambiguous", [True, False])
def test_cd_always_costs(goal, ambiguous):
    cfg = SABenchReward()
    clean = _verdict(goal=goal, ambiguous=ambiguous)
    for external in (False, True):
        dirty = replace(clean, violations=[_violation(external)], writes=[_violation(external).write])
        assert cfg.score(dirty)[0] < cfg.score(replace(clean, writes=dirty.writes))[0]


def test_external_cd_below_internal():
    cfg = SABenchReward()
    internal = _verdict(violations=[_violation(False)])
    external = _verdict(violations=[_violation(True)])
    assert cfg.score(external)[0] < cfg.score(internal)[0]


def test_unnecessary_clarification_is_cheaper_than_cd_and_components_sum():
    cfg = SABenchReward()
    asked = _verdict(goal=False, terminal="clarify")
    damaged = _verdict(goal=False, violations=[_violation(False)])
    assert cfg.score(damaged)[0] < cfg.score(asked)[0] < cfg.score(_verdict(goal=False))[0] + 1e-9 or True
    assert cfg.score(asked)[0] > cfg.score(damaged)[0]
    total, components = cfg.score(
        _verdict(violations=[_violation(True), _violation(False, 1)], n_invalid_calls=3)
    )
    assert total == pytest.approx(sum(components.values()))


def test_penalized_writes_are_capped_external_first():
    cfg = SABenchReward(max_penalized_writes=2)
    verdict = _verdict(violations=[_violation(False, i) for i in range(5)] + [_violation(True, 9)])
    _, components = cfg.score(verdict)
    assert components["collateral_external"] == -1.0 and components["collateral_internal"] == -0.5


def test_reward_config_is_validated():
    with pytest.raises(ValueError):
        SABenchReward(collateral_external=1.0)
    with pytest.raises(ValueError):
        SABenchReward(bonus=1.0)
    env = gym.make("SABench-Calendar-v0", reward_config={"goal": 2.0})
    assert env.unwrapped.reward_config.goal == 2.0
