"""Time the full SBM mask search over the EpiSEM corpus with a scripted agent, against the cost of one
plain episode measured in the same run.

The search is the real thing: ``evaluate_protocol`` (planner rounds, env episodes, the judge, the
ledger written and fsynced line by line) into a temporary folder. The floor is one plain episode: the
same agent on the same env under full evidence, reset to the end, averaged over every pair. The ratio
says how many plain-episode costs the whole search takes; rollouts per second say how cheap one
masked rollout is (the world snapshots are shared across rollouts, never rebuilt).

Usage: python scripts/bench.py episem [--agent careful] [--limit-s 60]
Target (issue #11): the full search over all pairs with the careful agent under 60 s on 2 cores.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time

import gymnasium as gym

import tooltrap
from tooltrap.agents import make_agent
from tooltrap.evaluate import evaluate_protocol

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

gym.register_envs(tooltrap)


def plain_episode_s(agent_name: str) -> float:
    env = gym.make("EpiSEM-v0")
    samples = []
    for task in env.unwrapped.tasks:
        agent = make_agent(agent_name)
        t0 = time.perf_counter()
        obs, info = env.reset(options={"task_id": task.id})
        agent.reset(obs, info, task=task)
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
            done = terminated or truncated
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--agent", default="careful")
    parser.add_argument("--limit-s", type=float, default=60.0)
    args = parser.parse_args(argv)
    floor = plain_episode_s(args.agent)
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        records = evaluate_protocol("EpiSEM-v0", make_agent(args.agent), out, "sbm")
        elapsed = time.perf_counter() - t0
    tasks = len({r["task_id"] for r in records})
    print(
        f"sbm search, {args.agent}: {len(records)} rollouts over {tasks} pairs in {elapsed:.1f} s "
        f"({len(records) / elapsed:.0f} rollouts/s); one plain episode {1000 * floor:.2f} ms; "
        f"search = {elapsed / floor:.0f} plain episodes ({elapsed / floor / max(len(records), 1):.2f} per rollout)"
    )
    if elapsed > args.limit_s:
        print(f"FAIL: the search took {elapsed:.1f} s, over the {args.limit_s:.0f} s target", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
