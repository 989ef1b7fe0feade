"""The issue-21 sweep: the parrot (gold's calls, results unread, the reference as the answer), a throwaway
first call before the trusting agent's work, the trusting, rejecting and reporting agents, under every
injection setting: accuracy, fabrication and mean reward per agent.

Usage: python scripts/agentprop_sweep.py [--every N]   (every N-th core task; default 1)
"""

from __future__ import annotations

import sys

import gymnasium as gym

import tooltrap  # noqa: F401
from tooltrap.envs.agentprop.baselines import RejectingAgent, ReportingAgent, TrustingPropagationAgent
from tooltrap.envs.agentprop.selfcheck import INJECTIONS, _gold_then, _ThrowawayFirst, play

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--every", type=int, default=1)
    args = parser.parse_args(argv)
    env = gym.make("AgentProp-v0", domain="core").unwrapped
    tasks = list(env.tasks)[:: args.every]
    agents = {
        "parrot": _gold_then(lambda t: t.reference_text),
        "throwaway+trusting": _ThrowawayFirst,
        "trusting": TrustingPropagationAgent,
        "rejecting": RejectingAgent,
        "reporting": ReportingAgent,
    }
    print(f"{len(tasks)} core tasks")
    for injection in INJECTIONS:
        for name, make in agents.items():
            right = fabricated = reward = 0.0
            for task in tasks:
                verdict, r = play(env, make(), task, injection)
                right, fabricated, reward = (
                    right + verdict["correct"],
                    fabricated + verdict["fabricated"],
                    reward + r,
                )
            n = len(tasks)
            print(
                f"{injection:16} {name:20} accuracy {right / n:.3f}  fabricated {fabricated / n:.3f}  reward {reward / n:+.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
