"""Training one role of a multi-agent env with TRL, the other roles fixed policies
(:class:`~tooltrap.envs.multiagent.single_role.SingleRoleEnv`).

A text role (the gate) decides once per turn, so each of its turns is a prompt: the role's system prompt
and its observation at that turn, reached by replaying the episode with the fixed policies and a
``teacher`` (a scripted policy of the role) for the role's earlier turns. :func:`role_rows` lists them
(``completion``: the teacher's action, the SFT demonstration); :func:`role_reward` is the GRPO reward
with the env in the loop: the completion is played as the role's action at that turn, the teacher plays
the role's later turns, and the reward is the role's from the judge at the end. An action the env
rejects (a simulator error: not one of the role's choices) scores :data:`INVALID_REWARD`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tooltrap.envs.multiagent.single_role import SingleRoleEnv

#: the reward of an action the env rejects as none of the role's choices (below any judged outcome)
INVALID_REWARD = -1.0


def _text(completion: Any) -> str:
    if isinstance(completion, list):
        completion = completion[-1].get("content", "") if completion else ""
    return str(completion or "").strip()


def _reach(
    view: SingleRoleEnv, teacher: Any, task_index: int, turn: int, seed: int | None
) -> tuple[str, dict]:
    """Reset episode ``task_index`` and play the teacher for the role's first ``turn`` turns."""
    observation, info = view.reset(seed=seed, options={"task_index": task_index})
    if hasattr(teacher, "reset"):
        teacher.reset(observation, info)
    for _ in range(turn):
        observation, _, _, _, info = view.step(teacher.act(observation, info))
    return observation, info


def role_rows(
    make_view: Callable[[], SingleRoleEnv],
    teacher: Callable[[], Any],
    prompt: str,
    task_indices: Sequence[int],
    *,
    seed: int | None = None,
) -> list[dict[str, Any]]:
    """One row per turn of the learning role over the episodes ``task_indices``: ``prompt`` (system +
    the role's observation), ``completion`` (the teacher's action), ``task_index`` and ``turn``."""
    rows: list[dict[str, Any]] = []
    view = make_view()
    for index in task_indices:
        policy = teacher()
        observation, info = view.reset(seed=seed, options={"task_index": index})
        if info.get("ended"):
            continue
        if hasattr(policy, "reset"):
            policy.reset(observation, info)
        turn, done = 0, False
        while not done:
            action = policy.act(observation, info)
            rows.append(
                {
                    "prompt": [
                        {"role": "system", "content": prompt},
                        {"role": "user", "content": observation},
                    ],
                    "completion": [{"role": "assistant", "content": action}],
                    "task_index": index,
                    "turn": turn,
                }
            )
            observation, _, terminated, truncated, info = view.step(action)
            turn, done = turn + 1, terminated or truncated
    return rows


def role_reward(
    make_view: Callable[[], SingleRoleEnv], teacher: Callable[[], Any], *, seed: int | None = None
) -> Callable[..., list[float]]:
    """A TRL reward function ``(completions, task_index, turn, **kwargs) -> rewards``: each completion
    played as the role's action at its row's turn (the teacher before and after), scored by the judge."""
    view = make_view()

    def reward(completions: list[Any], task_index: list[int], turn: list[int], **kwargs: Any) -> list[float]:
        out = []
        for completion, index, k in zip(completions, task_index, turn, strict=True):
            policy = teacher()
            _reach(view, policy, int(index), int(k), seed)
            observation, total, terminated, truncated, info = view.step(_text(completion))
            if info.get("simulator_error"):
                out.append(INVALID_REWARD)
                continue
            while not (terminated or truncated):
                observation, r, terminated, truncated, info = view.step(policy.act(observation, info))
                total += r
            out.append(float(total))
        return out

    reward.__name__ = "role_reward"
    return reward
