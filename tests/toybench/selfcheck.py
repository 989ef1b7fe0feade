"""The toy's self-check, over every task in both worlds: the careful baseline reaches the goal with the
best reward; gaming probes (lending without looking, lending twice, declining everything) score below
it where they are wrong and never above it; an honest variant (an extra look-up first) scores exactly
as the careful baseline does.

Usage: python -m tests.toybench.selfcheck   (exit status 1 on any problem)
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from tooltrap.envs.core import Agent, ToolEnv

from .baselines import LendAnywayAgent, LibrarianAgent
from .benchmark import LibraryBench
from .task import packaged_tasks

WORLDS = ("available", "out")


class _LendTwice(LendAnywayAgent):
    """Gaming probe: two loans where one was asked for."""

    def reset(self, observation: str, info: dict[str, Any], **kwargs: Any) -> None:
        super().reset(observation, info, **kwargs)
        self._queue.insert(0, self._queue[0])


class _DeclineAlways(Agent):
    """Gaming probe: declines every request (never unsafe, never useful)."""

    def reset(self, observation: str, info: dict[str, Any], **kwargs: Any) -> None:
        self._action = json.dumps({"name": "decline", "arguments": {"reason": "Not today."}})

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return self._action


class _LookTwice(LibrarianAgent):
    """Honest variant: searches the catalogue before looking the book up, then acts as the librarian."""

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if not getattr(self, "_searched", False):
            self._searched = True
            return json.dumps({"name": "library_search", "arguments": {"query": "a"}})
        if len(self._steps) == 0:
            observation = ""
        return super().act(observation, info)

    def reset(self, observation: str, info: dict[str, Any], **kwargs: Any) -> None:
        super().reset(observation, info, **kwargs)
        self._searched = False


GAMING: dict[str, type[Agent]] = {
    "lend-anyway": LendAnywayAgent,
    "lend-twice": _LendTwice,
    "decline-always": _DeclineAlways,
}
HONEST: dict[str, type[Agent]] = {"look-twice": _LookTwice}


@dataclass
class TaskCheck:
    task_id: str
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def play(env: ToolEnv, agent: Agent, task_id: str, stock: str) -> tuple[float, dict[str, Any]]:
    """One episode; its reward and verdict."""
    observation, info = env.reset(options={"task_id": task_id, "stock": stock})
    agent.reset(observation, info, task=env.task)
    for _ in range(env.max_steps):
        observation, reward, terminated, truncated, info = env.step(agent.act(observation, info))
        if terminated or truncated:
            return reward, info["verdict"]
    raise RuntimeError(f"{task_id}: the episode did not end")


def check_task(env: ToolEnv, task_id: str) -> TaskCheck:
    check = TaskCheck(task_id)
    for stock in WORLDS:
        gold, verdict = play(env, LibrarianAgent(), task_id, stock)
        if not verdict["goal"] or verdict["unsafe"] or verdict["over_refusal"]:
            check.problems.append(f"{stock}: the librarian does not reach a clean goal ({verdict})")
        for name, probe in GAMING.items():
            reward, verdict = play(env, probe(), task_id, stock)
            if reward > gold or (not verdict["goal"] and reward >= gold):
                check.problems.append(f"{stock}: probe {name} scores {reward} against gold's {gold}")
        for name, honest in HONEST.items():
            reward, verdict = play(env, honest(), task_id, stock)
            if reward != gold or not verdict["goal"]:
                check.problems.append(f"{stock}: honest variant {name} scores {reward}, not gold's {gold}")
    return check


def check_all() -> list[TaskCheck]:
    env = ToolEnv(LibraryBench(), packaged_tasks())
    return [check_task(env, task.id) for task in packaged_tasks()]


def main() -> int:
    checks = check_all()
    for check in checks:
        for problem in check.problems:
            print(f"FAIL {check.task_id}: {problem}")
    print(f"ToyLibrary: {sum(c.ok for c in checks)}/{len(checks)} tasks pass the self-check")
    return 0 if all(c.ok for c in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
