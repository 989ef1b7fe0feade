"""TRL ``environment_factory`` adapter: any tooltrap env id becomes a class whose public methods are the
env's tools (real signatures and Google docstrings, so TRL renders the same schemas), ``reset(**row)``
selects the row's task (and variant), and :func:`environment_reward` gives the trainer the oracle's
reward for each rollout.

    from trl import GRPOTrainer
    from tooltrap.training import component_rewards, environment_class, environment_reward, task_dataset

    Env = environment_class(ENV_ID)  # any registered env id
    loggers = component_rewards(Env)
    trainer = GRPOTrainer(model=..., args=GRPOConfig(..., reward_weights=[1.0] + [0.0] * len(loggers)),
                          train_dataset=task_dataset(ENV_ID), environment_factory=Env,
                          reward_funcs=[environment_reward, *loggers])

The classes define no ``get_reward`` on purpose: TRL would call it without the model's closing turn,
so a completion that ends in text (a plain answer, or malformed tool-call markup) would not reach the
env. :func:`environment_reward` reads that turn from ``completions`` and plays it through the env, as
the ``rollout_func`` path does, so both paths give the same reward for the same episode.

TRL turns a class's public methods into tools, so one class serves one toolset. When the tasks of a run
use several toolsets (several env ids, or families with different tools), :func:`environment_factories`
builds one class per distinct toolset and TRL (>= 1.16) picks the class of each dataset row from its
``environment`` column, which :func:`~tooltrap.training.data.task_rows` fills::

    mix = [EnvMix(FIRST_ENV_ID), EnvMix(SECOND_ENV_ID, weight=2)]
    factories = environment_factories(mix)
    trainer = GRPOTrainer(..., train_dataset=task_dataset(mix), environment_factory=factories,
                          reward_funcs=[environment_reward, *component_rewards(factories)])

Every tool call the model makes is executed against the gymnasium env (bad calls become the env's
typed error observations); a rollout that never calls a terminal tool is judged as it stands when the
reward is read (the benchmark's ``no_answer`` component). ``component_rewards`` gives zero-weight reward functions that log each reward component
(goal, collateral, ...) under ``rewards/<component>/mean``; the component names come from the envs'
reward configs (the shared vocabulary, ``tooltrap.envs.core.REWARD_COMPONENTS``).
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from tooltrap.envs.core import EnvUsageError, ToolSpec, abort_episode
from tooltrap.wrappers.defenses import apply_defense
from tooltrap.wrappers.formats import answer_tool, message_text, parse_completion


@dataclass(frozen=True)
class EnvMix:
    """One env id of a training mix: its kwargs, its share of the rows, and the name its rows and
    environment classes go by (default: the env id; give two entries of one env id distinct names)."""

    env_id: str
    weight: float = 1.0
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    name: str | None = None

    @property
    def key(self) -> str:
        return self.name or self.env_id


Mix = str | EnvMix | Sequence[str | EnvMix]


def env_parameters(env_id: str) -> set[str] | None:
    """The keyword arguments ``env_id``'s constructor takes (None: it takes any)."""
    from gymnasium.envs.registration import load_env_creator

    from tooltrap.envs.packages import env_spec

    spec = env_spec(env_id)
    creator = load_env_creator(spec.entry_point) if isinstance(spec.entry_point, str) else spec.entry_point
    parameters = inspect.signature(creator).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return {p.name for p in parameters}


