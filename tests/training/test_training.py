"""Training with TRL on the tiny offline model: SFT on gold demonstrations, GRPO through the
environment_factory adapter (tool calls executed against the env, the oracle's reward reaching the
trainer), GRPO through the rollout_func path, and evaluation of the saved checkpoint."""

from __future__ import annotations

import inspect
import json
import math
import os
from pathlib import Path

import pytest

from scripts.check_demonstrations import DEMO_SETTINGS, check_demonstrations

from ..conftest import MINI_ENV_KWARGS

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[2]


def _grpo_config(out, **overrides):
    from trl import GRPOConfig

    base = dict(
        output_dir=str(out), max_steps=2, learning_rate=1e-4, per_device_train_batch_size=2, num_generations=2,
        max_completion_length=64, max_tool_calling_iterations=2, use_vllm=False, bf16=False, logging_steps=1,
        save_strategy="no", report_to="none", log_completions=False, dataloader_pin_memory=False, seed=0, temperature=0.3,
    )  # fmt: skip
    base.update(overrides)
    return GRPOConfig(**base)


def test_dataset_builders(mini_tasks):
    from tooltrap.training import gold_rows, task_rows

    kwargs = {"tasks_file": str(mini_tasks), **MINI_ENV_KWARGS}
    prompts = task_rows("SABench-v0", env_kwargs=kwargs)
    assert len(prompts) == 5 and {"prompt", "tools", "task_id", "env_id"} <= set(prompts[0])
    assert [m["role"] for m in prompts[0]["prompt"]] == ["system", "user"]
    gold = gold_rows("SABench-v0", env_kwargs=kwargs)
    roles = [m["role"] for m in gold[0]["messages"]]
    assert roles == ["system", "user", *["assistant", "tool"] * 3]
    calls = [m["tool_calls"][0]["function"] for m in gold[0]["messages"] if m["role"] == "assistant"]
    # tools_only: the occurrence is looked up by the title the user names, then cancelled, then answered
    assert [c["name"] for c in calls] == ["calendar_list_events", "calendar_cancel_event", "respond"]
    assert set(calls[0]["arguments"]) == {"query"} and calls[1]["arguments"]["scope"] == "occurrence"
    assert {t["function"]["name"] for t in json.loads(gold[0]["tools"])} == {
        "calendar_list_events",
        "calendar_cancel_event",
        "respond",
        "clarify",
    }


def test_environment_class_exposes_real_tool_signatures(mini_tasks):
    from transformers.utils import get_json_schema

    from tooltrap.training import environment_class, judge_rollout

    env_class = environment_class("SABench-v0", env_kwargs={"tasks_file": str(mini_tasks), **MINI_ENV_KWARGS})
    names = {
        n
        for n, _ in inspect.getmembers(env_class, predicate=inspect.isfunction)
        if not n.startswith("_") and n not in ("reset", "get_reward")
    }
    assert names == {"calendar_list_events", "calendar_cancel_event", "respond", "clarify"}
    # TRL renders the methods; the text must be byte-identical to the schemas of the training rows
    # (the transformers dialect: transformers cannot write the declared bounds)
    from tooltrap.training import task_rows

    rows = task_rows("SABench-v0", env_kwargs={"tasks_file": str(mini_tasks), **MINI_ENV_KWARGS})
    ours = {s["function"]["name"]: s for s in json.loads(rows[0]["tools"])}
    for name in names:
        assert json.dumps(get_json_schema(getattr(env_class, name))) == json.dumps(ours[name]), name
    assert list(ours) == sorted(ours)  # the order TRL lists methods in
    base = env_class().env.unwrapped
    base.reset(seed=0)
    full = {s["function"]["name"]: s for s in base.tool_schemas}
    assert (
        full["calendar_cancel_event"]["function"]["parameters"]["properties"]["event_id"]["maxLength"] == 200
    )
    schema = get_json_schema(env_class.calendar_cancel_event)["function"]
    assert schema["parameters"]["required"] == ["event_id"]
    assert schema["parameters"]["properties"]["scope"]["enum"] == ["occurrence", "series"]
    env = env_class()
    task = env.env.unwrapped.tasks[0]
    env.reset(task_id=task.id, prompt=[])
    gold = task.gold[0]
    assert json.loads(env.calendar_cancel_event(**gold.arguments))["ok"]
    assert json.loads(env.calendar_cancel_event(event_id="missing"))["error"]["type"] == "tool_error"
    env.respond(message="done")
    assert judge_rollout(env)["reward"] == pytest.approx(1.0 - 0.05)  # goal, minus the one invalid call
    assert env.reward_components["goal"] == 1.0
    env.reset(task_id=task.id)
    assert judge_rollout(env)["reward"] == pytest.approx(-0.5)  # no terminal call: no_answer


