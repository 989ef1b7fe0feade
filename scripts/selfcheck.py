"""Replay every SABench task's gold and trap solutions and prove the oracle agrees with the template.

Usage: python scripts/selfcheck.py [ENV_ID]   (default SABench-v0). Exit status 1 on any problem.
"""

from __future__ import annotations

import sys

import gymnasium as gym

import tooltrap
from tooltrap.envs.sabench.selfcheck import check_corpus


def main() -> int:
    gym.register_envs(tooltrap)
    env_id = sys.argv[1] if len(sys.argv) > 1 else "SABench-v0"
    env = gym.make(env_id)
    reports = check_corpus(env.unwrapped)
    bad = [r for r in reports if not r.ok]
    for r in bad:
        for problem in r.problems:
            print(f"FAIL {r.task_id}: {problem}")
    print(f"{env_id}: {len(reports) - len(bad)}/{len(reports)} tasks pass the self-check")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