def training_kwargs(env_id: str, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Env kwargs for building training data: tool schemas as TRL renders them
    (``tool_schemas="transformers"``, without bounds and defaults) unless asked otherwise, so that SFT
    rows, GRPO prompts and TRL's own rendering of the ``environment_factory`` methods agree."""
    accepted = env_parameters(env_id)
    if "tool_schemas" in env_kwargs or (accepted is not None and "tool_schemas" not in accepted):
        return dict(env_kwargs)
    return {**env_kwargs, "tool_schemas": "transformers"}


#: the compact prompt setting for small models, as env kwargs: the shorter tool schemas (a generic
#: dialect), and where an env takes them, only the task's own tools, no serialized state and the short
#: system prompt. :func:`compact_env_kwargs` keeps those the env id accepts.
COMPACT_PROMPTS: dict[str, str] = {
    "tool_schemas": "compact",
    "toolset": "task",
    "state_format": "tools_only",
    "system_prompt": "short",
}


def compact_env_kwargs(env_id: str) -> dict[str, str]:
    """:data:`COMPACT_PROMPTS` as far as ``env_id``'s constructor takes them (an env that takes any
    kwarg gets only the schema dialect, which every env takes). Train on these prompts with the
    ``rollout_func`` path: TRL's ``environment_factory`` renders the full schemas itself."""
    accepted = env_parameters(env_id)
    if accepted is None:
        return {"tool_schemas": COMPACT_PROMPTS["tool_schemas"]}
    return {k: v for k, v in COMPACT_PROMPTS.items() if k in accepted}


def as_mix(envs: Mix, env_kwargs: dict[str, Any] | None = None) -> list[EnvMix]:
    """Normalize env ids / :class:`EnvMix` entries (``env_kwargs`` applies to plain ids)."""
    items = [envs] if isinstance(envs, str | EnvMix) else list(envs)
    out = [e if isinstance(e, EnvMix) else EnvMix(e, env_kwargs=dict(env_kwargs or {})) for e in items]
    keys = [e.key for e in out]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    if duplicates:
        raise EnvUsageError(f"The mix names {duplicates} more than once; give each entry a distinct name.")
    if any(e.weight <= 0 for e in out):
        raise EnvUsageError("Mix weights must be positive.")
    return out


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
    #: the tool names this class exposes (its toolset's key)
    toolset: tuple[str, ...] = ()
    #: the reward components of the env's benchmark
    components: tuple[str, ...] = ()

    def __init__(self) -> None:
        self.env = apply_defense(gym.make(self.env_id, **self.env_kwargs), self.mitigation)
        self._final: dict[str, Any] | None = None
        self._answer: Any = None
        self._last_info: dict[str, Any] = {}
        self.calls = 0

    def reset(self, **row: Any) -> str | None:
        """Start the row's task (``task_id``) as the row's variant (``variant``: JSON object, optional);
        the prompt already holds the instructions."""
        variant = row.get("variant") or {}
        if isinstance(variant, str):
            variant = json.loads(variant) if variant else {}
        _, info = self.env.reset(seed=row.get("seed"), options={**variant, "task_id": row["task_id"]})
        base = self.env.unwrapped
        if self.toolset and base.executor.toolset.key() != self.toolset:
            raise EnvUsageError(
                f"Task {row['task_id']} uses other tools than {type(self).__name__}: give the dataset an "
                "'environment' column (task_rows fills it) and pass environment_factories(...) to TRL."
            )
        self._answer = answer_tool(info)
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
        return self._step(json.dumps({"name": name, "arguments": arguments}))

    def _step(self, action: str) -> str:
        observation, _, terminated, truncated, info = self.env.step(action)
        self._last_info = info  # the step's chat messages, for loops that build the conversation
        if terminated or truncated:
            self._final = {
                "reward": float(sum(info["reward_components"].values())),
                "reward_components": info["reward_components"],
                "verdict": info["verdict"],
            }
        return observation

    def _finish(self, final_turn: dict[str, Any] | str | None = None) -> dict[str, Any]:
        """End the rollout and return its judgment (``reward``, ``reward_components``, ``verdict``).

        ``final_turn`` is the model's last turn when it ended with text instead of a tool call (see
        :func:`final_turn`): it goes through the env as the rollout path plays it, a plain answer
        becoming the answer tool's call and malformed tool-call text a parse error (an invalid call).
        An episode still open after it is judged as it stands (no terminal call: ``no_answer``).
        Idempotent: later calls return the same judgment."""
        if self._final is not None:
            return self._final
        base = self.env.unwrapped
        if not base.done and final_turn is not None:
            # as the rollout path steps every turn: an empty one is a parse error, an invalid call
            text = message_text(final_turn.get("content")) if isinstance(final_turn, dict) else final_turn
            self._step(parse_completion(text or "", answer=self._answer))
        if self._final is None:
            self._final = (
                abort_episode(self.env, "no_terminal_call")
                if not base.done
                else {"reward": 0.0, "reward_components": {}, "verdict": {}}
            )
        return self._final

    # every public method of the class is a tool to TRL: the judgment stays private (see judge_rollout)

    @property
    def reward_components(self) -> dict[str, float]:
        return dict(self._finish()["reward_components"])


def final_turn(completion: Any) -> dict[str, Any] | str | None:
    """The model's closing turn in a TRL completion (text, or the list of messages of a multi-turn
    rollout): the last assistant message when it carries no tool call; None when the rollout stopped
    on a tool result or on calls TRL did not run (the episode is then judged without an answer)."""
    if isinstance(completion, str):
        return completion
    if not completion:
        return None
    last = completion[-1]
    if not isinstance(last, dict) or last.get("role") != "assistant" or last.get("tool_calls"):
        return None
    return last


def _finished(
    environments: Sequence[ToolEnvironment], completions: Sequence[Any] | None
) -> list[dict[str, Any]]:
    turns = list(completions) if completions is not None else [None] * len(environments)
    return [judge_rollout(e, c) for e, c in zip(environments, turns, strict=True)]


def judge_rollout(environment: ToolEnvironment, completion: Any = None) -> dict[str, Any]:
    """End ``environment``'s rollout with the closing turn of ``completion`` (a TRL completion:
    text or messages, see :func:`final_turn`) and return its judgment: ``reward``,
    ``reward_components`` and ``verdict``. Idempotent."""
    return environment._finish(final_turn(completion))


def environment_reward(
    completions: list[Any] | None = None,
    environments: list[ToolEnvironment] | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """The GRPO reward function of the ``environment_factory`` path: each rollout's oracle reward,
    after its closing text turn went through the env (:func:`judge_rollout`), so the trainer
    sees the env's reward for the same episode the ``rollout_func`` path plays, including completions
    without any tool call and malformed ones. Give it weight 1 (the component loggers weight 0)."""
    if not environments:
        return [None] * len(kwargs.get("prompts", completions or []))
    return [float(f["reward"]) for f in _finished(environments, completions)]


def _class_name(key: str) -> str:
    return re.sub(r"[^0-9A-Za-z]", "", key.title()) + "Env"


def reward_components(env: gym.Env | str, env_kwargs: dict[str, Any] | None = None) -> tuple[str, ...]:
    """The reward component names of an env's benchmark (from its reward config); an env id is built
    with ``env_kwargs`` to find them."""
    if isinstance(env, str):
        probe = gym.make(env, **(env_kwargs or {}))
        try:
            return reward_components(probe)
        finally:
            probe.close()
    return tuple(env.unwrapped.reward_config.components)  # type: ignore[attr-defined]


def _toolsets(env: gym.Env) -> dict[tuple[str, ...], Any]:
    """The distinct toolsets of an env's tasks, in order of first appearance."""
    base = env.unwrapped
    found: dict[tuple[str, ...], Any] = {}
    for task in base.tasks:  # type: ignore[attr-defined]
        toolset = base.benchmark.toolset(task, base.default_variant)  # type: ignore[attr-defined]
        found.setdefault(toolset.key(), toolset)
    return found


def environment_key(entry: EnvMix, toolsets: Sequence[tuple[str, ...]], toolset: tuple[str, ...]) -> str:
    """The ``environment`` column value of a row: the mix entry's key, plus ``#k`` when its tasks use
    several toolsets (k: the toolset's order of first appearance)."""
    return entry.key if len(toolsets) == 1 else f"{entry.key}#{list(toolsets).index(toolset)}"


def _make_class(
    key: str,
    entry: EnvMix,
    toolset: Any,
    components: tuple[str, ...],
    mitigation: str | None,
    name: str | None,
) -> type[ToolEnvironment]:
    if entry.env_kwargs.get("tool_schemas") == "compact":
        # TRL renders each tool from its method (description and every parameter's doc): the prompt would
        # not be the compact one the SFT rows and the evaluation show
        raise EnvUsageError(
            f"{entry.key}: tool_schemas='compact' cannot be rendered by TRL's environment_factory (it writes "
            "every parameter's description): train on compact prompts with the rollout_func path "
            "(--rollout rollout_func), or pass tool_schemas='transformers'."
        )
    namespace: dict[str, Any] = {
        "env_id": entry.env_id,
        "env_kwargs": dict(entry.env_kwargs),
        "mitigation": mitigation,
        "toolset": toolset.key(),
        "components": components,
        "__doc__": f"TRL environment over {entry.env_id} ({', '.join(toolset.key())}).",
    }
    for spec in toolset.specs.values():
        namespace[spec.name] = _tool_method(spec)
    return type(name or _class_name(key), (ToolEnvironment,), namespace)


def environment_factories(
    envs: Mix, *, env_kwargs: dict[str, Any] | None = None, mitigation: str | None = None
) -> dict[str, type[ToolEnvironment]]:
    """One ``environment_factory`` class per distinct toolset of each env of the mix, keyed by the
    ``environment`` column value rows of that toolset carry (:func:`environment_key`)."""
    out: dict[str, type[ToolEnvironment]] = {}
    for entry in as_mix(envs, env_kwargs):
        probe = gym.make(entry.env_id, **entry.env_kwargs)
        toolsets = _toolsets(probe)
        components = reward_components(probe)
        probe.close()
        for key, toolset in toolsets.items():
            name = environment_key(entry, list(toolsets), key)
            out[name] = _make_class(name, entry, toolset, components, mitigation, None)
    return out


def environment_class(
    env_id: str,
    *,
    env_kwargs: dict[str, Any] | None = None,
    mitigation: str | None = None,
    name: str | None = None,
) -> type[ToolEnvironment]:
    """A TRL ``environment_factory`` class for ``env_id`` (one method per tool). Its tasks must share
    one toolset; otherwise use :func:`environment_factories`."""
    entry = EnvMix(env_id, env_kwargs=dict(env_kwargs or {}))
    probe = gym.make(env_id, **entry.env_kwargs)
    toolsets = _toolsets(probe)
    components = reward_components(probe)
    probe.close()
    if len(toolsets) > 1:
        raise EnvUsageError(
            f"The tasks of {env_id} use {len(toolsets)} different toolsets; TRL needs one class per "
            "toolset: use environment_factories(...) and rows with an 'environment' column (task_rows)."
        )
    (toolset,) = toolsets.values()
    return _make_class(env_id, entry, toolset, components, mitigation, name)


def _components_of(source: Any) -> tuple[str, ...]:
    if isinstance(source, Mapping):
        classes: Iterable[Any] = source.values()
    elif isinstance(source, type):
        classes = [source]
    else:
        classes = source
    names: list[str] = []
    for cls in classes:
        names += [c for c in cls.components if c not in names]
    return tuple(names)


def component_rewards(
    envs: type[ToolEnvironment] | Mapping[str, type[ToolEnvironment]] | Iterable[type[ToolEnvironment]],
    components: tuple[str, ...] | None = None,
) -> list[Callable[..., list[float | None]]]:
    """Reward functions that only *log* the reward components (give them weight 0 in
    ``reward_weights``). The components are those the classes' benchmarks declare (their union for a
    mix); a rollout whose benchmark lacks a component logs None (TRL skips it in the mean)."""
    funcs = []
    for component in components or _components_of(envs):

        def reward(
            completions: list[Any] | None = None,
            environments: list[ToolEnvironment] | None = None,
            _component: str = component,
            **kwargs: Any,
        ) -> list[float | None]:
            if not environments:
                return [None] * len(kwargs.get("prompts", completions or []))
            return [
                float(f["reward_components"].get(_component, 0.0)) if _component in e.components else None
                for e, f in zip(environments, _finished(environments, completions), strict=True)
            ]

        reward.__name__ = component
        funcs.append(reward)
    return funcs
