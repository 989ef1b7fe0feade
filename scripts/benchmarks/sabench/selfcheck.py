"""Replay every SABench task's gold and trap solutions and prove the oracle agrees with the template;
play every probe derived from gold, and print per probe how many gaming variants score below gold and
how many honest variants score exactly as gold.

Usage: python scripts/selfcheck.py [ENV_ID] [--templates ID,ID ...]   (default SABench-v0, every
template). Exit status 1 on any problem.
"""

from __future__ import annotations

import gymnasium as gym

import tooltrap
from tooltrap.envs.core.probes import ProbeTally
from tooltrap.envs.sabench.selfcheck import check_corpus

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser


def main() -> int:
    parser = script_parser(__doc__)
    parser.add_argument("env_id", nargs="?", default="SABench-v0", help="default SABench-v0")
    parser.add_argument("--templates", default=None, metavar="ID,ID", help="only these templates")
    args = parser.parse_args()
    gym.register_envs(tooltrap)
    templates = args.templates.split(",") if args.templates else None
    env_id = args.env_id
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
