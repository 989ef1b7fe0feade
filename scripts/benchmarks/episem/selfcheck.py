"""EpiSEM self-check over family files (default: every packaged family), pair by pair.

Usage: python scripts/selfcheck.py episem [FAMILY.json ...]

Compiles each family (typed errors name the file, the pair and the field), then runs
:func:`tooltrap.envs.episem.selfcheck.check_pair` on every pair: data (witness sets, exposures), gold in
both worlds, no leak under the full critical mask (between the twins, and across alternative worlds
that move each masked atom to boundary values: an undeclared derived field), execution stays possible,
the audit restores exactly
the mask; then the scripted agents on every pair: with full evidence ``careful`` is safe and reaches the
goal in both worlds; under the full critical mask with the audit tool it restores the evidence and
decides right in both worlds (a useful recovery); ``trusting`` commits unsafely under the full
critical mask (the mask really hides the fact); every unsafe commit scores below every other
outcome of the pair; and the judge's probes in both directions
(:mod:`tooltrap.envs.episem.probes`), in both worlds under full, suppressed and recoverable
evidence: every gaming probe below the careful solution, every honest one equal to it, with printed
counts. Exits 1 when any pair has a problem.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tooltrap.agents import make_agent
from tooltrap.envs.core import ToolEnv
from tooltrap.envs.core.probes import ProbeTally, probe_problems
from tooltrap.envs.episem.authoring.family import compile_family, family_files, load_family
from tooltrap.envs.episem.benchmark import EpiSEM, benchmark, build_tasks
from tooltrap.envs.episem.selfcheck import check_pair, check_probes

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

AGENTS = ("careful", "trusting", "always-refuse", "recover-then-misact", "gold")


def play(env: ToolEnv, agent_name: str, task_id: str, **variant: object) -> tuple[dict, float]:
    agent = make_agent(agent_name)
    obs, info = env.reset(options={"task_id": task_id, **variant})
    agent.reset(obs, info, task=env.task)
    while True:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        if terminated or truncated:
            return info["verdict"], reward


def agent_problems(bench: EpiSEM, task) -> list[str]:  # type: ignore[no-untyped-def]
    env = ToolEnv(bench, [task])
    problems = []
    for world in ("unsafe", "safe"):
        verdict, _ = play(env, "careful", task.id, world=world)
        if verdict["unsafe_commit"] or not verdict["goal"]:
            problems.append(f"careful with full evidence in the {world} world: {verdict['disposition']}")
        verdict, _ = play(env, "careful", task.id, world=world, condition="recoverable")
        half = "safe_recovery" if world == "unsafe" else "goal_recovery"
        if not verdict[half]:
            problems.append(f"careful under recoverable in the {world} world: no useful recovery")
    verdict, _ = play(env, "trusting", task.id, condition="suppressed")
    if not verdict["unsafe_commit"]:
        problems.append("trusting does not commit under the full critical mask: the fact still shows")
    unsafe, other = [], []
    for agent in AGENTS:
        for world in ("unsafe", "safe"):
            for condition in ("full", "suppressed", "recoverable"):
                verdict, reward = play(env, agent, task.id, world=world, condition=condition)
                (unsafe if verdict["unsafe_commit"] else other).append(reward)
    if unsafe and other and max(unsafe) >= min(other):
        problems.append(
            f"an unsafe commit scores {max(unsafe)}, not below every other outcome ({min(other)})"
        )
    return problems


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument(
        "families", nargs="*", type=Path, metavar="FILE", help="family files (default: every packaged one)"
    )
    files = parser.parse_args(argv).families
    started = time.perf_counter()
    bench = benchmark()
    if files:
        tasks = []
        for path in files:
            for task in compile_family(load_family(path), source=str(path)):
                bench.check_task(task)
                tasks.append(bench.with_exposures(task))
    else:
        tasks = build_tasks()
    failed = 0
    tally = ProbeTally()
    for task in tasks:
        report = check_pair(bench, task)
        report.problems += agent_problems(bench, task)
        results = check_probes(bench, task)
        tally.add(results)
        report.problems += probe_problems(results)
        if not report.ok:
            failed += 1
            print(f"FAIL {task.id}")
            for problem in report.problems:
                print(f"  - {problem}")
    print("\n".join(tally.lines()))
    families = len({t.family_id for t in tasks})
    print(
        f"{len(tasks) - failed}/{len(tasks)} pairs pass ({families} families, "
        f"{len(family_files())} packaged) in {time.perf_counter() - started:.1f} s"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
