"""Dataset builders: tasks -> prompt rows (for GRPO), gold trajectories -> chat SFT rows with tool calls.

Every builder takes one env id, several, or a weighted mix (:class:`~tooltrap.training.environment.EnvMix`).
Rows are plain dicts; :func:`task_dataset` / :func:`sft_dataset` wrap them in ``datasets.Dataset``.
Tool schemas are stored as a JSON string (``tools``), which TRL's SFT trainer decodes; this avoids
Arrow struct-schema mismatches between tools. They are the schemas as TRL renders the
``environment_factory`` methods (``tool_schemas="transformers"``: no bounds or defaults, which
transformers cannot write) unless the env kwargs ask otherwise, so SFT and GRPO prompts agree. Each row names its ``environment`` (the key of
:func:`~tooltrap.training.environment.environment_factories` for the task's toolset), so one dataset can
drive a multi-environment GRPO run.

With equal weights and no ``n_rows`` the rows of the envs follow each other in order. Otherwise
``n_rows`` rows (default: as many as all envs have) are split between the envs in proportion to their
weights (largest remainder) and drawn from each env's rows in seeded shuffled passes (without
replacement until a pass is used up), then interleaved by a seeded shuffle.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import gymnasium as gym

import tooltrap  # noqa: F401  (registers the env ids)
from tooltrap.evaluate import select_task_ids

from .environment import EnvMix, Mix, _toolsets, as_mix, environment_key, training_kwargs


def _rows_of(
    entry: EnvMix, tasks: str | None, build: Callable[[gym.Env, str, str, str], dict[str, Any]]
) -> list[dict[str, Any]]:
    env = gym.make(entry.env_id, **training_kwargs(entry.env_id, entry.env_kwargs))
    toolsets = list(_toolsets(env))
    rows = []
    for task_id in select_task_ids(env.unwrapped.tasks, tasks):  # type: ignore[attr-defined]
        base = env.unwrapped
        key = base.benchmark.toolset(base.tasks.get(task_id)).key()  # type: ignore[attr-defined]
        rows.append(build(env, task_id, entry.env_id, environment_key(entry, toolsets, key)))
    env.close()
    return rows


def _mix_rows(
    per_entry: list[tuple[EnvMix, list[dict[str, Any]]]], n_rows: int | None, seed: int
) -> list[dict[str, Any]]:
    if n_rows is None and len({e.weight for e, _ in per_entry}) <= 1:
        return [row for _, rows in per_entry for row in rows]
    total = n_rows if n_rows is not None else sum(len(rows) for _, rows in per_entry)
    weight = sum(e.weight for e, _ in per_entry)
    shares = [total * e.weight / weight for e, _ in per_entry]
    counts = [int(s) for s in shares]
    for i in sorted(range(len(shares)), key=lambda i: counts[i] - shares[i])[: total - sum(counts)]:
        counts[i] += 1
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for (entry, rows), count in zip(per_entry, counts, strict=True):
        if count and not rows:
            raise ValueError(f"{entry.key}: no rows to draw from")
        drawn: list[dict[str, Any]] = []
        while len(drawn) < count:
            batch = list(rows)
            rng.shuffle(batch)
            drawn += batch[: count - len(drawn)]
        out += drawn
    rng.shuffle(out)
    return out


def task_rows(
    envs: Mix,
    *,
    tasks: str | None = None,
    env_kwargs: dict[str, Any] | None = None,
    repeat: int = 1,
    n_rows: int | None = None,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One row per task: ``prompt`` (system + user chat messages), ``tools`` (JSON), ``task_id``,
    ``env_id``, ``environment``, ``template_id``. ``tasks`` filters like ``tooltrap eval --tasks``."""

    def build(env: gym.Env, task_id: str, env_id: str, environment: str) -> dict[str, Any]:
        _, info = env.reset(seed=0, options={"task_id": task_id})
        task = env.unwrapped.task  # type: ignore[attr-defined]
        return {
            "prompt": info["messages"],
            "tools": json.dumps(info["tools"]),
            "task_id": task_id,
            "env_id": env_id,
            "environment": environment,
            "template_id": task.template_id,
        }

    per_entry = [(e, _rows_of(e, tasks, build)) for e in as_mix(envs, env_kwargs)]
    return _mix_rows(per_entry, n_rows, seed) * repeat


def gold_rows(
    envs: Mix,
    *,
    tasks: str | None = None,
    env_kwargs: dict[str, Any] | None = None,
    n_rows: int | None = None,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """SFT rows from the gold solutions, played through the env: ``messages`` (system, user, then an
    assistant tool call and its tool result per step, ending on the terminal call), ``tools`` (JSON),
    ``task_id``, ``env_id``, ``environment``. A gold solution that does not reach the goal raises."""

    def build(env: gym.Env, task_id: str, env_id: str, environment: str) -> dict[str, Any]:
        _, info = env.reset(seed=0, options={"task_id": task_id})
        base = env.unwrapped
        task = base.task  # type: ignore[attr-defined]
        messages = list(info["messages"])
        step_info: dict[str, Any] = {}
        for call in task.gold:
            observation, _, terminated, truncated, step_info = env.step(call.to_action())
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
        verdict = step_info.get("verdict")
        if not verdict or not verdict.get("goal"):
            raise RuntimeError(f"{task_id}: the gold solution does not reach the goal")
        if verdict.get("cd"):  # benchmarks with an authorization set: gold writes nothing unauthorized
            raise RuntimeError(f"{task_id}: the gold solution makes unauthorized writes")
        return {
            "messages": messages,
            "tools": json.dumps(info["tools"]),
            "task_id": task_id,
            "env_id": env_id,
            "environment": environment,
        }

    per_entry = [(e, _rows_of(e, tasks, build)) for e in as_mix(envs, env_kwargs)]
    return _mix_rows(per_entry, n_rows, seed)


def task_dataset(envs: Mix, **kwargs: Any):  # -> datasets.Dataset
    """:func:`task_rows` as a ``datasets.Dataset`` (needs the ``train`` extra)."""
    from datasets import Dataset

    return Dataset.from_list(task_rows(envs, **kwargs))


def sft_dataset(envs: Mix, **kwargs: Any):  # -> datasets.Dataset
    """:func:`gold_rows` as a ``datasets.Dataset`` (needs the ``train`` extra)."""
    from datasets import Dataset

    return Dataset.from_list(gold_rows(envs, **kwargs))
