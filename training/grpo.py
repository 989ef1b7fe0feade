"""GRPO with the tooltrap environment in the loop, with TRL.

Two rollout paths: ``--rollout environment_factory`` (default: TRL's multi-turn tool loop calls the env's
tools, the oracle's reward arrives through ``environment_reward``, which plays the model's closing text
turn through the env) or ``--rollout rollout_func`` (our multi-turn
loop through the gymnasium env, env tokens masked). Reward components are logged as
``rewards/<component>/mean``. TRL's example-script conventions (``TrlParser``, ``--config file.yaml``)::

    python -m tooltrap.training.grpo --model_name_or_path runs/sft --env_id ENV_ID --split train \\
        --output_dir runs/grpo --num_generations 8 --max_completion_length 1024 \\
        --use_vllm true --vllm_mode colocate --use_peft --lora_r 16
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from .sft import (
    EnvArguments,
    cpu_defaults,
    entry_point,
    model_kwargs,
    parse_training_args,
    preflight,
    resolve_model_name,
    save_final,
)

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


@dataclass
class RolloutArguments(EnvArguments):
    rollout: str = field(
        default="environment_factory", metadata={"help": "environment_factory or rollout_func."}
    )
    mitigation: str | None = field(
        default=None, metadata={"help": "Train under a mitigation wrapper (e.g. preview)."}
    )


def main(args: RolloutArguments, training_args: Any, model_args: Any) -> Any:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOTrainer, get_peft_config

    from .data import task_rows

    resolve_model_name(model_args)
    preflight(training_args, model_args)
    cpu_defaults(training_args)
    env_kwargs = args.env_kwargs(args.env_id)
    rows = task_rows(args.env_id, tasks=args.tasks, env_kwargs=env_kwargs, repeat=args.repeat)
    tokenizer = AutoTokenizer.from_pretrained(
        model_args.model_name_or_path, revision=model_args.model_revision
    )
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **model_kwargs(model_args))
    common = {
        "model": model,
        "args": training_args,
        "processing_class": tokenizer,
        "peft_config": get_peft_config(model_args),
    }
    if args.rollout == "environment_factory":
        from tooltrap.agents.pretrained import compact_tool_template
        from tooltrap.envs.core import EnvUsageError

        from .environment import component_rewards, environment_class, environment_reward

        if getattr(tokenizer, "chat_template", None) == compact_tool_template():
            # TRL parses environment_factory's calls only under chat templates it knows by their text
            raise EnvUsageError(
                f"{model_args.model_name_or_path} has the compact tool template, which TRL's "
                "environment_factory does not recognise: train it with --rollout rollout_func (the calls "
                "render as under TRL's Qwen2.5 template), or use smollm2 (TRL's template)."
            )

        env_class = environment_class(args.env_id, env_kwargs=env_kwargs, mitigation=args.mitigation)
        loggers = component_rewards(env_class)
        if training_args.reward_weights is None:
            training_args.reward_weights = [1.0] + [0.0] * len(loggers)
        dataset = Dataset.from_list([{"prompt": r["prompt"], "task_id": r["task_id"]} for r in rows])
        trainer = GRPOTrainer(
            reward_funcs=[environment_reward, *loggers],
            train_dataset=dataset,
            environment_factory=env_class,
            **common,
        )
    elif args.rollout == "rollout_func":
        from .rollout import component_loggers, env_reward, make_rollout_func

        loggers = component_loggers(args.env_id, env_kwargs)
        if training_args.reward_weights is None:
            training_args.reward_weights = [1.0] + [0.0] * len(loggers)
        dataset = Dataset.from_list([{"prompt": r["prompt"]} for r in rows])
        rollout = make_rollout_func(args.env_id, env_kwargs=env_kwargs, mitigation=args.mitigation)
        trainer = GRPOTrainer(
            reward_funcs=[env_reward, *loggers], train_dataset=dataset, rollout_func=rollout, **common
        )
    else:
        raise ValueError(f"--rollout must be environment_factory or rollout_func, not {args.rollout!r}")
    trainer.train()
    save_final(trainer, tokenizer, training_args.output_dir)
    return trainer


def cli(argv: list[str] | None = None) -> Any:
    from trl import GRPOConfig, ModelConfig, TrlParser

    parser = TrlParser((RolloutArguments, GRPOConfig, ModelConfig))
    args, training_args, model_args = parse_training_args(parser, argv)
    return main(args, training_args, model_args)


if __name__ == "__main__":
    raise SystemExit(entry_point(cli))
