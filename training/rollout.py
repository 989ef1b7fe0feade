"""A TRL ``rollout_func`` that plays multi-turn episodes through the gymnasium env.

Each prompt is matched to its task, the model generates a turn, the turn is parsed (Hermes
``<tool_call>`` tags, bare JSON, or plain text as the final answer) and stepped through the env; the
env's observation is rendered with the chat template as a tool turn and appended to the completion
with ``env_mask = 0`` so it is excluded from the loss. The episode's reward and its components come
back as extra fields, read by :func:`env_reward` and the component loggers.
"""

from __future__ import annotations

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
    env_id: str,
    *,
    env_kwargs: dict[str, Any] | None = None,
    mitigation: str | None = None,
    max_turns: int = 16,
):
    """Build ``rollout_func(prompts, trainer)`` for ``GRPOTrainer(rollout_func=...)``. Its extra
    fields ``env_<component>`` carry the benchmark's reward components (see :func:`component_loggers`)."""
    rows = task_rows(env_id, env_kwargs=env_kwargs)
    lookup = {_key(r["prompt"]): r for r in rows}
    kwargs = training_kwargs(env_id, env_kwargs or {})  # once: each rollout batch builds its env from it
    components = reward_components(env_id, kwargs)

    def rollout_func(prompts: list[list[dict[str, Any]]], trainer: Any) -> dict[str, Any]:
        import torch
        from trl.models import unwrap_model_for_generation

        tok = trainer.processing_class
        eos = tok.eos_token_id
        max_new = trainer.args.max_completion_length
        out: dict[str, Any] = {
            "prompt_ids": [],
            "completion_ids": [],
            "logprobs": None,
            "env_mask": [],
            "env_reward": [],
        }
        for c in components:
            out[f"env_{c}"] = []
        env = apply_defense(gym.make(env_id, **kwargs), mitigation)
        with (
            unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator) as model,
            torch.no_grad(),
        ):
            for prompt in prompts:
                row = lookup[_key(prompt)]
                reset_info = env.reset(seed=0, options={"task_id": row["task_id"]})[1]
                tools, answer = reset_info["tools"], answer_tool(reset_info)
                conversation = [dict(m) for m in prompt]
                prompt_ids = tok.apply_chat_template(
                    conversation, tools=tools, add_generation_prompt=True, tokenize=True, return_dict=False
                )
                completion: list[int] = []
                mask: list[int] = []
                final: dict[str, Any] | None = None
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
                    observation, _, terminated, truncated, info = env.step(
                        parse_completion(text, answer=answer)
                    )
                    if terminated or truncated:
                        final = info
                        break
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
                if final is None:
                    final = (
                        abort_episode(env, "no_terminal_call")
                        if not env.unwrapped.done
                        else {"reward_components": {}}
                    )
                out["prompt_ids"].append(prompt_ids)
                out["completion_ids"].append(completion)
                out["env_mask"].append(mask)
                out["env_reward"].append(float(sum(final["reward_components"].values())))
                for c in components:
                    out[f"env_{c}"].append(float(final["reward_components"].get(c, 0.0)))
        env.close()
        return out

    return rollout_func


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
