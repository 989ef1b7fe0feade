"""Time AgentProp-Bench end to end: every task (2,000 core + 300 retail) x the five injection settings
with a scripted agent, judged, through ``evaluate`` (env episodes, the injection hook, the judge, the
ledger written line by line), then the report; and the release reproduction. Printed against a floor
measured in the same run: the gold calls of every task run straight on the simulators (no env, no
agent, no judge), so the ratio says what the env, the agent and the judging cost over the simulators.

Usage: python scripts/bench.py agentprop [--agent trusting] [--limit-s 30] [--reproduce-limit-s 10]
Targets (issue #13): the grid under 30 s and the reproduction under 10 s on 2 cores.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import tooltrap  # noqa: F401
from tooltrap.agents import make_agent
from tooltrap.envs.agentprop.task import gold_outputs, packaged_tasks
from tooltrap.evaluate import evaluate
from tooltrap.wrappers.eval.agentprop.report import REPORT

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

INJECTIONS = ("none", "type_mismatch", "out_of_range", "missing_required", "semantic_wrong")
ROOT = Path(__file__).resolve().parents[3]


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--agent", default="trusting")
    parser.add_argument("--limit-s", type=float, default=30.0)
    parser.add_argument("--reproduce-limit-s", type=float, default=10.0)
    args = parser.parse_args(argv)
    tasks = packaged_tasks()
    t0 = time.perf_counter()
    for task in tasks:
        gold_outputs(task)
    floor = (time.perf_counter() - t0) * len(INJECTIONS)
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        records = evaluate(
            "AgentProp-v0",
            make_agent(args.agent),
            out,
            env_kwargs={"domain": "all"},
            variants=[{"injection": i} for i in INJECTIONS],
        )
        played = time.perf_counter() - t0
    t0 = time.perf_counter()
    REPORT.build({args.agent: records})
    reported = time.perf_counter() - t0
    elapsed = played + reported
    sys.path.insert(0, str(ROOT / "scripts"))
    from reproduce_agentprop import DEFAULT
    from reproduce_agentprop import main as reproduce

    t0 = time.perf_counter()
    status = reproduce(["--release", str(DEFAULT)]) if DEFAULT.exists() else 0
    reproduced = time.perf_counter() - t0
    print(
        f"{args.agent}: {len(records)} episodes ({len(tasks)} tasks x {len(INJECTIONS)} injections) played and "
        f"judged in {played:.1f} s ({len(records) / played:.0f} episodes/s), report {reported:.1f} s; the gold "
        f"calls alone on the simulators {floor:.1f} s: ratio {elapsed / floor:.1f}x"
    )
    print(
        f"release reproduction: {reproduced:.2f} s" + ("" if DEFAULT.exists() else " (no release copy here)")
    )
    ok = elapsed <= args.limit_s and reproduced <= args.reproduce_limit_s and status == 0
    if not ok:
        print(f"over the target: grid {elapsed:.1f} s (limit {args.limit_s:g}), reproduction {reproduced:.1f} s "
              f"(limit {args.reproduce_limit_s:g})", file=sys.stderr)  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
