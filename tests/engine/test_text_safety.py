"""Text from outside is made safe once, at the boundary (issue 24, deliverable 1): ``make_safe``'s rule,
and the env's action intake for every benchmark: whatever an action carries, the observation, the
step's ``info["messages"]`` and the trace encode as UTF-8, and the replacement is counted."""

from __future__ import annotations

import contextlib
import json

import gymnasium as gym
import pytest

from tooltrap.envs.core import make_safe
from tooltrap.envs.core.text import REPLACEMENT

ENV_IDS = ("SABench-Calendar-v0", "EpiSEM-Finance-v0", "SentryBench-v0", "AgentProp-Weather-v0")


def _encodes(value: object) -> None:
    json.dumps(value, ensure_ascii=False).encode("utf-8")


# -- the rule -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "json_escapes", "expected", "n"),
    [
        ("plain ascii", True, "plain ascii", 0),
        ("hi \ud800", False, f"hi {REPLACEMENT}", 1),  # lone high
        ("\udfff low", False, f"{REPLACEMENT} low", 1),  # lone low
        ("\ud83d\ude00", False, REPLACEMENT * 2, 2),  # two code points, not a pair: UTF-8 refuses both
        ("ok \U0001f642 \u00e9\u4e2d", False, "ok \U0001f642 \u00e9\u4e2d", 0),  # real emoji, accents, CJK
        (
            "nul\x00 bell\x07 esc\x1b del\x7f \ufffe \ue000",
            True,
            "nul\x00 bell\x07 esc\x1b del\x7f \ufffe \ue000",
            0,
        ),
        ('{"a": "\\ud800"}', True, '{"a": "\\ufffd"}', 1),  # an escape of a lone surrogate
        ('{"a": "\\ud800"}', False, '{"a": "\\ud800"}', 0),  # not JSON to the caller: text is text
        ('{"a": "\\uD83D\\uDE00"}', True, '{"a": "\\uD83D\\uDE00"}', 0),  # a valid pair, any case
        ('{"a": "\\\\ud800"}', True, '{"a": "\\\\ud800"}', 0),  # an escaped backslash: "\ud800" as text
        ('"\\ud800\\ud800\\udc00"', True, '"\\ufffd\\ud800\\udc00"', 1),  # a high before a pair
        ('"\\udc00\\ud800"', True, '"\\ufffd\\ufffd"', 2),  # a low then a high: no pair
        ('"\\ud800" \ud800', True, f'"\\ufffd" {REPLACEMENT}', 2),  # both forms in one text
    ],
)
def test_make_safe_replaces_exactly_what_utf8_cannot_encode(text, json_escapes, expected, n):
    safe, count = make_safe(text, json_escapes=json_escapes)
    assert (safe, count) == (expected, n)
    safe.encode("utf-8")
    if json_escapes:
        with contextlib.suppress(json.JSONDecodeError):  # not every case is one JSON value
            _encodes(json.loads(safe))  # the decoded value is safe too
    assert make_safe(safe, json_escapes=json_escapes) == (safe, 0)  # idempotent: nothing left to do


def test_make_safe_decodes_bytes_and_counts_only_what_it_replaced():
    assert make_safe(b'{"a": "ok \xf0\x9f\x99\x82"}') == ('{"a": "ok \U0001f642"}', 0)
    # invalid UTF-8 and an encoded surrogate (which json.loads would decode with surrogatepass)
    safe, n = make_safe(b'"\xff \xed\xa0\x80 \xef\xbf\xbd"', json_escapes=True)
    assert n == safe.count(REPLACEMENT) - 1 and n >= 2  # the sender's own U+FFFD is not counted
    _encodes(json.loads(safe))
    assert make_safe(b'"\\ud800"', json_escapes=True) == ('"\\ufffd"', 1)
    assert make_safe('{"a": 1}'.encode("utf-16")) == ('{"a": 1}', 0)


# -- the env's intake -----------------------------------------------------------------------------------
def _hostile_actions(tools: list[dict]) -> list[object]:
    """Every way a lone surrogate can ride an action: raw, as a JSON escape, inside a JSON-string
    ``arguments``, in the tool name, outside any JSON, in a non-string action."""
    out: list[object] = []
    for tool in tools:
        function = tool["function"]
        arguments = {
            name: "\ud800 x \udfff" if schema.get("type") == "string" else schema.get("default", 1)
            for name, schema in function["parameters"].get("properties", {}).items()
        }
        call = {"name": function["name"], "arguments": arguments}
        if "\ud800 x \udfff" not in arguments.values():  # no text argument: only the name can carry one
            out.append(json.dumps({**call, "name": function["name"] + "\udfff"}))
            continue
        out += [
            json.dumps(call, ensure_ascii=False),  # raw surrogates
            json.dumps(call),  # \ud800 escapes
            json.dumps({**call, "arguments": json.dumps(arguments)}),  # escapes inside JSON inside JSON
            json.dumps([call, {"name": function["name"] + "\ud800", "arguments": {}}], ensure_ascii=False),
        ]
    return [*out, "not json \ud800", '{"name": "\\udc00"', ["\ud800"]]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_action_is_made_safe_before_the_env_stores_or_echoes_it(env_id):
    env = gym.make(env_id)
    _, info = env.reset(seed=0)
    actions = _hostile_actions(info["tools"])
    escaped_steps = 0
    for i, action in enumerate(actions):
        if env.unwrapped.done:
            env.reset(seed=i)
        observation, _, _, _, step_info = env.step(action)  # type: ignore[arg-type]
        observation.encode("utf-8")
        _encodes(step_info)  # messages, verdict, components
        step = env.unwrapped.trace.steps[-1]
        _encodes(step.to_dict())
        if step.escaped:
            escaped_steps += 1
            assert step_info["escaped"] == step.escaped
        if isinstance(action, str):
            assert step.escaped, action  # every text action above carries at least one
        _encodes(env.unwrapped.trace.to_dict())
        _encodes(env.unwrapped.state.to_dict())  # what the agent wrote, too
    assert escaped_steps == len(actions) - 1  # all but the non-string action (its repr escapes)
    assert env.unwrapped.trace.n_escaped == sum(s.escaped for s in env.unwrapped.trace.steps)


def test_a_safe_action_keeps_its_bytes_and_its_record_shape():
    env = gym.make("SABench-Calendar-v0")
    env.reset(seed=0)
    action = json.dumps(
        {"name": "calendar_list_events", "arguments": {"query": "caf\u00e9 \U0001f642"}}, ensure_ascii=False
    )
    _, _, _, _, info = env.step(action)
    step = env.unwrapped.trace.steps[-1]
    assert step.action == action and step.escaped == 0 and "escaped" not in info
    assert "escaped" not in step.to_dict() and "escaped" not in env.unwrapped.trace.to_dict()
    assert env.unwrapped.trace.steps[-1].calls[0].arguments == {"query": "caf\u00e9 \U0001f642"}


def test_a_written_surrogate_reaches_the_state_as_the_replacement():
    env = gym.make("SABench-Calendar-v0")
    env.reset(seed=0)
    state = env.unwrapped.state
    event = next(iter(state.collection("events")))
    env.step(
        json.dumps({"name": "calendar_update_event", "arguments": {"event_id": event, "title": "T \ud800"}})
    )
    call = env.unwrapped.trace.steps[-1].calls[0]
    assert call.arguments["title"] == f"T {REPLACEMENT}"
    if call.ok:
        assert REPLACEMENT in json.dumps(env.unwrapped.state.collection("events"), ensure_ascii=False)
