"""Training with TRL (the ``train`` extra): dataset builders (careful demonstrations, tokenized SFT
rows), the ``environment_factory`` adapter and its reward function, a ``rollout_func`` over the
gymnasium env, the ``sft`` / ``grpo`` entry points, and the tiny offline model and warm-up helpers
that reproduce a CPU run (``build_tiny_model``, ``warm_up_tool_caller``; docs/training.md).

Importing this package does not import torch; the submodules import what they need.
"""

from .data import (
    DemonstrationError,
    demonstration,
    gold_rows,
    hf_messages,
    sft_dataset,
    task_dataset,
    task_rows,
    tokenize_messages,
)
from .environment import (
    EnvMix,
    ToolEnvironment,
    component_rewards,
    environment_class,
    environment_factories,
    environment_reward,
    final_turn,
    judge_rollout,
    reward_components,
)
from .tiny import build_tiny_model, first_token_probability, greedy_emits_call, warm_up_tool_caller

__all__ = [
    "build_tiny_model",
    "first_token_probability",
    "greedy_emits_call",
    "warm_up_tool_caller",
    "DemonstrationError",
    "EnvMix",
    "demonstration",
    "hf_messages",
    "tokenize_messages",
    "ToolEnvironment",
    "component_rewards",
    "environment_class",
    "environment_factories",
    "environment_reward",
    "final_turn",
    "judge_rollout",
    "reward_components",
    "gold_rows",
    "sft_dataset",
    "task_dataset",
    "task_rows",
]
