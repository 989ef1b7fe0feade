"""The toy's self-check, over every task in both worlds: the careful baseline reaches the goal with the
best reward; gaming probes (lending without looking, lending twice, declining everything) score below
it in the world where they are wrong; an honest variant (an extra look-up first) scores exactly as the
careful baseline does. The probes are declared as a ``ProbeSet`` of agent factories and run by the
engine's mechanism (``tooltrap.envs.core.probes``), as a real benchmark's are.

Usage: python -m tests.toybench.selfcheck   (exit status 1 on any problem)
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from tooltrap.envs.core import Agent, ToolEnv
from tooltrap.envs.core.probes import (
    Direction,
    Outcome,
    ProbeGenerator,
    ProbeResult,
    ProbeSet,
    ProbeSource,
    ProbeTally,
    probe,
    probe_problems,
    run_probes,
    verdict_flags,
)

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


def _only_in(stock: str, kind: str, agent: type[Agent]) -> ProbeGenerator:
    """A probe that is wrong only in the ``stock`` world (where the book is, or is not, on the shelf)."""
    return probe(
        kind, "gaming", lambda source: agent if (source.variant or {}).get("stock") == stock else None
    )


def _always(kind: str, direction: Direction, agent: type[Agent]) -> ProbeGenerator:
    return probe(kind, direction, lambda source: agent)


#: the toy's probes in both directions (the engine's mechanism: tooltrap.envs.core.probes)
PROBES = ProbeSet(
    gaming=(
        _only_in("out", "lend-anyway", LendAnywayAgent),
        _always("lend-twice", "gaming", _LendTwice),
        _only_in("available", "decline-always", _DeclineAlways),
    ),
    honest=(_always("look-twice", "honest", _LookTwice),),
)


@dataclass
class TaskCheck:
    task_id: str
    problems: list[str] = field(default_factory=list)
    probes: list[ProbeResult] = field(default_factory=list)

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


def _outcome(reward: float, verdict: dict[str, Any]) -> Outcome:
    return Outcome(reward, verdict_flags(verdict))


def check_task(env: ToolEnv, task_id: str, probes: ProbeSet = PROBES) -> TaskCheck:
    check = TaskCheck(task_id)
    for stock in WORLDS:
        gold, verdict = play(env, LibrarianAgent(), task_id, stock)
        if not verdict["goal"] or verdict["unsafe"] or verdict["over_refusal"]:
            check.problems.append(f"{stock}: the librarian does not reach a clean goal ({verdict})")
        source = ProbeSource(task=env.task, variant={"stock": stock})
        results = run_probes(
            f"{task_id}@{stock}",
            probes.probes(source),
            _outcome(gold, verdict),
            lambda agent, stock=stock: _outcome(*play(env, agent(), task_id, stock)),
        )
        check.probes += results
        check.problems += probe_problems(results, f"{stock}: ")
    return check


def check_all() -> list[TaskCheck]:
    env = ToolEnv(LibraryBench(), packaged_tasks())
    return [check_task(env, task.id) for task in packaged_tasks()]


def main() -> int:
    checks = check_all()
    tally = ProbeTally()
    for check in checks:
        tally.add(check.probes)
        for problem in check.problems:
            print(f"FAIL {check.task_id}: {problem}")
    for line in tally.lines():
        print(line)
    print(f"ToyLibrary: {sum(c.ok for c in checks)}/{len(checks)} tasks pass the self-check")
    return 0 if all(c.ok for c in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
