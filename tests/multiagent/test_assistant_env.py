"""The dialogue's assistant as a registered Gymnasium env (``SABench-Dialogue-v0``): the single-agent machinery
(the gold agent, demonstrations, TRL's ``environment_factory`` and ``rollout_func`` adapters, the SFT and GRPO
entry points) runs on it unchanged, with the scripted user answering inside."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import tooltrap
from tooltrap.envs.core import EnvUsageError, UnknownNameError, abort_episode
from tooltrap.envs.multiagent import ROLE_ENV_IDS, role_env
from tooltrap.envs.multiagent.single_role import AssistantEnv

from .conftest import RESPOND, call

ENV_ID = "SABench-Dialogue-v0"


def _ambiguous_task(env: gym.Env) -> str:
    return next(t.id for t in env.unwrapped.tasks if t.labels.ambiguous)


def test_registered_as_a_gymnasium_id_whose_unwrapped_is_the_tool_env():
    assert set(ROLE_ENV_IDS) <= set(gym.registry) and ENV_ID in ROLE_ENV_IDS
    assert ENV_ID not in tooltrap.ENV_IDS  # the benchmarks' ids stay the benchmarks'
    env = gym.make(ENV_ID, ambiguous=True)
    stack = str(env)
    assert "AssistantEnv" in stack and "ToolEnv" in stack  # the role view shows in the wrapper stack
    assert env.unwrapped is env.get_wrapper_attr("multiagent").inner
    assert len(env.unwrapped.tasks) == 45


def test_a_question_is_answered_inside_and_the_gold_dialogue_meets_the_goal():
    env = gym.make(ENV_ID)
    task_id = _ambiguous_task(env)
    observation, info = env.reset(seed=0, options={"task_id": task_id})
    assert "I meant" not in observation
    task = env.unwrapped.task
    gold = task.gold_for(env.unwrapped.episode_variant)
    assert gold[0].name == "clarify" and gold[-1].name == "respond" and len(gold) > 2
    observation, reward, terminated, truncated, info = env.step(gold[0].to_action())
    assert not (terminated or truncated) and reward == 0.0
    assert "I meant" in observation  # the scripted user's answer, after the tool result
    assert info["messages"][-1]["role"] == "user"
    for call_ in gold[1:]:
        observation, reward, terminated, truncated, info = env.step(call_.to_action())
    assert terminated and reward == 1.0
    assert info["verdict"]["goal_after_clarification"] and not info["verdict"]["cd"]
    assert info["termination_reason"] == "assistant_stop" and info["rewards"]["user"] == 1.0


def test_writing_before_asking_is_an_ambiguity_violation_through_the_view():
    env = gym.make(ENV_ID)
    env.reset(seed=0, options={"task_id": _ambiguous_task(env)})
    task = env.unwrapped.task
    for call_ in task.intent_calls():
        env.step(call_.to_action())
    *_, terminated, _, info = env.step(RESPOND)
    assert terminated and info["verdict"]["ab_violation"]
    assert info["reward_components"]["ambiguity_violation"] < 0


def test_abort_through_the_wrapper_stack_judges_the_episode_and_ends_the_dialogue():
    env = gym.make(ENV_ID)
    env.reset(seed=0, options={"task_id": _ambiguous_task(env)})
    final = abort_episode(env, "no_terminal_call")
    assert "reward_components" in final and final["verdict"]["goal"] is False
    with pytest.raises(EnvUsageError):
        env.step(RESPOND)
    env.reset(seed=0, options={"task_index": 0})  # a new episode starts cleanly


def test_another_user_policy_by_keyword_and_misuse_is_typed():
    replies: list[str] = []

    def user(observation: str, info: dict) -> str:
        replies.append(observation)
        return "###STOP###"

    env = gym.make(ENV_ID, user=user)
    env.reset(seed=0, options={"task_id": _ambiguous_task(env)})
    *_, terminated, _, info = env.step(call("clarify", question="Which one?"))
    assert terminated and info["termination_reason"] == "user_stop" and replies
    with pytest.raises(UnknownNameError):
        role_env("sabench_dialogue", "assistant")
    with pytest.raises(EnvUsageError, match="no single-agent env of the role"):
        role_env("sabench_dialogue_v0", "user")


def test_the_arena_has_no_fixed_tool_env_and_says_what_to_use():
    from tooltrap.envs.multiagent import sentry_arena_v0

    with pytest.raises(EnvUsageError, match="SingleRoleEnv"):
        AssistantEnv(sentry_arena_v0.parallel_env(), {"attacker": None, "gate": None})


def test_gold_agent_and_demonstrations_play_the_whole_dialogue():
    from tooltrap.training.data import gold_rows

    rows = gold_rows(ENV_ID, env_kwargs={"ambiguous": True})
    assert len(rows) == 45  # every ambiguous task: a clean demonstration (goal, no CD, no invalid call)
    for row in rows:
        roles = [m["role"] for m in row["messages"]]
        asked = next(
            i for i, m in enumerate(row["messages"]) if m.get("tool_calls") and _name(m) == "clarify"
        )
        answered = roles.index("user", 2)  # the first user message after the request
        assert answered > asked  # the answer comes after the question
        writes = [i for i, m in enumerate(row["messages"]) if m.get("tool_calls") and _name(m) != "clarify"]
        assert all(i > answered for i in writes)
        text = json.dumps(row["messages"])
        assert (
            "You asked your assistant" not in text
            and "By that you meant" not in text
            and "###STOP###" not in text
        )  # the user's briefing never shows


def _name(message: dict) -> str:
    return message["tool_calls"][0]["function"]["name"]


def test_trl_environment_class_asks_the_user_through_the_tool_method():
    pytest.importorskip("trl")
    from tooltrap.training import environment_class, judge_rollout

    env_class = environment_class(ENV_ID, env_kwargs={"ambiguous": True})
    environment = env_class()
    probe = gym.make(ENV_ID, ambiguous=True)
    task_id = _ambiguous_task(probe)
    environment.reset(task_id=task_id, seed=0)
    answer = environment.clarify(question="Which one did you mean?")
    assert "I meant" in answer
    task = environment.env.unwrapped.task
    for call_ in task.gold_for(environment.env.unwrapped.episode_variant)[1:-1]:
        getattr(environment, call_.name)(**call_.arguments)
    judged = judge_rollout(environment, "Done.")
    assert judged["reward"] == 1.0 and judged["verdict"]["goal_after_clarification"]


@pytest.mark.slow
def test_sft_and_grpo_entry_points_train_the_assistant_on_the_tiny_model(tiny_model, tmp_path):
    pytest.importorskip("trl")
    from tooltrap.training.grpo import cli as grpo
    from tooltrap.training.sft import cli as sft

    probe = gym.make(ENV_ID, ambiguous=True)
    picked = ",".join(t.id for t in list(probe.unwrapped.tasks)[:2])
    common = ["--env_id", ENV_ID, "--split", "all", "--toolset", "target", "--tasks", picked, "--bf16", "false",
              "--report_to", "none", "--save_strategy", "no", "--logging_steps", "1", "--max_steps", "1",
              "--dataloader_pin_memory", "false"]  # fmt: skip
    trainer = sft(
        ["--model_name_or_path", str(tiny_model), "--output_dir", str(tmp_path / "sft"),
         "--per_device_train_batch_size", "2", "--max_length", "8192", *common]
    )  # fmt: skip
    assert trainer.state.global_step == 1 and (tmp_path / "sft" / "config.json").exists()
    trainer = grpo(
        ["--model_name_or_path", str(tmp_path / "sft"), "--output_dir", str(tmp_path / "grpo"),
         "--rollout", "rollout_func", "--per_device_train_batch_size", "2", "--num_generations", "2",
         "--max_completion_length", "48", "--use_vllm", "false", *common]
    )  # fmt: skip
    logs = [h for h in trainer.state.log_history if "reward" in h]
    assert logs and all("rewards/ambiguity_violation/mean" in h for h in logs)
