from __future__ import annotations

import json

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tooltrap
from tooltrap.agents import RandomAgent
from tooltrap.envs.core import MAX_ACTION_CHARS, EnvUsageError
from tooltrap.evaluate import run_episode

from ..conftest import act


@pytest.mark.parametrize("env_id", list(tooltrap.ENV_IDS))
def test_check_env(env_id):
    env = gym.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def _rollout(env_id: str, seed: int) -> list[str]:
    env = gym.make(env_id)
    agent = RandomAgent(seed=seed)
    out = []
    for task_id in env.unwrapped.tasks.ids[:6]:
        record = run_episode(env, agent, task_id, seed)
        out.append(json.dumps(record, sort_keys=True))
    obs, info = env.reset(seed=seed)
    out.append(obs + json.dumps(info, sort_keys=True))
    return out


@pytest.mark.parametrize("env_id", list(tooltrap.ENV_IDS))
def test_seeded_rollouts_are_byte_identical(env_id):
    assert _rollout(env_id, 3) == _rollout(env_id, 3)


def test_reset_info_has_messages_and_tools(calendar_env):
    obs, info = calendar_env.reset(seed=0)
    assert info["messages"][0]["role"] == "system" and info["messages"][1]["role"] == "user"
    assert "clarify" in info["messages"][0]["content"]
    assert '"events"' in info["messages"][0]["content"]  # the serialized state
    names = {t["function"]["name"] for t in info["tools"]}
    assert {"email_send", "calendar_cancel_event", "ticket_close", "respond", "clarify"} <= names
    assert obs.endswith(info["messages"][1]["content"])


def test_usage_errors(calendar_env):
    with pytest.raises(EnvUsageError, match="reset"):
        gym.make("SABench-Calendar-v0").unwrapped.step(act("respond", message="x"))
    calendar_env.reset(seed=0)
    calendar_env.step(act("respond", message="done"))
    with pytest.raises(EnvUsageError, match="ended"):
        calendar_env.step(act("respond", message="again"))


def test_terminal_ends_with_verdict_and_components(calendar_env):
    calendar_env.reset(seed=0)
    obs, reward, terminated, truncated, info = calendar_env.step(act("respond", message="done"))
    assert terminated and not truncated
    assert set(info["reward_components"]) >= {"goal", "collateral_internal", "collateral_external"}
    assert reward == pytest.approx(sum(info["reward_components"].values()))
    assert info["verdict"]["terminal"] == "respond"


def test_list_action_and_messages(calendar_env):
    calendar_env.reset(seed=0)
    obs, _, terminated, _, info = calendar_env.step(
        json.dumps(
            [
                {"name": "calendar_list_events", "arguments": {}},
                {"name": "email_search", "arguments": {"query": "x"}},
            ]
        )
    )
    payload = json.loads(obs)
    assert isinstance(payload, list) and len(payload) == 2 and all(p["ok"] for p in payload)
    assert not terminated
    roles = [m["role"] for m in info["messages"]]
    assert roles == ["assistant", "tool", "tool"]
    assert [c["function"]["name"] for c in info["messages"][0]["tool_calls"]] == [
        "calendar_list_events",
        "email_search",
    ]


BAD_ACTIONS = [
    "not json",
    "",
    "[]",
    "{}",
    '{"name": 5}',
    '{"name": "calendar_cancel_event"}',
    '{"name": "calendar_cancel_evnt", "arguments": {}}',
    '{"name": "calendar_cancel_event", "arguments": {"event_id": 7}}',
    '{"name": "calendar_cancel_event", "arguments": {"event_id": "nope"}}',
    '{"name": "calendar_cancel_event", "arguments": "{broken"}',
    '{"name": "calendar_cancel_event", "arguments": [1, 2]}',
    '{"name": "calendar_cancel_event", "arguments": {}, "extra": 1}',
    json.dumps([{"name": "respond", "arguments": {"message": "x"}}] * 50),
    "[" * 100_000,
    "x" * (MAX_ACTION_CHARS + 1),
    '{"name": "calendar_update_event", "arguments": {"event_id": "evt_1", "start": "25:99"}}',
    '{"name": "email_send", "arguments": {"to": [], "subject": "s", "body": "b"}}',
]


@pytest.mark.parametrize("action", BAD_ACTIONS)
def test_bad_actions_become_typed_errors(calendar_env, action):
    calendar_env.reset(seed=0)
    state = calendar_env.unwrapped.state
    before = state.hash()
    obs, reward, terminated, truncated, info = calendar_env.step(action)
    payload = json.loads(obs)
    entries = payload if isinstance(payload, list) else [payload]
    assert all(not e["ok"] and e["error"]["type"] for e in entries)
    assert state.hash() == before
    assert info["n_errors"] >= 1 and not terminated


def test_consecutive_errors_truncate(calendar_env):
    calendar_env.reset(seed=0)
    for _i in range(5):
        _, reward, terminated, truncated, info = calendar_env.step("garbage")
    assert truncated and not terminated
    assert info["verdict"]["truncated"] == "consecutive_errors"
    assert info["reward_components"]["invalid_calls"] < 0


def test_step_cap_truncates(calendar_env):
    calendar_env.reset(seed=0)
    for _ in range(16):
        _, _, terminated, truncated, info = calendar_env.step(act("calendar_list_events"))
    assert truncated and info["verdict"]["truncated"] == "max_steps"


def test_failed_call_mid_list_keeps_earlier_effects_only(calendar_env):
    calendar_env.reset(options={"task_index": 0})
    task = calendar_env.unwrapped.task
    event_id = next(iter(task.initial_state.collections["events"]))
    calendar_env.step(
        json.dumps(
            [
                {
                    "name": "calendar_update_event",
                    "arguments": {"event_id": event_id, "location": "Room Z", "scope": "occurrence"},
                },
                {"name": "calendar_cancel_event", "arguments": {"event_id": "missing"}},
            ]
        )
    )
    assert calendar_env.unwrapped.state.get("events", event_id)["location"] == "Room Z"


# -- property tests -----------------------------------------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)


_ENV = gym.make("SABench-Calendar-v0")
_ENV.reset(seed=0)
_NAMES = sorted(t["function"]["name"] for t in _ENV.unwrapped.tool_schemas)
_IDS = sorted(
    {i for task in _ENV.unwrapped.tasks for c in task.initial_state.collections.values() for i in c}
)


@st.composite
def tool_calls(draw):
    name = draw(st.sampled_from(_NAMES) | st.text(max_size=20))
    arg_value = st.sampled_from(_IDS) | json_values
    arguments = draw(
        st.dictionaries(
            st.sampled_from(
                ["event_id", "message_id", "ticket_id", "scope", "to", "body", "emails", "title", "x"]
            ),
            arg_value,
            max_size=4,
        )
    )
    return json.dumps({"name": name, "arguments": arguments})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(tool_calls() | st.text(max_size=50), min_size=1, max_size=6), st.integers(0, 10_000))
def test_random_actions_never_raise_and_failed_calls_leave_state_unchanged(actions, seed):
    env = _ENV.unwrapped
    env.reset(seed=seed)
    for action in actions:
        before = env.state.hash()
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, str) and isinstance(reward, float)
        step = env.trace.steps[-1]
        if step.error is not None or all(not c.ok for c in step.calls):
            assert env.state.hash() == before
        if terminated or truncated:
            assert "verdict" in info
            break
