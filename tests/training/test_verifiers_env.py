"""The verifiers environment (training/verifiers_env.py) run through the real ``verifiers`` package: each
rollout goes through verifiers' env, agent, rollout, interception server and eval client to the loopback
model server (tests/llm_server.py), whose scripted replies are the calls of a policy played in-process on
the same task. The rollout's reward must be the in-process env's reward for the same calls."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import gymnasium as gym
import pytest

vf = pytest.importorskip("verifiers.v1", reason="the verifiers extra is not installed")
pytest.importorskip("fastapi", reason="the loopback model server needs fastapi (the server extra)")

from tooltrap.agents.scripted import ActFirstAgent  # noqa: E402
from tooltrap.envs.core import EnvUsageError, UnknownNameError, abort_episode  # noqa: E402
from tooltrap.envs.packages import ENV_IDS  # noqa: E402
from tooltrap.training.verifiers_env import TooltrapTaskset, load_environment  # noqa: E402

from ..llm_server import scripted_model  # noqa: E402

#: one env id of each benchmark, the tasks played of each
BENCHMARK_ENVS = (
    "SABench-Calendar-v0",
    "EpiSEM-Finance-v0",
    "SentryBench-Dispatch-v0",
    "AgentProp-Weather-v0",
)
TASKS_PER_ENV = 2


def _tagged(action: str) -> str:
    """An env action (one call's JSON) as a model writes it in Hermes tags; the server turns it into
    OpenAI ``tool_calls``."""
    return f"<tool_call>\n{action}\n</tool_call>"


def _play_in_process(env_id: str, task_id: str, actions: list[str]) -> dict[str, Any]:
    """The env's own judgment of ``actions`` on the task (one action per step, as the rollout sends one
    per turn); an episode still open after them is judged as it stands."""
    env = gym.make(env_id)
    env.reset(seed=0, options={"task_id": task_id})
    final: dict[str, Any] | None = None
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            final = info
            break
    if final is None:
        final = abort_episode(env, "no_terminal_call")
    env.close()
    return {
        "reward": float(sum(final["reward_components"].values())),
        "components": final["reward_components"],
    }


def _gold_actions(env_id: str, task_id: str) -> list[str]:
    """The task's gold calls for its episode (privileged: the test scripts the model with them)."""
    env = gym.make(env_id)
    env.reset(seed=0, options={"task_id": task_id})
    base = env.unwrapped
    actions = [call.to_action() for call in base.task.gold_for(base.episode_variant)]
    env.close()
    return actions


def _act_first_actions(env_id: str, task_id: str) -> list[str]:
    """The act-first baseline's actions on the task, played in-process until the episode ends."""
    env = gym.make(env_id)
    observation, info = env.reset(seed=0, options={"task_id": task_id})
    agent = ActFirstAgent()
    agent.reset(observation, info, task=env.unwrapped.task)
    actions = []
    for _ in range(32):
        action = agent.act(observation, info)
        actions.append(action)
        observation, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    env.close()
    return actions


def _rollouts(env: Any, plays: list[tuple[Any, str]], base_url: str) -> list[Any]:
    """Run each (task, model name) through verifiers' env (serving, run_slot) and return the traces."""
    from verifiers.v1.env import RunSlot

    async def main() -> list[Any]:
        async with env.serving():
            episodes = [
                await env.run_slot(
                    RunSlot(task), vf.ModelContext(model=model, client=vf.EvalClientConfig(base_url=base_url))
                )
                for task, model in plays
            ]
        return [e.traces[0] for e in episodes]

    return asyncio.run(main())


def _tasks(env: Any, n: int | None = None) -> list[Any]:
    tasks = list(env.taskset)
    return tasks if n is None else tasks[:n]


@pytest.mark.parametrize("env_id", BENCHMARK_ENVS)
def test_gold_rollouts_score_the_envs_gold_reward_with_components_as_metrics(env_id, llm_server):
    env = load_environment(env_id)
    tasks = _tasks(env, TASKS_PER_ENV)
    scripts = [_gold_actions(env_id, t.data.task_id) for t in tasks]
    traces = _rollouts(
        env, [(t, scripted_model(*map(_tagged, s))) for t, s in zip(tasks, scripts, strict=True)], llm_server
    )
    for task, script, trace in zip(tasks, scripts, traces, strict=True):
        expected = _play_in_process(env_id, task.data.task_id, script)
        assert trace.ok, trace.errors
        assert trace.stop_condition == "agent_completed"
        assert trace.rewards["reward"].score == pytest.approx(expected["reward"])
        assert trace.rewards["reward"].weight == 1.0
        assert trace.reward == pytest.approx(expected["reward"])
        # every component is a metric (recorded, never summed into the reward)
        assert trace.metrics == pytest.approx({k: float(v) for k, v in expected["components"].items()})
        assert set(trace.rewards) == {"reward"}
        # the gold episode meets the goal: the judge's verdict travels on the trace, not to the model
        assert trace.info["tooltrap"]["verdict"]["goal"]
        # one model turn per gold call, each answered by the env (all but the terminal one)
        assert trace.num_turns == len(script)


def test_an_act_first_model_scores_lower_than_gold_on_a_trap_task(llm_server):
    env_id = "SABench-Calendar-v0"
    env = load_environment(env_id)
    for task in _tasks(env):
        gold = _gold_actions(env_id, task.data.task_id)
        act_first = _act_first_actions(env_id, task.data.task_id)
        if (
            _play_in_process(env_id, task.data.task_id, act_first)["reward"]
            < _play_in_process(env_id, task.data.task_id, gold)["reward"]
        ):
            break
    else:
        pytest.fail(f"no task of {env_id} where act-first scores below gold in-process")
    gold_trace, act_first_trace = _rollouts(
        env,
        [(task, scripted_model(*map(_tagged, gold))), (task, scripted_model(*map(_tagged, act_first)))],
        llm_server,
    )
    assert act_first_trace.ok and gold_trace.ok
    assert act_first_trace.reward < gold_trace.reward
    assert act_first_trace.reward == pytest.approx(
        _play_in_process(env_id, task.data.task_id, act_first)["reward"]
    )


