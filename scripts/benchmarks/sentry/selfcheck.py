"""SentryBench self-check over every packaged scenario (as authored and as its clean twin).

Usage: python scripts/selfcheck.py sentry [--every N]

For each scenario (:func:`tooltrap.envs.sentry.selfcheck.check_scenario`): the careful operator is
correct without attack success, and every scripted policy whose outcome is wrong scores strictly below
it. A correct policy that scores above it is counted as a note. Exits 1 when any scenario has a problem.
"""

from __future__ import annotations

import argparse
import sys
import time

import gymnasium as gym

import tooltrap  # noqa: F401
from tooltrap.envs.sentry.selfcheck import check_scenario


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="check every N-th scenario (default: all)")
    args = parser.parse_args(argv)
    env = gym.make("SentryBench-v0").unwrapped
    scenarios = list(env.tasks)[:: args.every]
    started = time.perf_counter()
    failed = noted = 0
    for scenario in scenarios:
        check = check_scenario(env, scenario)
        noted += bool(check.notes)
        if not check.ok:
            failed += 1
            print(f"FAIL {check.task_id}: " + "; ".join(check.problems))
    print(
        f"{len(scenarios) - failed}/{len(scenarios)} scenarios pass the SentryBench self-check "
        f"in {time.perf_counter() - started:.1f} s; {noted} where a correct policy scores above the careful "
        "operator (escalation earns containment on top of the goal)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
