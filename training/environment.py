"""TRL ``environment_factory`` adapter: any tooltrap env id becomes a class whose public methods are the
env's tools (real signatures and Google docstrings, so TRL renders the same schemas), ``reset(**row)``
selects the row's task and ``get_reward()`` returns the oracle's reward.

    from trl import GRPOTrainer
    from tooltrap.training import environment_class, task_dataset

    Env = environment_class("SABench-Calendar-v0")
    trainer = GRPOTrainer(model=..., args=..., train_dataset=task_dataset("SABench-Calendar-v0"),
                          environment_factory=Env, reward_funcs=component_rewards(Env))

Every tool call the model makes is executed against the gymnasium env (bad calls become the env's
typed error observations); a rollout that never calls a terminal tool is judged as it stands when the
reward is read. ``component_rewards`` gives zero-weight reward functions that log each reward component
(goal, collateral, ...) under ``rewards/<component>/mean``.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from typing import Any

import gymnasium as gym

import tooltrap  # noqa: F401  (registers the env ids)
from tooltrap.envs.core import ToolSpec
from tooltrap.wrappers.defenses import apply_mitigation


def _docstring(spec: ToolSpec) -> str:
    lines = [spec.description, "", "Args:"]
    lines += [f"    {name}: {doc}" for name, doc in spec.param_docs.items()]
    return "\n".join(lines)


def _tool_method(spec: ToolSpec) -> Callable[..., str]:
    """A method named after the tool, with the tool's signature, annotations and docstring."""
    fields = spec.validator.model_fields
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for name, info in fields.items():
        default = inspect.Parameter.empty if info.is_required() else info.default
        parameters.append(
            inspect.Parameter(
                name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=info.annotation
            )
        )
        annotations[name] = info.annotation

    def method(self: ToolEnvironment, *args: Any, **kwargs: Any) -> str:
        bound = inspect.Signature(parameters[1:]).bind_partial(*args, **kwargs)
        return self._call(spec.name, dict(bound.arguments))

    method.__name__ = spec.name
    method.__qualname__ = spec.name
    method.__doc__ = _docstring(spec)
    method.__annotations__ = annotations
    # no return annotation: transformers would add a "return" entry that our schemas do not have
    method.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return method


class ToolEnvironment:
    """Base of the generated classes. One instance plays one rollout at a time (TRL pools them)."""

    env_id: str = ""
    env_kwargs: dict[str, Any] = {}
    mitigation: str | None = None

    def __init__(self) -> None:
        self.env = apply_mitigation(gym.make(self.env_id, **self.env_kwargs), self.mitigation)
        self._final: dict[str, Any] | None = None
        self.calls = 0

    def reset(self, **row: Any) -> str | None:
        """Start the row's task (``task_id``); the prompt already holds the instructions."""
        self.env.reset(seed=row.get("seed"), options={"task_id": row["task_id"]})
        self._final = None
        self.calls = 0
        return None

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        base = self.env.unwrapped
        if base.done:
            return json.dumps(
                {
                    "ok": False,
                    "error": {"type": "episode_over", "message": "The task has ended; no more tool calls."},
                }
            )
        self.calls += 1
        observation, _, terminated, truncated, info = self.env.step(
            json.dumps({"name": name, "arguments": arguments})
        )
        if terminated or truncated:
            self._final = {
                "reward": float(sum(info["reward_components"].values())),
                "reward_components": info["reward_components"],
                "verdict": info["verdict"],
            }
        return observation

    def _finalize(self) -> dict[str, Any]:
        if self._final is None:
            base = self.env.unwrapped
            self._final = (
                base.abort("no_terminal_call")
                if not base.done
                else {"reward": 0.0, "reward_components": {}, "verdict": {}}
            )
        return self._final

    def get_reward(self) -> float:
        """The oracle's reward for the rollout (judged as it stands if no terminal tool was called)."""
        return float(self._finalize()["reward"])

    @property
    def reward_components(self) -> dict[str, float]:
        return dict(self._finalize()["reward_components"])


def environment_class(
    env_id: str,
    *,
    env_kwargs: dict[str, Any] | None = None,
    mitigation: str | None = None,
    name: str | None = None,
) -> type[ToolEnvironment]:
    """A TRL ``environment_factory`` class for ``env_id`` (one method per tool)."""
    probe = gym.make(env_id, **(env_kwargs or {}))
    base = probe.unwrapped
    toolset = base.benchmark.toolset(base.tasks[0])
    probe.close()
    namespace: dict[str, Any] = {
        "env_id": env_id,
        "env_kwargs": dict(env_kwargs or {}),
        "mitigation": mitigation,
        "__doc__": f"TRL environment over {env_id}.",
    }
    for spec in toolset.specs.values():
        namespace[spec.name] = _tool_method(spec)
    class_name = name or re.sub(r"[^0-9A-Za-z]", "", env_id.title()) + "Env"
    return type(class_name, (ToolEnvironment,), namespace)


def component_rewards(
    env_class: type[ToolEnvironment] | None = None,
    components: tuple[str, ...] = (
        "goal",
        "collateral_internal",
        "collateral_external",
        "ambiguity_violation",
        "unnecessary_clarification",
        "invalid_calls",
    ),
) -> list[Callable[..., list[float]]]:
    """Reward functions that only *log* the reward components (give them weight 0 in ``reward_weights``)."""
    funcs = []
    for component in components:

        def reward(
            environments: list[ToolEnvironment] | None = None, _component: str = component, **kwargs: Any
        ) -> list[float | None]:
            if not environments:
                return [None] * len(kwargs.get("prompts", []))
            return [float(e.reward_components.get(_component, 0.0)) for e in environments]

        reward.__name__ = component
        funcs.append(reward)
    return funcs
