"""Training with TRL (the ``train`` extra): dataset builders, the ``environment_factory`` adapter, a
``rollout_func`` over the gymnasium env, and the ``sft`` / ``grpo`` entry points.

Importing this package does not import torch; the submodules import what they need.
"""

from .data import gold_rows, sft_dataset, task_dataset, task_rows
from .environment import (
    EnvMix,
    ToolEnvironment,
    component_rewards,
    environment_class,
    environment_factories,
    reward_components,
)

__all__ = [
    "EnvMix",
    "ToolEnvironment",
    "component_rewards",
    "environment_class",
    "environment_factories",
    "reward_components",
    "gold_rows",
    "sft_dataset",
    "task_dataset",
    "task_rows",
]
