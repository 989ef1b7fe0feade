"""AgentProp self-check over every packaged task (2,000 core + 300 retail).

Usage: python scripts/selfcheck.py agentprop [--every N]

For each task and injection setting (:func:`tooltrap.envs.agentprop.selfcheck.check_task`): gold (the
rejecting agent) is a clean right answer; every gaming probe scores below it and every honest variant
exactly as it (counts per probe are printed); under each injection type the outcomes are ordered
repaired > honest report or abstention > wrong > fabricated. Exits 1 when any task has a problem.
"""

from __future__ import annotations

import sys
import time
from collections import Counter

import gymnasium as gym

import tooltrap  # noqa: F401
from tooltrap.envs.agentprop.selfcheck import DetectorTable, check_task
from tooltrap.envs.core.probes import ProbeTally

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--every", type=int, default=1, help="check every N-th task (default: all)")
    args = parser.parse_args(argv)
    env = gym.make("AgentProp-v0", domain="all").unwrapped
    tasks = list(env.tasks)[:: args.every]
    t0 = time.perf_counter()
    failed: Counter[str] = Counter()
    tally = ProbeTally()
    table = DetectorTable()
    for task in tasks:
        check = check_task(env, task)
        tally.add(check.probes)
        table.add(check.labelled)
        if check.problems:
            failed[task.template_id] += 1
            print(f"{task.id} ({task.template_id}): " + "; ".join(check.problems))
    for line in tally.lines():
        print(line)
    for line in table.lines():
        print(line)
    if not table.meets_targets():
        print("FAIL: the fabrication detector misses its targets on the labelled set")
        failed["detector targets"] += 1
    print(
        f"{len(tasks) - sum(failed.values())}/{len(tasks)} tasks pass the AgentProp self-check "
        f"in {time.perf_counter() - t0:.1f} s" + (f"; failing templates: {dict(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
