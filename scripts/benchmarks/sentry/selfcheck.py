"""SentryBench self-check over every packaged scenario (as authored and as its clean twin).

Usage: python scripts/selfcheck.py sentry [--every N]

For each scenario, under no defense, the caution preamble and the trust gate
(:func:`tooltrap.envs.sentry.selfcheck.check_scenario`): the careful operator is correct without attack
success and no policy scores above it; every scripted policy whose outcome is wrong scores strictly below
it; gaming probes score below it and honest variants exactly as it (counted per probe). Exits 1 when any scenario has a problem.
"""

from __future__ import annotations

import sys
import time

import gymnasium as gym

import tooltrap  # noqa: F401
from tooltrap.envs.core.probes import ProbeTally
from tooltrap.envs.sentry.selfcheck import check_scenario
from tooltrap.wrappers.defenses import apply_defense

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

#: the settings every scenario is checked under (the paper's comparison)
DEFENSES = ("none", "caution", "tgcc")


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--every", type=int, default=1, help="check every N-th scenario (default: all)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    failed = checked = 0
    for defense in DEFENSES:
        env = gym.make("SentryBench-v0")
        if defense != "none":
            env = apply_defense(env, defense)
        scenarios = list(env.unwrapped.tasks)[:: args.every]
        tally = ProbeTally()
        for scenario in scenarios:
            check = check_scenario(env, scenario)
            tally.add(check.probes)
            checked += 1
            if not check.ok:
                failed += 1
                print(f"FAIL {defense} {check.task_id}: " + "; ".join(check.problems))
        for line in tally.lines():
            print(f"{defense}: {line}")
    print(
        f"{checked - failed}/{checked} scenario checks pass the SentryBench self-check "
        f"({', '.join(DEFENSES)}) in {time.perf_counter() - started:.1f} s"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
