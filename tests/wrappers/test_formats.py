from __future__ import annotations

import json

import gymnasium as gym
import pytest

from tooltrap.wrappers.formats import (
    ToolCallFormat,
    answer_tool,
    parse_completion,
    render_hermes,
    terminal_tool,
)


@pytest.mark.parametrize(
    "completion, expected",
    [
        (
            '<tool_call>\n{"name": "clarify", "arguments": {"question": "Which?"}}\n</tool_call>',
            {"name": "clarify", "arguments": {"question": "Which?"}},
        ),
        (
            '<think>hmm</think>{"name": "respond", "arguments": {"message": "ok"}}',
            {"name": "respond", "arguments": {"message": "ok"}},
        ),
        ('```json\n{"name": "respond", "arguments": {}}\n```', {"name": "respond", "arguments": {}}),
        (
            '{"name": "calendar_list_events", "arguments": {}}\n</tool_call>',
            {"name": "calendar_list_events", "arguments": {}},
        ),
        (
            '{"function": {"name": "respond", "arguments": "{\\"message\\": \\"x\\"}"}}',
            {"name": "respond", "arguments": {"message": "x"}},
        ),
        (
            "All done, I cancelled it.",
            {"name": "respond", "arguments": {"message": "All done, I cancelled it."}},
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "1",
                        "type": "function",
                        "function": {"name": "clarify", "arguments": '{"question": "q"}'},
                    }
                ],
            },
            {"name": "clarify", "arguments": {"question": "q"}},
        ),
    ],
)
def test_formats_parse_to_the_canonical_action(completion, expected):
    assert json.loads(parse_completion(completion, answer=("respond", "message"))) == expected


def test_plain_text_goes_to_the_envs_answer_tool():
    """The answer tool is found by how it ends the episode, never by name."""
    _, info = gym.make("tests.toybench:ToyLibrary-v0").reset(seed=0)
    assert answer_tool(info) == ("respond", "message")
    assert terminal_tool(info, "abstain", "escalate") == ("decline", ["reason"])
    _, info = gym.make("SABench-Calendar-v0").reset(seed=0)
    assert terminal_tool(info, "clarify") == ("clarify", ["question"])
    assert parse_completion("no call here") == "no call here"  # no answer tool given: kept


def test_several_calls_become_a_list_and_hermes_round_trips():
    calls = [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]
    assert json.loads(parse_completion(render_hermes(calls))) == calls


def test_plain_text_can_be_kept_for_the_env_to_reject():
    assert parse_completion("no call here", plain_text="keep") == "no call here"
    assert parse_completion('<tool_call>{"name": broken</tool_call>', plain_text="keep").startswith(
        "<tool_call>"
    )


def test_wrapper_records_raw_completions_in_the_trace():
    env = ToolCallFormat(gym.make("SABench-Calendar-v0"))
    env.reset(seed=0)
    raw = 'Let me look.\n<tool_call>\n{"name": "calendar_list_events", "arguments": {}}\n</tool_call>'
    obs, *_ = env.step(raw)
    assert json.loads(obs)["ok"]
    step = env.unwrapped.trace.steps[-1]
    assert step.raw == raw and json.loads(step.action)["name"] == "calendar_list_events"
    _, _, terminated, _, info = env.step("I'm done.")
    assert terminated and info["verdict"]["terminal"] == "respond"
