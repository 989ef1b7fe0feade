"""A TRL ``rollout_func`` that plays multi-turn episodes through the gymnasium env.

Each prompt is matched to its task, the model generates a turn, the turn is parsed (Hermes
``<tool_call>`` tags, bare JSON, or plain text as the final answer) and stepped through the env; the
env's observation is rendered with the chat template as a tool turn and appended to the completion
with ``env_mask = 0`` so it is excluded from the loss. The episode's reward and its components come
back as extra fields, read by :func:`env_reward` and the component loggers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym

from tooltrap.envs.core import abort_episode
from tooltrap.wrappers.defenses import apply_defense
from tooltrap.wrappers.formats import answer_tool, parse_completion

from .data import task_rows
from .environment import reward_components, training_kwargs


def _key(messages: list[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(str(m.get("content", "")) for m in messages)


def make_rollout_func(
    env_id: str | Mapping[str, dict[str, Any] | None],
    *,
    env_kwargs: dict[str, Any] | None = None,
    mitigation: str | None = None,
    max_turns: int = 16,
) -> Callable[[list[list[dict[str, Any]]], Any], dict[str, Any]]:
    """Build ``rollout_func(prompts, trainer)`` for ``GRPOTrainer(rollout_func=...)``. Its extra
    fields ``env_<component>`` carry the benchmark's reward components (see :func:`component_loggers`).

    ``env_id`` is one env id (built with ``env_kwargs``) or a mix: a mapping of env ids to their kwargs,
    for a dataset that draws prompts from several benchmarks (:func:`~tooltrap.training.task_rows` of
    each); each prompt is played in its own task's env. A mix passes the component fields only when every
    env has the same components (the benchmarks' components differ; the episode reward is always there).

    Raises:
        EnvUsageError: A mix given with ``env_kwargs`` (each env's kwargs are the mapping's values), or
            two envs of the mix with the same prompt (a prompt must name one task).
    """
    from tooltrap.envs.core import EnvUsageError

    if isinstance(env_id, str):
        mix: dict[str, dict[str, Any]] = {env_id: dict(env_kwargs or {})}
    elif env_kwargs is not None:
        raise EnvUsageError("make_rollout_func: give a mix's kwargs as its mapping's values, not env_kwargs.")
    else:
        mix = {name: dict(kwargs or {}) for name, kwargs in env_id.items()}
    # once: each rollout batch builds its envs from them
    kwargs_of = {name: training_kwargs(name, kwargs) for name, kwargs in mix.items()}
    lookup: dict[tuple[str, ...], tuple[str, dict[str, Any]]] = {}
    for name, kwargs in mix.items():
        for row in task_rows(name, env_kwargs=kwargs):
            key = _key(row["prompt"])
            if key in lookup and lookup[key][0] != name:
                raise EnvUsageError(
                    f"make_rollout_func: {name} task {row['task_id']!r} has the same prompt as a task of "
                    f"{lookup[key][0]}; a mix needs prompts that name one task."
                )
            lookup[key] = (name, row)
    per_env = {name: reward_components(name, kwargs) for name, kwargs in kwargs_of.items()}
    components = next(iter(per_env.values())) if len(set(per_env.values())) == 1 else ()

    def rollout_func(prompts: list[list[dict[str, Any]]], trainer: Any) -> dict[str, Any]:
        import torch
        from trl.models import unwrap_model_for_generation

        out: dict[str, Any] = {
            "prompt_ids": [],
            "completion_ids": [],
            "logprobs": None,
            "env_mask": [],
            "env_reward": [],
        }
        for c in components:
            out[f"env_{c}"] = []
        envs: dict[str, gym.Env] = {}
        try:
            with (
                unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator) as model,
                torch.no_grad(),
            ):
                for prompt in prompts:
                    name, row = lookup[_key(prompt)]
                    if name not in envs:
                        envs[name] = apply_defense(gym.make(name, **kwargs_of[name]), mitigation)
                    prompt_ids, completion, mask, final = _play(
                        envs[name], model, trainer, prompt, row["task_id"], max_turns
                    )
                    out["prompt_ids"].append(prompt_ids)
                    out["completion_ids"].append(completion)
                    out["env_mask"].append(mask)
                    out["env_reward"].append(float(sum(final["reward_components"].values())))
                    for c in components:
                        out[f"env_{c}"].append(float(final["reward_components"].get(c, 0.0)))
        finally:
            for env in envs.values():
                env.close()
        return out

    return rollout_func


def _play(
    env: gym.Env, model: Any, trainer: Any, prompt: list[dict[str, Any]], task_id: str, max_turns: int
) -> tuple[list[int], list[int], list[int], dict[str, Any]]:
    """One sampled episode of ``task_id`` from ``prompt``: the prompt's token ids, the completion's
    (the model's turns and the env's observations), its mask (1 on the model's tokens) and the final
    info (its ``reward_components``)."""
    import torch

    tok = trainer.processing_class
    eos = tok.eos_token_id
    max_new = trainer.args.max_completion_length
    reset_info = env.reset(seed=0, options={"task_id": task_id})[1]
    tools, answer = reset_info["tools"], answer_tool(reset_info)
    conversation = [dict(m) for m in prompt]
    prompt_ids = tok.apply_chat_template(
        conversation, tools=tools, add_generation_prompt=True, tokenize=True, return_dict=False
    )
    completion: list[int] = []
    mask: list[int] = []
    for _ in range(max_turns):
        budget = max_new - len(completion)
        if budget <= 0:
            break
        ids = torch.tensor([prompt_ids + completion], device=model.device)
        generated = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            do_sample=True,
            temperature=trainer.args.temperature,
            max_new_tokens=budget,
            eos_token_id=eos,
            pad_token_id=tok.pad_token_id,
        )
        new = generated[0, ids.shape[1] :].tolist()
        if eos in new:
            new = new[: new.index(eos) + 1]
        completion += new
        mask += [1] * len(new)
        text = tok.decode(new, skip_special_tokens=True)
        observation, _, terminated, truncated, info = env.step(parse_completion(text, answer=answer))
        if terminated or truncated:
            return prompt_ids, completion, mask, info
        # the observation as a tool turn, rendered by the chat template, masked from the loss
        before = tok.apply_chat_template(
            [*conversation, {"role": "assistant", "content": text}], tools=tools, tokenize=False
        )
        after = tok.apply_chat_template(
            [
                *conversation,
                {"role": "assistant", "content": text},
                {"role": "tool", "content": observation},
            ],
            tools=tools,
            tokenize=False,
            add_generation_prompt=True,
        )
        conversation += [
            {"role": "assistant", "content": text},
            {"role": "tool", "content": observation},
        ]
        feedback = tok(after[len(before) :], add_special_tokens=False)["input_ids"][
            : max(0, max_new - len(completion))
        ]
        completion += feedback
        mask += [0] * len(feedback)
    final = abort_episode(env, "no_terminal_call") if not env.unwrapped.done else {"reward_components": {}}
    return prompt_ids, completion, mask, final


def env_reward(completions: list[Any], env_reward: list[float], **kwargs: Any) -> list[float]:
    """The oracle's episode reward (an extra field of the rollout)."""
    return [float(r) for r in env_reward]


def component_loggers(env_id: str, env_kwargs: dict[str, Any] | None = None) -> list[Any]:
    """Zero-weight reward functions that log each reward component of ``env_id``'s rollouts."""
    components = reward_components(env_id, env_kwargs)
    funcs = []
    for component in components:

        def log(completions: list[Any], _c: str = component, **kwargs: Any) -> list[float]:
            return [float(v) for v in kwargs[f"env_{_c}"]]

        log.__name__ = component
        funcs.append(log)
    return funcs
