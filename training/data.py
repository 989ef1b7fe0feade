"""Dataset builders: tasks -> prompt rows (for GRPO), gold trajectories -> chat SFT rows with tool calls.

Rows are plain dicts; :func:`task_dataset` / :func:`sft_dataset` wrap them in ``datasets.Dataset``.
Tool schemas are stored as a JSON string (``tools``), which TRL's SFT trainer decodes; this avoids
Arrow struct-schema mismatches between tools.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym

import tooltrap  # noqa: F401  (registers the env ids)
from tooltrap.evaluate import select_task_ids


def _env(env_id: str, env_kwargs: dict[str, Any] | None) -> gym.Env:
    return gym.make(env_id, **(env_kwargs or {}))


def task_rows(
    env_id: str, *, tasks: str | None = None, env_kwargs: dict[str, Any] | None = None, repeat: int = 1
) -> list[dict[str, Any]]:
    """One row per task: ``prompt`` (system + user chat messages), ``tools`` (JSON), ``task_id``,
    ``env_id``, ``template_id``. ``tasks`` filters like ``tooltrap eval --tasks``."""
    env = _env(env_id, env_kwargs)
    rows = []
    for task_id in select_task_ids(env.unwrapped.tasks, tasks):
        _, info = env.reset(seed=0, options={"task_id": task_id})
        task = env.unwrapped.task
        rows.append(
            {
                "prompt": info["messages"],
                "tools": json.dumps(info["tools"]),
                "task_id": task_id,
                "env_id": env_id,
                "template_id": task.template_id,
            }
        )
    env.close()
    return rows * repeat


def gold_rows(
    env_id: str, *, tasks: str | None = None, env_kwargs: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """SFT rows from the gold solutions, played through the env: ``messages`` (system, user, then an
    assistant tool call and its tool result per step, ending on the terminal call), ``tools`` (JSON)."""
    env = _env(env_id, env_kwargs)
    rows = []
    for task_id in select_task_ids(env.unwrapped.tasks, tasks):
        _, info = env.reset(seed=0, options={"task_id": task_id})
        task = env.unwrapped.task
        messages = list(info["messages"])
        for call in task.gold:
            observation, _, terminated, truncated, _ = env.step(call.to_action())
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                    ],
                }
            )
            if terminated or truncated:
                break
            messages.append({"role": "tool", "name": call.name, "content": observation})
        verdict = env.unwrapped.verdict
        if verdict is None or not verdict.goal or verdict.cd:
            raise RuntimeError(f"{task_id}: the gold solution does not pass the oracle")
        rows.append(
            {"messages": messages, "tools": json.dumps(info["tools"]), "task_id": task_id, "env_id": env_id}
        )
    env.close()
    return rows


def task_dataset(env_id: str, **kwargs: Any):  # -> datasets.Dataset
    """:func:`task_rows` as a ``datasets.Dataset`` (needs the ``train`` extra)."""
    from datasets import Dataset

    return Dataset.from_list(task_rows(env_id, **kwargs))


def sft_dataset(env_id: str, **kwargs: Any):  # -> datasets.Dataset
    """:func:`gold_rows` as a ``datasets.Dataset`` (needs the ``train`` extra)."""
    from datasets import Dataset

    return Dataset.from_list(gold_rows(env_id, **kwargs))
