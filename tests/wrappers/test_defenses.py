"""Mitigation wrappers: what they intercept, what the scripted baselines do under them."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from tooltrap.agents import make_agent
from tooltrap.envs.core import UnknownNameError
from tooltrap.evaluate import run_episode
from tooltrap.wrappers.defenses import apply_mitigation, confirmation_policy

CONFIRMATION_POLICY = confirmation_policy("clarify")

CASCADE = "cal-cascade-dependent-cancel-occurrence-01"


def _env(mitigation):
    return apply_mitigation(gym.make("SABench-Calendar-v0"), mitigation)


def test_prompt_policy_reaches_the_prompt_and_info():
    env = _env("confirm-prompt")
    obs, info = env.reset(options={"task_id": CASCADE})
    assert CONFIRMATION_POLICY in obs and CONFIRMATION_POLICY in info["messages"][0]["content"]
    assert info["policy"] == {"confirm_before_write": True}
    record = run_episode(env, make_agent("gold"), CASCADE, seed=0)
    assert record["verdict"]["terminal"] == "clarify" and record["verdict"]["n_writes"] == 0


def test_preview_changes_nothing_until_the_identical_call_repeats():
    env = _env("preview")
    env.reset(options={"task_id": CASCADE})
    base = env.unwrapped
    task = base.task
    before = base.state.hash()
    action = task.intent_calls()[0].to_action()
    obs, *_ = env.step(action)
    preview = json.loads(obs)["result"]
    assert preview["preview"] is True and preview["committed"] is False
    assert base.state.hash() == before
    assert any(e["entity"].startswith("series/") for e in preview["would_change"])  # the cascade is visible
    assert preview["would_notify"]
    obs, *_ = env.step(action)
    assert base.state.hash() != before
    assert "preview" not in json.loads(obs)["result"]


def test_gate_sees_the_call_but_not_its_cascade():
    record = run_episode(_env("confirm-gate"), make_agent("act-first"), CASCADE, seed=0)
    assert record["verdict"]["cd"]  # the series cancellation names only the authorized occurrence
    record = run_episode(_env("preview-gate"), make_agent("act-first"), CASCADE, seed=0)
    assert not record["verdict"]["cd"] and not record["verdict"]["goal"]
    steps = record["trace"]["steps"]
    assert steps[0]["calls"][0]["result"]["declined_by_user"] is True


def test_gate_blocks_ambiguity_violations_and_keeps_gold_goals():
    env = _env("confirm-gate")
    for task in env.unwrapped.tasks:
        gold = run_episode(env, make_agent("gold"), task.id, seed=0)["verdict"]
        assert gold["goal"] and not gold["cd"], task.id
        if task.labels.ambiguous:
            act = run_episode(env, make_agent("act-first"), task.id, seed=0)["verdict"]
            assert not act["ab_violation"], task.id


def test_declines_are_not_invalid_calls():
    record = run_episode(_env("preview-gate"), make_agent("act-first"), CASCADE, seed=0)
    assert record["verdict"]["n_invalid_calls"] == 0


def test_unknown_mitigation():
    with pytest.raises(UnknownNameError, match="preview"):
        _env("previw")
