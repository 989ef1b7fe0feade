"""The prompted-ReAct format (``ReActFormat``): prompt, parse rules, conversation, nudge and cap."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from tooltrap.envs.core import EnvUsageError
from tooltrap.wrappers.defenses import Defense
from tooltrap.wrappers.react import MAX_STEPS_REACHED, NUDGE, ReActFormat, one_line, parse_react

ENVS = ["AgentProp-Weather-v0", "SABench-Calendar-v0"]


def _task(env: gym.Env):
    """A task whose gold solution opens with a non-terminal tool call and ends with the answer tool."""
    base = env.unwrapped
    terminals = base.benchmark.full_toolset.terminals
    for task in base.tasks:
        gold = task.gold
        if gold and gold[0].name not in terminals and terminals.get(gold[-1].name) == "answer":
            return task
    raise AssertionError("no task with a tool call then an answer")


def _make(env_id: str, **kwargs):
    env = ReActFormat(gym.make(env_id), **kwargs)
    task = _task(env)
    observation, info = env.reset(seed=0, options={"task_id": task.id})
    return env, task, observation, info


def _react(name: str, arguments: dict, thought: str = "I should look this up.") -> str:
    return f"Thought: {thought}\nAction: {name}\nAction Input: {json.dumps(arguments)}"


IDLE = "Thought: I am still thinking about this."  # neither an action nor a final answer


@pytest.mark.parametrize("env_id", ENVS)
def test_prompt_lists_names_and_one_line_descriptions_without_schemas(env_id):
    plain = gym.make(env_id)
    task = _task(plain)
    plain_observation, plain_info = plain.reset(seed=0, options={"task_id": task.id})
    env, _, observation, info = _make(env_id)
    assert info["tools"] == []
    assert info["react_tools"] == plain_info["tools"]
    system, user = info["messages"][0], info["messages"][-1]
    own_system = plain_info["messages"][0]
    assert own_system["role"] == system["role"] == "system"
    assert system["content"].startswith(own_system["content"])  # the env's own prompt, kept
    assert user == plain_info["messages"][-1]  # the user message, kept
    text = json.dumps(info["messages"])
    assert "properties" not in text and '"required"' not in text and '"type": "object"' not in text
    for tool in plain_info["tools"]:
        function = tool["function"]
        first = one_line(function["description"])
        assert f"- {function['name']}: {first}" in system["content"]
    assert "Action Input:" in system["content"] and "Final Answer:" in system["content"]
    assert observation == "\n\n".join(m["content"] for m in info["messages"])
    assert observation != plain_observation


def test_descriptions_are_cut_to_their_first_sentence():
    env, _, _, info = _make("SABench-Calendar-v0")
    system = info["messages"][0]["content"]
    assert "- calendar_cancel_event: Cancel an event.\n" in system
    assert "the default scope cancels this and all later occurrences" not in system
    assert one_line("Get it, e.g. from the API. Then more.\nSecond line.") == "Get it, e.g. from the API."
    assert one_line(None) == ""


@pytest.mark.parametrize("env_id", ENVS)
def test_action_executes_and_the_conversation_is_react(env_id):
    env, task, _, _ = _make(env_id)
    call = task.gold[0]
    reply = _react(call.name, call.arguments)
    observation, reward, terminated, truncated, info = env.step(reply)
    trace = env.unwrapped.trace
    assert not terminated and not truncated and reward == 0.0
    assert [(c.name, c.arguments) for c in trace.calls] == [(call.name, call.arguments)]
    assert trace.calls[0].ok
    assert trace.steps[0].raw == reply and trace.steps[0].format == "react"
    assert info["messages"] == [
        {"role": "assistant", "content": reply},
        {"role": "user", "content": f"Observation: {trace.steps[0].observation}"},
    ]
    assert observation == info["messages"][-1]["content"]
    assert all("tool_calls" not in m for m in info["messages"])


@pytest.mark.parametrize("env_id", ENVS)
def test_final_answer_ends_the_episode_through_the_answer_tool(env_id):
    env, task, _, info = _make(env_id)
    call, gold_answer = task.gold[0], task.gold[-1]
    answer_tool = next(name for name, ends in info["terminal_tools"].items() if ends == "answer")
    env.step(_react(call.name, call.arguments))
    text = next(iter(gold_answer.arguments.values()))
    reply = f"Thought: I know it now.\nFinal Answer: {text}"
    _, reward, terminated, truncated, info = env.step(reply)
    trace = env.unwrapped.trace
    assert terminated and not truncated
    assert trace.terminal == answer_tool == gold_answer.name
    assert trace.terminal_arguments == gold_answer.arguments
    assert trace.disposition == "answer"
    assert "verdict" in info
    if env_id.startswith("AgentProp"):
        assert info["verdict"]["correct"] and reward > 0
    with pytest.raises(EnvUsageError):
        env.step("Final Answer: again")


def test_a_reply_with_neither_gets_the_nudge_without_stepping_the_env():
    env, task, _, _ = _make("AgentProp-Weather-v0")
    observation, reward, terminated, truncated, info = env.step(IDLE)
    trace = env.unwrapped.trace
    assert observation == NUDGE == "Please provide a Final Answer."
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert trace.steps == [] and trace.n_errors == 0
    assert info["messages"] == [{"role": "assistant", "content": IDLE}, {"role": "user", "content": NUDGE}]
    assert info["model_calls"] == 1 and info["react"] == "none"
    assert env.replies == [{"call": 1, "raw": IDLE, "read_as": "none", "step": None}]
    call = task.gold[0]
    env.step(_react(call.name, call.arguments))  # the episode goes on
    assert len(trace.steps) == 1 and env.replies[-1]["step"] == 0


@pytest.mark.parametrize("last", ["idle", "action"])
def test_five_replies_without_a_terminal_truncate_the_episode(last):
    env, task, _, _ = _make("AgentProp-Weather-v0")
    call = task.gold[0]
    replies = [IDLE, _react(call.name, call.arguments), IDLE, _react(call.name, call.arguments)]
    for reply in replies:
        _, _, terminated, truncated, info = env.step(reply)
        assert not terminated and not truncated and "verdict" not in info
    fifth = IDLE if last == "idle" else _react(call.name, call.arguments)
    observation, reward, terminated, truncated, info = env.step(fifth)
    trace = env.unwrapped.trace
    assert truncated and not terminated
    assert trace.truncated == "max_steps" and trace.terminal is None
    assert info["verdict"]["truncated"] == "max_steps"
    assert info["reward_components"]["no_answer"] < 0 and reward == sum(info["reward_components"].values())
    assert observation.endswith(MAX_STEPS_REACHED) and MAX_STEPS_REACHED == "Max steps reached."
    if last == "idle":
        assert observation == MAX_STEPS_REACHED and len(trace.steps) == 2
    else:
        assert observation.startswith("Observation: ") and len(trace.steps) == 3
    assert info["messages"][-1] == {"role": "user", "content": observation}
    assert env.unwrapped.done
    with pytest.raises(EnvUsageError):
        env.step(IDLE)


def test_the_cap_is_an_option_and_is_reset_per_episode():
    env, task, _, _ = _make("AgentProp-Weather-v0", max_model_calls=2)
    env.step(IDLE)
    assert env.step(IDLE)[3]
    env.reset(seed=0, options={"task_id": task.id})
    assert env.model_calls == 0 and not env.step(IDLE)[3]
    for bad in (0, -1, 2.5, True):
        with pytest.raises(EnvUsageError):
            ReActFormat(gym.make("AgentProp-Weather-v0"), max_model_calls=bad)
    assert env.spec.additional_wrappers[-1].kwargs == {"max_model_calls": 2}


def test_the_cap_runs_the_defense_hooks_below():
    judged = []

    class Watch(Defense):
        def before_judge(self, env, trace):
            judged.append(trace.truncated)

    env = ReActFormat(Watch(gym.make("AgentProp-Weather-v0")), max_model_calls=1)
    env.reset(seed=0)
    assert env.step(IDLE)[3]
    assert judged == ["max_steps"]


@pytest.mark.parametrize(
    "action_input, kind",
    [("{city: Dubai, date: 2024-04-13}", "parse_error"), ("Dubai", "parse_error"), ('["Dubai"]', None)],
)
def test_malformed_action_input_is_an_invalid_call_and_the_episode_goes_on(action_input, kind):
    env, task, _, _ = _make("AgentProp-Weather-v0")
    reply = f"Thought: weather.\nAction: get_weather\nAction Input: {action_input}"
    observation, _, terminated, truncated, info = env.step(reply)
    trace = env.unwrapped.trace
    assert not terminated and not truncated
    assert observation.startswith("Observation: ")
    decoded = json.loads(observation[len("Observation: ") :])
    assert decoded["ok"] is False and decoded["error"]["type"]
    if kind is not None:
        assert trace.steps[0].error["type"] == kind
    assert trace.n_errors == 1
    call = task.gold[0]
    env.step(_react(call.name, call.arguments))
    assert trace.calls[-1].ok


def test_the_injection_hook_sees_the_parsed_call():
    env = ReActFormat(gym.make("AgentProp-Weather-v0"))
    task = _task(env)
    env.reset(seed=0, options={"task_id": task.id, "injection": "semantic_wrong"})
    call = task.gold[0]
    env.step(_react(call.name, call.arguments))
    record = env.unwrapped.trace.calls[0]
    assert record.sent_arguments == call.arguments and record.arguments != call.arguments
    assert record.rewrites[0]["kind"] == "injection"


def test_same_replies_give_identical_episodes():
    def play():
        env, task, observation, info = _make("AgentProp-Weather-v0")
        call = task.gold[0]
        out = [(observation, info["messages"])]
        for reply in [IDLE, _react(call.name, call.arguments), "Final Answer: no idea"]:
            observation, reward, terminated, truncated, info = env.step(reply)
            out.append((observation, reward, terminated, truncated, info["messages"], info.get("verdict")))
        return out, env.unwrapped.trace.to_dict()

    assert play() == play()


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            'Thought: x\nAction: get_weather\nAction Input: {"city": "Paris"}',
            ("get_weather", {"city": "Paris"}),
        ),
        (  # the first pair wins: the rest was written over an observation the model imagined
            'Action: get_forecast\nAction Input: {"city": "Oslo"}\nObservation: rain\nThought: no\n'
            'Action: get_weather\nAction Input: {"city": "Paris"}',
            ("get_forecast", {"city": "Oslo"}),
        ),
        (  # an Action line without a tool is not the action
            'Action: None\nThought: wait\nAction: get_weather\nAction Input: {"city": "Paris"}',
            ("get_weather", {"city": "Paris"}),
        ),
        (  # an action before a final answer (over an imagined observation): the action
            'Action: get_weather\nAction Input: {"city": "Paris"}\nObservation: sunny, 20 C\n'
            "Thought: done\nFinal Answer: It is sunny.",
            ("get_weather", {"city": "Paris"}),
        ),
        (  # code fence and trailing prose
            'Action: `get_weather`\nAction Input: ```json\n{"city": "Paris"}\n```\nI will wait.',
            ("get_weather", {"city": "Paris"}),
        ),
        (
            '**Action:** get_weather\n**Action Input:** {"city": "Paris"} (the capital)',
            ("get_weather", {"city": "Paris"}),
        ),
        ("Action: get_weather()\n", ("get_weather", {})),
        ("action: get_weather\naction input: {}", ("get_weather", {})),
        ("Action: get_weather\nAction Input: {bad json}", ("get_weather", "{bad json}")),
        (
            '<think>Action: abstain\nAction Input: {}</think>Action: get_weather\nAction Input: {"a": 1}',
            ("get_weather", {"a": 1}),
        ),
    ],
)
def test_parse_rules_actions(text, expected):
    assert parse_react(text) == ("action", expected)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Thought: I know.\nFinal Answer: 37 C on 2024-04-18.", ("final_answer", "37 C on 2024-04-18.")),
        ("Thought: none needed\nAction: None\nFinal Answer: 42", ("final_answer", "42")),
        ("Final Answer: first\nFinal Answer: second", ("final_answer", "second")),
        ("Final Answer:", ("none", None)),
        ("The weather is fine. I think the final answer is 3.", ("none", None)),
        ("", ("none", None)),
        ("<think>Final Answer: 1</think>", ("none", None)),
    ],
)
def test_parse_rules_answers_and_neither(text, expected):
    assert parse_react(text) == expected


def test_a_message_dict_is_read_by_its_text():
    env, task, _, _ = _make("AgentProp-Weather-v0")
    call = task.gold[0]
    message = {"role": "assistant", "content": [{"type": "text", "text": _react(call.name, call.arguments)}]}
    _, _, _, _, info = env.step(message)
    trace = env.unwrapped.trace
    assert trace.calls[0].arguments == call.arguments
    assert json.loads(trace.steps[0].raw) == message
    assert info["messages"][0] == {"role": "assistant", "content": _react(call.name, call.arguments)}


def test_openai_chat_agent_plays_react_over_loopback(say_server):
    from tooltrap.agents.llm import OpenAIChatAgent

    env = ReActFormat(gym.make("AgentProp-Weather-v0"))
    task = _task(env)
    observation, info = env.reset(seed=0, options={"task_id": task.id})
    call, text = task.gold[0], next(iter(task.gold[-1].arguments.values()))
    replies = [_react(call.name, call.arguments), f"Thought: done.\nFinal Answer: {text}"]
    agent = OpenAIChatAgent(f"say:{replies[0]}", base_url=say_server, max_retries=0)
    agent.reset(observation, info)
    assert "tools" not in agent.request(agent.messages, agent.tools)  # no native tool schemas sent
    for reply in replies:
        agent.model = f"say:{reply}"
        action = agent.act(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
    sent = agent.messages
    assert sent[-2:] == [
        {"role": "assistant", "content": replies[0]},
        {"role": "user", "content": f"Observation: {env.unwrapped.trace.steps[0].observation}"},
    ]
    assert terminated and info["verdict"]["correct"]
    assert env.unwrapped.trace.calls[0].arguments == call.arguments
