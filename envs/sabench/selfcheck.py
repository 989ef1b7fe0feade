"""Self-check of the SABench corpus (AgentDojo-style): every task's gold solution satisfies the goal
with zero unauthorized writes, every trap solution is flagged with its expected rule(s), every probe
derived from gold (:mod:`~tooltrap.envs.sabench.probes`) is judged as its direction requires (gaming
probes below gold, honest variants exactly at gold), and the characteristic act-first intent is
well-formed.

Run ``python scripts/selfcheck.py`` or see ``tests/sabench/test_corpus.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tooltrap.envs.core import ToolCall, ToolEnv
from tooltrap.envs.core.probes import (
    Outcome,
    ProbeResult,
    ProbeSet,
    ProbeSource,
    probe_problems,
    run_probes,
    verdict_flags,
)

from .judge import SABenchVerdict
from .probes import PROBES
from .task import SABenchTask

TERMINALS = ("respond", "clarify")


def play(
    env: ToolEnv, task_id: str, calls: Sequence[ToolCall | dict[str, Any]], *, finish: bool = True
) -> tuple[SABenchVerdict, float, dict[str, Any]]:
    """Play ``calls`` (one per step) on ``task_id``; add a ``respond`` if no terminal was called."""
    env.reset(options={"task_id": task_id})
    info: dict[str, Any] = {}
    reward = 0.0
    done = False
    actions = [c.to_action() if isinstance(c, ToolCall) else json.dumps(c) for c in calls]
    names = [c.name if isinstance(c, ToolCall) else c["name"] for c in calls]
    if finish and (not names or names[-1] not in TERMINALS):
        actions.append(json.dumps({"name": "respond", "arguments": {"message": "Done."}}))
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            done = True
            break
    if not done:
        raise RuntimeError(f"{task_id}: the solution did not end the episode")
    return env.unwrapped.verdict, reward, info  # type: ignore[attr-defined]


@dataclass
class TaskReport:
    task_id: str
    problems: list[str] = field(default_factory=list)
    #: every probe derived from gold, judged (gaming: below gold; honest: exactly gold)
    probes: list[ProbeResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _outcome(verdict: SABenchVerdict, reward: float) -> Outcome:
    return Outcome(reward, verdict_flags(verdict), verdict.n_invalid_calls)


def check_task(env: ToolEnv, task: SABenchTask, probes: ProbeSet = PROBES) -> TaskReport:
    report = TaskReport(task.id)
    verdict, gold_reward, _ = play(env, task.id, task.gold)
    executed = list(env.unwrapped.trace.calls)  # type: ignore[attr-defined]
    if not verdict.goal:
        report.problems.append("gold does not satisfy the goal")
    if verdict.violations:
        rules = [(v.write.entity, v.rule) for v in verdict.violations]
        report.problems.append(f"gold makes unauthorized writes: {rules}")
    if verdict.n_invalid_calls:
        report.problems.append(f"gold makes {verdict.n_invalid_calls} invalid calls")
    for trap in task.traps:
        tv, _, _ = play(env, task.id, trap.calls)
        if tv.n_invalid_calls:
            report.problems.append(f"trap {trap.name}: {tv.n_invalid_calls} invalid calls")
        found = set(tv.rule_counts)
        missing = set(trap.expected_rules) - found
        if not tv.cd or missing:
            report.problems.append(
                f"trap {trap.name}: expected rules {sorted(trap.expected_rules)}, oracle found {sorted(found)}"
            )
        if trap.expect_external is not None and tv.external_cd != trap.expect_external:
            report.problems.append(
                f"trap {trap.name}: expected external_cd={trap.expect_external}, got {tv.external_cd}"
            )
    body = task.gold[:-1] if task.gold and task.gold[-1].name in TERMINALS else task.gold
    finish = task.gold[len(body) :]
    source = ProbeSource(
        task=task,
        variant=None,
        gold=list(body),
        records=executed[: len(body)],
        finish=list(finish),
        tools=env.unwrapped.executor.toolset.specs,  # type: ignore[attr-defined]
    )

    def play_probe(calls: Sequence[ToolCall]) -> Outcome:
        pv, reward, _ = play(env, task.id, [*calls, *finish])
        return _outcome(pv, reward)

    report.probes = run_probes(task.id, probes.probes(source), _outcome(verdict, gold_reward), play_probe)
    report.problems += probe_problems(report.probes)
    for cand in task.candidates:
        if not task.entity_exists(cand):
            report.problems.append(f"candidate {cand} does not exist")
    if not any("$target" in json.dumps(c.arguments) for c in task.intent):
        report.problems.append("intent never uses $target")
    return report


def check_corpus(env: ToolEnv, probes: ProbeSet = PROBES) -> list[TaskReport]:
    """Check every task of ``env``'s task set."""
    return [check_task(env, task, probes) for task in env.unwrapped.tasks]  # type: ignore[attr-defined]
