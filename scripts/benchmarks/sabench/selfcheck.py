"""Replay every SABench task's gold and trap solutions and prove the oracle agrees with the template;
play every probe derived from gold, and print per probe how many gaming variants score below gold and
how many honest variants score exactly as gold.

Usage: python scripts/selfcheck.py [ENV_ID] [--templates ID,ID ...]   (default SABench-v0, every
template). Exit status 1 on any problem.
"""

from __future__ import annotations

import sys

import gymnasium as gym

import tooltrap
from tooltrap.envs.core.probes import ProbeTally
from tooltrap.envs.sabench.selfcheck import check_corpus


def main() -> int:
    gym.register_envs(tooltrap)
    args = sys.argv[1:]
    templates = None
    if "--templates" in args:
        at = args.index("--templates")
        templates = args[at + 1].split(",")
        del args[at : at + 2]
    env_id = args[0] if args else "SABench-v0"
    env = gym.make(env_id, **({"templates": templates} if templates else {}))
    reports = check_corpus(env.unwrapped)
    bad = [r for r in reports if not r.ok]
    for r in bad:
        for problem in r.problems:
            print(f"FAIL {r.task_id}: {problem}")
    tally = ProbeTally()
    for r in reports:
        tally.add(r.probes)
    for line in tally.lines():
        print(line)
    print(f"{env_id}: {len(reports) - len(bad)}/{len(reports)} tasks pass the self-check")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
