"""Raw model output enters the conversation and the trace only as text UTF-8 can encode (issue 24,
deliverable 1): the provider's reply reader, and the wrappers that take raw completions (tool-call
formats, prompted ReAct), each made safe once and counted on the trace step."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from tooltrap.envs.core.text import REPLACEMENT
from tooltrap.wrappers.formats import ToolCallFormat
from tooltrap.wrappers.provider import ProviderError, read_choice
from tooltrap.wrappers.react import ReActFormat


def _body(message: dict, *, raw: bool = False) -> bytes:
    reply = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    if raw:  # the surrogate as bytes (ED A0 80), which json.loads would decode with surrogatepass
        return json.dumps(reply, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return json.dumps(reply).encode()


def _utf8(value: object) -> None:
    json.dumps(value, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("raw", [False, True])
def test_a_reply_is_made_safe_as_it_is_read(raw):
    call = {
        "id": "c",
        "type": "function",
        "function": {"name": "f", "arguments": json.dumps({"q": "\ud800"})},
    }
    reply = read_choice(
        _body({"role": "assistant", "content": "hi \udc00 \U0001f642", "tool_calls": [call]}, raw=raw)
    )
    _utf8(reply.message)
    assert reply.message["content"] == f"hi {REPLACEMENT} \U0001f642"
    # the arguments are JSON inside JSON: their own escape is replaced too, and they still decode
    assert json.loads(reply.message["tool_calls"][0]["function"]["arguments"]) == {"q": REPLACEMENT}
    assert reply.escaped == 2


def test_a_reply_without_anything_to_replace_is_read_as_sent():
    message = {"role": "assistant", "content": "caf\u00e9 \x00 \u2028 \U0001f642"}
    reply = read_choice(_body(message))
    assert reply.message == message and reply.escaped == 0


def test_invalid_utf8_is_replaced_but_a_body_that_is_no_json_is_still_a_provider_failure():
    reply = read_choice(b'{"choices": [{"message": {"role": "assistant", "content": "a \xff b"}}]}')
    assert reply.message["content"] == f"a {REPLACEMENT} b" and reply.escaped == 1
    with pytest.raises(ProviderError) as err:
        read_choice(b"\xff\xfe<html>")
    assert err.value.kind == "invalid_response"


def test_tool_call_format_stores_a_safe_raw_and_counts_it():
    env = ToolCallFormat(gym.make("SABench-Calendar-v0"))
    env.reset(seed=0)
    completion = (
        '<tool_call>{"name": "calendar_list_events", "arguments": {"query": "\\ud800 x \ud800"}}</tool_call>'
    )
    _, _, _, _, info = env.step(completion)
    step = env.unwrapped.trace.steps[-1]
    _utf8(step.to_dict())
    _utf8(info)
    assert REPLACEMENT in step.raw and step.format == "hermes"
    # the raw text's two (one raw, one escape) and the action's decoded ones, each where it was replaced
    assert step.escaped >= 2 and step.calls[0].arguments == {"query": f"{REPLACEMENT} x {REPLACEMENT}"}


def test_react_keeps_a_safe_reply_in_the_conversation():
    env = ReActFormat(gym.make("AgentProp-Weather-v0"))
    env.reset(seed=0)
    reply = 'Thought: look \ud800\nAction: get_weather\nAction Input: {"city": "Dubai \\udfff", "date": "2024-04-13"}'
    _, _, _, _, info = env.step(reply)
    _utf8(info)
    assistant = info["messages"][0]["content"]
    assert assistant.startswith(f"Thought: look {REPLACEMENT}")
    step = env.unwrapped.trace.steps[-1]
    assert step.escaped >= 2 and step.calls[0].arguments["city"] == f"Dubai {REPLACEMENT}"
    _utf8(step.to_dict())


def test_a_request_never_fails_to_encode():
    from tooltrap.wrappers.provider import request_bytes

    body = {"model": "m", "messages": [{"role": "user", "content": "from a task file \ud800 \U0001f642"}]}
    sent = json.loads(request_bytes(body))
    assert sent["messages"][0]["content"] == f"from a task file {REPLACEMENT} \U0001f642"
    plain = {"model": "m", "messages": [{"role": "user", "content": "caf\u00e9"}]}
    assert request_bytes(plain) == json.dumps(plain, ensure_ascii=False, separators=(",", ":")).encode()