def test_sft_two_steps_on_gold_demonstrations_from_a_yaml_config_with_lora(tiny_model, mini_tasks, tmp_path):
    from tooltrap.training.sft import cli

    out = tmp_path / "sft"
    config = tmp_path / "sft.yaml"
    config.write_text(
        "\n".join(
            [
                f"model_name_or_path: {tiny_model}",
                "env_id: SABench-v0",
                f"tasks_file: {mini_tasks}",
                "split: all",
                "state_format: tools_only",
                f"output_dir: {out}",
                "max_steps: 2",
                "per_device_train_batch_size: 2",
                "learning_rate: 1.0e-3",
                "bf16: false",
                "report_to: none",
                'save_strategy: "no"',
                "max_length: 4096",
                "assistant_only_loss: true",
                "dataloader_pin_memory: false",
                "logging_steps: 1",
                "use_peft: true",
                "lora_r: 4",
                "lora_alpha: 8",
                "lora_target_modules: all-linear",
            ]
        )
    )
    trainer = cli(["--config", str(config)])
    assert trainer.state.global_step == 2
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert losses and all(math.isfinite(x) for x in losses)
    # LoRA adapters are merged: the checkpoint is a plain model that loads without peft
    assert (out / "config.json").exists() and not (out / "adapter_config.json").exists()
    from transformers import AutoModelForCausalLM

    AutoModelForCausalLM.from_pretrained(out)


def test_grpo_environment_factory_executes_tools_and_reward_reaches_trainer(
    tool_calling_model, mini_tasks, tmp_path
):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOTrainer

    from tooltrap.training import component_rewards, environment_class, environment_reward, task_rows

    kwargs = {"tasks_file": str(mini_tasks), **MINI_ENV_KWARGS}
    base = environment_class("SABench-v0", env_kwargs=kwargs)
    executed: list[str] = []
    rewards: list[float] = []

    class Tracked(base):  # type: ignore[misc, valid-type]
        def _call(self, name, arguments):
            executed.append(name)
            return super()._call(name, arguments)

        def _finish(self, final_turn=None):
            first = self._final is None
            judged = super()._finish(final_turn)
            if first:
                rewards.append(judged["reward"])
            return judged

    rows = task_rows("SABench-v0", env_kwargs=kwargs)
    dataset = Dataset.from_list([{"prompt": r["prompt"], "task_id": r["task_id"]} for r in rows[:4]])
    loggers = component_rewards(Tracked)
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(tool_calling_model),
        processing_class=AutoTokenizer.from_pretrained(tool_calling_model),
        reward_funcs=[environment_reward, *loggers],
        args=_grpo_config(tmp_path / "grpo", reward_weights=[1.0] + [0.0] * len(loggers)),
        train_dataset=dataset,
        environment_factory=Tracked,
    )
    trainer.train()
    assert executed, "no tool call reached the env"
    assert rewards and all(math.isfinite(r) for r in rewards)
    logs = [h for h in trainer.state.log_history if "reward" in h]
    assert logs and any(h.get("tools/call_frequency", 0) > 0 for h in logs)
    assert all("rewards/environment_reward/mean" in h and "rewards/goal/mean" in h for h in logs)
    logged = [h["rewards/environment_reward/mean"] for h in logs]
    assert sum(logged) / len(logged) == pytest.approx(
        sum(rewards) / len(rewards), abs=1e-4
    )  # the oracle's reward