@pytest.mark.parametrize(
    "broken",
    [
        '<tool_call>\n{"name": "respond", "arguments": {"text": \n</tool_call>',  # text, no call parses
        _tagged(json.dumps({"name": "respond", "arguments": {"text": "x" * 40_000}})),  # a call past the cap
    ],
    ids=["unparseable", "oversized"],
)
def test_a_malformed_tool_call_is_an_invalid_call_the_judge_charges(broken, llm_server):
    env_id = "SABench-Calendar-v0"
    env = load_environment(env_id)
    task = _tasks(env, 1)[0]
    gold = _gold_actions(env_id, task.data.task_id)
    clean, charged = _rollouts(
        env,
        [(task, scripted_model(*map(_tagged, gold))), (task, scripted_model(broken, *map(_tagged, gold)))],
        llm_server,
    )
    assert charged.ok
    assert charged.metrics["invalid_calls"] < 0 == clean.metrics["invalid_calls"]
    assert charged.reward < clean.reward
    assert charged.info["tooltrap"]["verdict"]["n_invalid_calls"] == 1
    # the model saw the env's parse error and went on: the malformed turn, then every gold call
    assert charged.num_turns == len(gold) + 1
    assert charged.reward == pytest.approx(
        _play_in_process(env_id, task.data.task_id, [broken, *gold])["reward"]
    )


def test_a_rollout_without_a_terminal_call_is_judged_as_it_stands(llm_server):
    env_id = "SABench-Calendar-v0"
    env = load_environment(env_id, max_turns=2)
    task = _tasks(env, 1)[0]
    probe = gym.make(env_id)
    probe.reset(seed=0, options={"task_id": task.data.task_id})
    # a read that needs no argument: a valid call that never ends the episode
    read = next(
        name
        for name, spec in probe.unwrapped.executor.toolset.specs.items()
        if spec.kind == "read" and not any(f.is_required() for f in spec.validator.model_fields.values())
    )
    probe.close()
    look = json.dumps({"name": read, "arguments": {}})
    (trace,) = _rollouts(env, [(task, scripted_model(_tagged(look)))], llm_server)
    assert trace.ok
    assert trace.num_turns == 2
    expected = _play_in_process(env_id, task.data.task_id, [look, look])
    assert trace.reward == pytest.approx(expected["reward"])
    assert trace.metrics["no_answer"] < 0
    assert trace.metrics["no_answer"] == pytest.approx(expected["components"]["no_answer"])


def test_plain_text_is_the_final_answer(llm_server):
    env_id = "SABench-Calendar-v0"
    env = load_environment(env_id)
    task = _tasks(env, 1)[0]
    (trace,) = _rollouts(env, [(task, "say:All done.")], llm_server)
    assert trace.ok and trace.num_turns == 1
    assert trace.metrics["no_answer"] == 0.0  # the text went to the answer tool: the episode ended on it
    probe = gym.make(env_id)
    _, info = probe.reset(seed=0, options={"task_id": task.data.task_id})
    probe.close()
    from tooltrap.wrappers.formats import answer_tool, parse_completion

    answered = parse_completion("All done.", answer=answer_tool(info))
    assert trace.reward == pytest.approx(_play_in_process(env_id, task.data.task_id, [answered])["reward"])


def test_a_provider_failure_is_recorded_apart_and_not_judged(llm_server):
    env = load_environment("SABench-Calendar-v0")
    task = _tasks(env, 1)[0]
    (trace,) = _rollouts(env, [(task, "flaky-99+say:never")], llm_server)
    assert not trace.ok
    assert trace.errors[-1].type == "ProviderError"
    assert trace.errors[-1].status_code == 503
    assert trace.rewards.get("reward") is None and "tooltrap" not in trace.info


def test_the_prompt_is_the_envs_and_carries_no_privileged_field():
    env = load_environment("SABench-Calendar-v0", tasks="cal-*")
    task = _tasks(env, 1)[0]
    probe = gym.make("SABench-Calendar-v0")
    _, info = probe.reset(seed=0, options={"task_id": task.data.task_id})
    probe.close()
    assert [m.model_dump(exclude_none=True) for m in task.data.prompt] == info["messages"]
    assert task.data.tools == info["tools"]
    shown = json.dumps(task.data.model_dump(mode="json"))
    for privileged in ("variant", "gold", "world"):
        assert f'"{privileged}' not in shown


def test_every_registered_env_id_loads():
    from tooltrap.envs.multiagent import ROLE_ENV_IDS

    for env_id in [*ENV_IDS, *ROLE_ENV_IDS]:
        env = load_environment(env_id, tasks=None)
        assert isinstance(env.taskset, TooltrapTaskset)
        assert env.taskset.rows(), env_id


def test_misuse_raises_typed_errors():
    with pytest.raises(UnknownNameError, match="SABench-Calendar-v0"):
        load_environment("SABench-Calender-v0")
    with pytest.raises(EnvUsageError, match="max_turns"):
        load_environment("SABench-Calendar-v0", max_turns=0)
    with pytest.raises(UnknownNameError):
        load_environment("SABench-Calendar-v0", tasks="no-such-task-*")
    with pytest.raises(EnvUsageError, match="split"):
        load_environment("EpiSEM-Finance-v0", split="test")
