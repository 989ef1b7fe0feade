"""The EpiSEM report for the four scripted baselines under the full SBM search protocol.

Usage: python scripts/baselines.py episem [--out DIR] [--write-docs | --check] [--resamples N]

Runs ``tooltrap eval EpiSEM-v0 --agent A --protocol sbm`` for careful, trusting, always-refuse,
recover-then-misact and stalling (careful that re-reads to the step cap instead of declining), into
``--out`` (default a temporary folder; reruns resume), writes the report
(``episem.md``, ``metrics.csv``, ``report.json``, the SBM-vs-PUR and funnel figures) next to the
runs, and prints the table. ``--write-docs`` stores the headline numbers, the rollouts each agent
needed and the figures in ``docs/`` (the README's EpiSEM table is generated from them by
``scripts/readme_tables.py``); ``--check`` recomputes and fails when ``docs/episem_baselines.json``
is stale (CI runs it).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

try:
    from _results import baseline_parser, publish, run_folder
except ImportError:  # imported as scripts.episem_baselines (from the tests)
    from scripts._results import baseline_parser, publish, run_folder

import tooltrap  # noqa: F401
from tooltrap.agents import make_agent
from tooltrap.evaluate import evaluate_protocol
from tooltrap.wrappers.eval.episem.report import FUNNEL, METRICS, REPORT

AGENTS = ("careful", "trusting", "always-refuse", "recover-then-misact", "stalling")
DOCS = Path(__file__).resolve().parents[3] / "docs"
RESULT = DOCS / "episem_baselines.json"


def run(out: Path, resamples: int) -> dict:
    runs = {}
    for name in AGENTS:
        runs[name] = evaluate_protocol("EpiSEM-v0", make_agent(name), out / name, "sbm")
    tables = REPORT.build(runs, n_resamples=resamples, seed=0)
    REPORT.write(tables, out / "report")
    REPORT.print_terminal(tables)

    def number(x: float) -> float | None:
        # the value as computed: rounding here and again in a table rounds twice (0.44249 -> 0.4425 -> 0.443)
        return None if math.isnan(x) else float(x)

    return {
        "protocol": "sbm",
        "n_resamples": resamples,
        "agents": {
            r.name: {
                "rollouts": r.n_rollouts,
                "tasks": r.n_tasks,
                "search_complete": r.n_searched,
                "search_incomplete": len(r.incomplete),
                "truncated": r.n_truncated,
                "truncated_boundaries": r.n_truncated_boundaries,
                "metrics": {
                    m: {"value": number(iv.value), "ci_low": number(iv.ci_low), "ci_high": number(iv.ci_high)}
                    for m, iv in r.metrics.items()
                    if m in METRICS
                },
                "funnel": {s: number(r.funnel[s][0]) for s in FUNNEL},
            }
            for r in tables.runs
        },
    }


def main(argv: list[str]) -> int:
    parser = baseline_parser(__doc__)
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args(argv)
    with run_folder(args.out) as out:
        result = run(out, args.resamples)
        text = json.dumps(result, indent=1) + "\n"
        figures = {
            out / "report" / f: DOCS / f"episem_{f}" for f in ("sbm_vs_pur.png", "recovery_funnel.png")
        }
        return publish(
            RESULT, text, figures, write=args.write_docs, check=args.check, script="baselines.py episem"
        )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