def _multi_environment_run(model, factories, rows, out):
    """One GRPO step with TRL picking each row's environment from its ``environment`` column (one
    prompt per environment, two generations each); returns the trainer."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOTrainer

    from tooltrap.training import component_rewards, environment_reward

    dataset = Dataset.from_list(
        [{"prompt": r["prompt"], "task_id": r["task_id"], "environment": r["environment"]} for r in rows]
    )
    loggers = component_rewards(factories)
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model),
        processing_class=AutoTokenizer.from_pretrained(model),
        reward_funcs=[environment_reward, *loggers],
        args=_grpo_config(
            out,
            max_steps=1,
            per_device_train_batch_size=2 * len(rows),
            reward_weights=[1.0] + [0.0] * len(loggers),
        ),
        train_dataset=dataset,
        environment_factory=factories,
    )
    trainer.train()
    return trainer


def test_mixed_datasets_weights_and_one_class_per_toolset(mini_mix):
    from tooltrap.envs.core import EnvUsageError
    from tooltrap.training import EnvMix, environment_class, environment_factories, gold_rows, task_rows

    rows = task_rows(mini_mix)
    assert [r["environment"] for r in rows] == [r["env_id"] for r in rows]  # one toolset per env id
    assert {r["env_id"] for r in rows} == {m.env_id for m in mini_mix}
    weighted = task_rows(
        [
            EnvMix(m.env_id, weight=w, env_kwargs=m.env_kwargs)
            for m, w in zip(mini_mix, (1, 2, 1), strict=True)
        ],
        n_rows=40,
        seed=3,
    )
    counts = {m.env_id: sum(r["env_id"] == m.env_id for r in weighted) for m in mini_mix}
    assert list(counts.values()) == [10, 20, 10]
    assert weighted == task_rows(
        [
            EnvMix(m.env_id, weight=w, env_kwargs=m.env_kwargs)
            for m, w in zip(mini_mix, (1, 2, 1), strict=True)
        ],
        n_rows=40,
        seed=3,
    )  # seeded
    assert {r["environment"] for r in gold_rows(mini_mix)} == {m.env_id for m in mini_mix}
    # SABench-v0 with the target toolset: every system has its own tools, so TRL needs one class each
    with pytest.raises(EnvUsageError, match="3 different toolsets"):
        environment_class("SABench-v0", env_kwargs={"toolset": "target", "state_format": "tools_only"})
    factories = environment_factories(
        "SABench-v0", env_kwargs={"toolset": "target", "state_format": "tools_only"}
    )
    assert sorted(factories) == ["SABench-v0#0", "SABench-v0#1", "SABench-v0#2"]
    rows = task_rows("SABench-v0", env_kwargs={"toolset": "target", "state_format": "tools_only"})
    for row in rows[::20]:
        env = factories[row["environment"]]()
        env.reset(**row)  # the row's class has the row's tools
        assert {t["function"]["name"] for t in json.loads(row["tools"])} == set(type(env).toolset)


def test_one_grpo_run_over_three_environments(tool_calling_model, mini_mix, tmp_path):
    from tooltrap.training import environment_factories, task_rows

    resets: dict[str, int] = {}

    def tracked(name, cls):
        class Tracked(cls):  # type: ignore[misc, valid-type]
            def reset(self, **row):
                resets[name] = resets.get(name, 0) + 1
                return super().reset(**row)

        Tracked.__name__ = cls.__name__
        return Tracked

    factories = {name: tracked(name, cls) for name, cls in environment_factories(mini_mix).items()}
    assert len(factories) == 3
    rows = task_rows(mini_mix)
    first = {}
    for r in rows:
        first.setdefault(r["environment"], r)
    trainer = _multi_environment_run(
        tool_calling_model, factories, list(first.values()), tmp_path / "grpo-mix"
    )
    assert set(resets) == set(factories) and all(n >= 2 for n in resets.values())  # two generations each
    logs = [h for h in trainer.state.log_history if "reward" in h]
    assert logs
    assert "rewards/environment_reward/mean" in logs[0]
    assert "rewards/goal/mean" in logs[0] and "rewards/collateral_external/mean" in logs[0]


def test_one_grpo_run_over_two_benchmarks_logs_the_union_of_their_components(
    tool_calling_model, mini_mix, tmp_path
):
    from tooltrap.training import EnvMix, component_rewards, environment_factories, task_rows

    mix = [mini_mix[0], EnvMix("tests.toybench:ToyLibrary-v0", name="toy")]
    factories = environment_factories(mix)
    rows = task_rows(mix)
    picked = {r["environment"]: r for r in rows}
    names = [f.__name__ for f in component_rewards(factories)]
    assert "collateral_internal" in names and "unsafe_commit" in names and names.count("goal") == 1
    trainer = _multi_environment_run(
        tool_calling_model, factories, list(picked.values()), tmp_path / "grpo-two"
    )
    (log,) = [h for h in trainer.state.log_history if "reward" in h]
    assert "rewards/environment_reward/mean" in log
    # a component only one benchmark reports is averaged over that benchmark's rollouts only
    assert "rewards/unsafe_commit/mean" in log and "rewards/ambiguity_violation/mean" in log


def test_grpo_entry_point_with_rollout_func_then_eval_checkpoint(tool_calling_model, mini_tasks, tmp_path):
    from tooltrap.cli import main as tooltrap_main
    from tooltrap.training.grpo import cli

    out = tmp_path / "grpo-rollout"
    trainer = cli(
        [
            "--model_name_or_path", str(tool_calling_model), "--env_id", "SABench-v0", "--tasks_file", str(mini_tasks),
            "--split", "all", "--state_format", "tools_only", "--rollout", "rollout_func", "--output_dir", str(out),
            "--max_steps", "2", "--per_device_train_batch_size", "2", "--num_generations", "2", "--max_completion_length", "96",
            "--bf16", "false", "--report_to", "none", "--save_strategy", "no", "--logging_steps", "1", "--use_vllm", "false",
            "--dataloader_pin_memory", "false",
        ]
    )  # fmt: skip
    logs = [h for h in trainer.state.log_history if "reward" in h]
    assert logs and all(
        "rewards/env_reward/mean" in h and "rewards/collateral_internal/mean" in h for h in logs
    )
    assert (out / "config.json").exists()
    # the saved checkpoint is evaluated with the same command as any agent
    run = tmp_path / "eval"
    code = tooltrap_main(
        ["eval", "SABench-v0", "--agent", f"hf:{out}", "--env-arg", f"tasks_file={mini_tasks}", "--env-arg", "state_format=tools_only",
         "--out", str(run), "--concurrency", "5", "--resamples", "200", "--quiet"]
    )  # fmt: skip
    assert code == 0
    records = [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 5 and all(r["verdict"]["task_id"] == r["task_id"] for r in records)
    assert json.loads((run / "run.json").read_text())["agent"]["name"] == f"hf:{out}"


def test_environment_factory_refuses_the_compact_tool_template_naming_rollout_func(
    tool_calling_model, mini_tasks, tmp_path
):
    """TRL's environment_factory parses calls only under chat templates it knows by their text; a model
    with the compact tool template (``smollm2-compact``) gets a typed error naming the path that works."""
    import shutil

    from transformers import AutoTokenizer

    from tooltrap.agents.pretrained import compact_tool_template
    from tooltrap.envs.core import EnvUsageError
    from tooltrap.training.grpo import cli

    model = tmp_path / "compact"
    shutil.copytree(tool_calling_model, model)
    tok = AutoTokenizer.from_pretrained(model)
    tok.chat_template = compact_tool_template()
    tok.save_pretrained(model)
    with pytest.raises(EnvUsageError, match=r"--rollout rollout_func"):
        cli(
            [
                "--model_name_or_path", str(model), "--env_id", "SABench-v0", "--tasks_file", str(mini_tasks),
                "--split", "all", "--state_format", "tools_only", "--rollout", "environment_factory",
                "--output_dir", str(tmp_path / "out"), "--max_steps", "1", "--per_device_train_batch_size", "2",
                "--num_generations", "2", "--bf16", "false", "--report_to", "none", "--use_vllm", "false",
            ]
        )  # fmt: skip


#: a sample of scripts/check_demonstrations.py's settings (CI checks all six once): tools_only over the
#: whole benchmark (look-ups before writes) and one target system's own toolset
DEMO_SAMPLE = [DEMO_SETTINGS[2], DEMO_SETTINGS[4]]


@pytest.mark.parametrize(("env_id", "kwargs"), DEMO_SAMPLE)
def test_every_demonstration_survives_datasets_and_is_the_envs_own_episode(tiny_model, env_id, kwargs):
    """Every gold demonstration of the env id, tokenized through ``datasets``, is token for token the
    chat-template rendering of the messages the env itself produces when its calls are replayed; it
    reaches the goal with no invalid call and nothing unauthorized; under tools_only it looks ids up
    before using them, with the task's tools only, and reads a record before its text names it
    (scripts/check_demonstrations.py)."""
    from transformers import AutoTokenizer

    out = check_demonstrations(env_id, kwargs, AutoTokenizer.from_pretrained(tiny_model))
    assert out["rows"] > 60 and out["looked_up"] > 10
    # nothing a question or an answer states comes before a message has shown it (a title, a subject);
    # with one system's tools only, a cross-system title cannot be read (CI prints the count per setting)
    if kwargs.get("toolset") != "target":
        assert out["unshown"] == 0


def test_a_demonstration_that_states_what_no_message_showed_is_counted():
    """``_states_unshown``: a record's title in an assistant turn before any message showed it is
    listed; once a tool result has shown it, stating it is fine."""
    from types import SimpleNamespace

    from scripts.check_demonstrations import _states_unshown

    title = "Migrate CI runners to ARM"
    task = SimpleNamespace(
        initial_state=SimpleNamespace(collections={"tickets": {"TKT-1": {"id": "TKT-1", "title": title}}})
    )
    answer = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "respond", "arguments": {"message": f"TKT-1 ({title}) done."}}}],
    }
    user = {"role": "user", "content": "Mark TKT-1 as in progress."}
    read = {"role": "tool", "content": json.dumps({"result": {"id": "TKT-1", "title": title}})}
    assert _states_unshown(task, [user, answer]) == [title]
    assert _states_unshown(task, [user, read, answer]) == []


def test_chat_messages_through_arrow_would_gain_null_arguments():
    """Why SFT rows are tokenized before ``datasets``: Arrow merges the argument dicts of all tool calls."""
    from datasets import Dataset

    def row(name, args):
        call = {"type": "function", "function": {"name": name, "arguments": args}}
        return {"messages": [{"role": "assistant", "content": "", "tool_calls": [call]}]}

    back = Dataset.from_list([row("a", {"event_id": "e1"}), row("b", {"question": "q"})])[0]
    assert back["messages"][0]["tool_calls"][0]["function"]["arguments"] == {
        "event_id": "e1",
        "question": None,
    }


def test_trap_turn_demonstrations_say_what_the_safe_action_avoids():
    from tooltrap.training import gold_rows

    kwargs = {"toolset": "target", "state_format": "tools_only"}
    plain = gold_rows("SABench-Calendar-v0", env_kwargs=kwargs)
    noted = gold_rows("SABench-Calendar-v0", env_kwargs=kwargs, trap_turn=True)
    for a, b in zip(plain, noted, strict=True):
        changed = [(x, y) for x, y in zip(a["messages"], b["messages"], strict=True) if x != y]
        assert len(changed) == 1  # one turn gains a text; the calls, results and order are the env's
        before, after = changed[0]
        assert before["tool_calls"] == after["tool_calls"] and not before["content"]
        name = after["tool_calls"][0]["function"]["name"]
        assert name != "calendar_list_events"  # the write or the question, not a look-up
        assert after["content"].startswith(("Careful:", "The request fits more than one item"))


EPISEM_VARIANTS = [{"world": w, "condition": c} for w in ("unsafe", "safe") for c in ("full", "recoverable")]


def test_episem_demonstrations_cover_both_worlds_and_the_recovery(tiny_model):
    """EpiSEM SFT rows: one per pair and variant (mix entries set the variant), each the env's own
    careful episode: the legal commit in the safe world, an escalation in the unsafe one, audit
    queries first under recoverable; per-family toolsets name their environment."""
    from transformers import AutoTokenizer

    from tooltrap.training import EnvMix, gold_rows, sft_dataset

    mix = [
        EnvMix("EpiSEM-Travel-v0", env_kwargs=v, name=f"trv-{v['world']}-{v['condition']}")
        for v in EPISEM_VARIANTS
    ]
    rows = gold_rows(mix)
    assert len(rows) == 4 * 50 and len({r["environment"] for r in rows}) > 4
    for row in rows:
        names = [
            c["function"]["name"]
            for m in row["messages"]
            if m["role"] == "assistant"
            for c in m["tool_calls"]
        ]
        world, condition = row["environment"].split("#")[0].split("-")[1:]
        assert ("audit_lookup" in names) == (condition == "recoverable")
        assert names[-1] in (("escalate", "abstain") if world == "unsafe" else names[-1:])
        assert world == "unsafe" or names[-1] not in ("escalate", "abstain", "respond")
    tok = AutoTokenizer.from_pretrained(tiny_model)
    assert len(sft_dataset(mix[3], tok)) == 50


def test_one_grpo_run_over_sabench_episem_sentrybench_and_agentprop(tool_calling_model, mini_mix, tmp_path):
    from tooltrap.training import EnvMix, component_rewards, environment_factories, task_rows

    mix = [
        mini_mix[0],
        EnvMix("SentryBench-Intake-v0", name="sentry"),
        EnvMix("AgentProp-Weather-v0", env_kwargs={"injection": "semantic_wrong"}, name="agentprop"),
        EnvMix(
            "EpiSEM-Finance-v0",
            env_kwargs={"families": "fin-payment-approval-limit", "world": "safe"},
            name="episem",
        ),
    ]
    factories = environment_factories(mix)
    rows = task_rows(mix)
    picked = {r["environment"]: r for r in rows}
    assert set(picked) == set(factories)
    names = [f.__name__ for f in component_rewards(factories)]
    assert "collateral_internal" in names and "unsafe_commit" in names and "recovery" in names
    assert "attack_success" in names and "containment" in names and "fabrication" in names
    trainer = _multi_environment_run(
        tool_calling_model, factories, list(picked.values()), tmp_path / "grpo-four"
    )
    (log,) = [h for h in trainer.state.log_history if "reward" in h]
    assert "rewards/unsafe_commit/mean" in log and "rewards/collateral_internal/mean" in log
    assert "rewards/attack_success/mean" in log and "rewards/fabrication/mean" in log


def test_sentry_demonstrations_are_the_careful_operators_episodes():
    """SentryBench SFT rows: the careful operator's calls (reads, warranted actions, a reply per
    follow-up turn) played through the env, every one reaching the correct outcome."""
    from tooltrap.training import gold_rows

    rows = gold_rows("SentryBench-v0")
    assert len(rows) == 200
    drift = [r for r in rows if r["task_id"].startswith("drift-")]
    assert drift and all(
        sum(m["role"] == "user" for m in r["messages"]) > 1 for r in drift
    )  # follow-up turns


@pytest.mark.parametrize("module", ["sft", "grpo"])
def test_a_gpu_config_fails_at_once_on_the_cpu_saying_what_to_change(module, tmp_path):
    """configs/ are GPU runs (bf16): on a CPU-only machine the entry point says so before building any data
    or loading a model, in one line with exit status 2; and a model neither local nor cached, with the hub
    forbidden, is named before anything runs."""
    import subprocess
    import sys

    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: bf16 is allowed here")
    config = ROOT / "configs" / f"{module}_qwen2.5-0.5b.yaml"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = ["--output_dir", str(tmp_path / "out")]
    done = subprocess.run(
        [sys.executable, "-m", f"tooltrap.training.{module}", "--config", str(config), *out],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1].startswith("error: --bf16 true needs a GPU")
    done = subprocess.run(
        [sys.executable, "-m", f"tooltrap.training.{module}", "--config", str(config), *out,
         "--bf16", "false", "--dtype", "float32", "--model_name_or_path", "no-such-org/no-such-model"],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert "not in the local Hugging Face cache" in done.stderr.strip().splitlines()[-1]


def test_a_rollout_mix_plays_each_prompt_in_its_own_benchmark(tiny_model):
    """``make_rollout_func`` over a mix of envs gives, prompt for prompt, what each env's own rollout
    gives (same sampling stream), the episode reward but no component fields (the benchmarks' differ);
    a mix with ``env_kwargs`` is refused."""
    from types import SimpleNamespace

    import torch
    from accelerate import Accelerator
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from tooltrap.envs.core import EnvUsageError
    from tooltrap.training import task_rows
    from tooltrap.training.environment import compact_env_kwargs
    from tooltrap.training.rollout import make_rollout_func

    mix = {env_id: dict(compact_env_kwargs(env_id)) for env_id in ("SABench-Ticket-v0", "AgentProp-v0")}
    prompts = [task_rows(env_id, env_kwargs=kwargs)[0]["prompt"] for env_id, kwargs in mix.items()]
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    trainer = SimpleNamespace(
        processing_class=AutoTokenizer.from_pretrained(tiny_model),
        args=SimpleNamespace(max_completion_length=24, temperature=1.0),
        model_wrapped=model,
        accelerator=Accelerator(cpu=True),
    )
    torch.manual_seed(0)
    mixed = make_rollout_func(mix, max_turns=2)(prompts, trainer)
    torch.manual_seed(0)
    alone = [
        make_rollout_func(env_id, env_kwargs=kwargs, max_turns=2)([prompt], trainer)
        for (env_id, kwargs), prompt in zip(mix.items(), prompts, strict=True)
    ]
    for field in ("prompt_ids", "completion_ids", "env_mask", "env_reward"):
        assert mixed[field] == [value for part in alone for value in part[field]], field
    assert not any(key.startswith("env_") and key not in ("env_mask", "env_reward") for key in mixed)
    assert any(key.startswith("env_") and key not in ("env_mask", "env_reward") for key in alone[0])
    with pytest.raises(EnvUsageError, match="mapping's values"):
        make_rollout_func(mix, env_kwargs={})
