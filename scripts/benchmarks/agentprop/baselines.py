"""AgentProp-Bench's scripted baselines under every injection, with and without the interceptor, and
the report.

Usage: python scripts/baselines.py agentprop [--out DIR] [--write-docs | --check]

Runs ``tooltrap eval AgentProp-v0`` (the 2,000 core tasks) x the five injection settings for the agents
trusting, rejecting, guessing, fabricating and abstaining; then trusting, guessing and rejecting under
the interceptor's early (the reproduction default) and packaged operating points on the same episodes;
and trusting and rejecting on the 300 held-out retail tasks. Writes the report into ``--out`` (default
a temporary folder), prints it, and with ``--write-docs`` stores the numbers in
``docs/agentprop_baselines.json`` (the README's table comes from them) and the stage-rate figure in
``docs/agentprop_stages_by_injection.png``; ``--check`` fails when the numbers are stale.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

try:
    from _results import baseline_parser, publish, run_folder
except ImportError:  # imported as scripts.agentprop_baselines (from the tests)
    from scripts._results import baseline_parser, publish, run_folder

import tooltrap  # noqa: F401
from tooltrap.agents import make_agent
from tooltrap.evaluate import evaluate
from tooltrap.wrappers.eval.agentprop.report import HEADLINE, REPORT

INJECTIONS = ("none", "type_mismatch", "out_of_range", "missing_required", "semantic_wrong")
AGENTS = ("trusting", "rejecting", "guessing", "fabricating", "abstaining")
INTERCEPTED = ("trusting", "guessing", "rejecting")
POINTS = ("interceptor", "interceptor-packaged")
HELD_OUT = ("trusting", "rejecting")
ROOT = Path(__file__).resolve().parents[3]
RESULT = ROOT / "docs" / "agentprop_baselines.json"


def number(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(x, 4)


def run_all(out: Path) -> tuple[dict, dict]:
    grid = [{"injection": i} for i in INJECTIONS]
    core, retail = {}, {}
    for agent in AGENTS:
        core[agent] = evaluate("AgentProp-v0", make_agent(agent), out / agent, variants=grid)
    for agent in INTERCEPTED:
        for point in POINTS:
            name = f"{agent}+{point}"
            core[name] = evaluate(
                "AgentProp-v0", make_agent(agent), out / name, variants=grid, mitigation=point
            )
    for agent in HELD_OUT:
        retail[agent] = evaluate(
            "AgentProp-Retail-v0", make_agent(agent), out / f"retail-{agent}", variants=grid
        )
    return core, retail


def main(argv: list[str]) -> int:
    parser = baseline_parser(__doc__)
    args = parser.parse_args(argv)
    with run_folder(args.out) as out:
        core, retail = run_all(out)
        tables = REPORT.build(core)
        held_out = REPORT.build(retail)
        REPORT.write(tables, out / "report")
        REPORT.write(held_out, out / "report-retail")
        REPORT.print_terminal(tables)
        print("held-out retail:")
        REPORT.print_terminal(held_out)

        def runs(t):  # type: ignore[no-untyped-def]
            return {
                r.name: {m: {"value": number(r.metrics[m].value), "ci_low": number(r.metrics[m].ci_low),
                             "ci_high": number(r.metrics[m].ci_high), "n": r.metrics[m].n} for m in HEADLINE}
                for r in t.runs
            }  # fmt: skip

        result = {
            "core": runs(tables),
            "retail": runs(held_out),
            "rejection_recovery_spearman": number(tables.rejection_recovery_spearman),
            "interceptor": {
                k: {f: number(v) if isinstance(v, float) else v for f, v in c.to_dict().items()}
                for k, c in tables.interceptor.items()
            },
        }
        text = json.dumps(result, indent=1) + "\n"
        figures = {
            out / "report" / "stages_by_injection.png": ROOT / "docs" / "agentprop_stages_by_injection.png"
        }
        return publish(
            RESULT, text, figures, write=args.write_docs, check=args.check, script="baselines.py agentprop"
        )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
