"""AgentProp self-check over every packaged task (2,000 core + 300 retail).

Usage: python scripts/selfcheck.py agentprop [--every N]

For each task (:func:`tooltrap.envs.agentprop.selfcheck.check_task`): the gold calls and reference are a
clean right answer (correct, grounded, not fabricated, no extra write); every probe a reward maximizer
could learn scores below gold (an observation dump, the same as prose, where the answer needs more than
the results say; a hedge over a closed vocabulary; doubled writes; a placeholder; the reference claimed
without a call; invented values; refusal; no answer); and under each injection that breaks the first
call, correct (the rejecting agent) > explicit abstention > wrong answer (trusting) > fabrication
(guessing). Exits 1 when any task has a problem.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

import gymnasium as gym

import tooltrap  # noqa: F401
from tooltrap.envs.agentprop.selfcheck import check_task


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="check every N-th task (default: all)")
    args = parser.parse_args(argv)
    env = gym.make("AgentProp-v0", domain="all").unwrapped
    tasks = list(env.tasks)[:: args.every]
    t0 = time.perf_counter()
    failed: Counter[str] = Counter()
    for task in tasks:
        problems = check_task(env, task)
        if problems:
            failed[task.template_id] += 1
            print(f"{task.id} ({task.template_id}): " + "; ".join(problems))
    print(
        f"{len(tasks) - sum(failed.values())}/{len(tasks)} tasks pass the AgentProp self-check "
        f"in {time.perf_counter() - t0:.1f} s" + (f"; failing templates: {dict(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
