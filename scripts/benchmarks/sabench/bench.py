"""Benchmark scoring + reporting: 11 runs over the whole SABench corpus (2,211 episodes when the
corpus has 201 tasks), every breakdown, 10,000 template resamples. Target (issue #3): under 5 s.

The floor measured in the same run is reading and decoding the runs' episodes.jsonl files.
Usage: python scripts/bench.py sabench [--env SABench-v0] [--resamples 10000] [--work DIR]
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from tooltrap.agents import make_agent
from tooltrap.evaluate import evaluate
from tooltrap.wrappers.eval.sabench.report import SCRIPTED_RUNS, build_report, load_runs, write_report

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser


def main() -> None:
    parser = script_parser(__doc__)
    parser.add_argument("--env", default="SABench-v0")
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--work", default=None, help="folder for the runs (reused when present)")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="tooltrap-bench-report-"))
    dirs = []
    t0 = time.perf_counter()
    for agent, mitigation in SCRIPTED_RUNS:
        out = work / f"{agent}-{mitigation}"
        evaluate(args.env, make_agent(agent), out, mitigation=mitigation)
        dirs.append(out)
    t_eval = time.perf_counter() - t0

    t0 = time.perf_counter()
    n = 0
    for d in dirs:
        with (d / "episodes.jsonl").open() as fh:
            for line in fh:
                json.loads(line)
                n += 1
    t_floor = time.perf_counter() - t0

    t0 = time.perf_counter()
    runs = load_runs(dirs)
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    report = build_report(runs, n_resamples=args.resamples)
    t_analyze = time.perf_counter() - t0
    t0 = time.perf_counter()
    write_report(report, work / "report", figures=False)
    t_write = time.perf_counter() - t0
    t0 = time.perf_counter()
    try:
        from tooltrap.wrappers.eval.sabench.report import plot_figures

        plot_figures(report, work / "report")
        t_fig = time.perf_counter() - t0
    except ImportError:
        t_fig = float("nan")
    total = t_load + t_analyze + t_write
    n_rates = sum(len(r.rates) for r in report.runs)
    print(
        f"{args.env}: {len(dirs)} runs, {n} episodes, {n_rates} rates + {len(report.pairs)} pairwise comparisons, {args.resamples:,} resamples"
    )
    print(f"  (evaluating the runs, not timed below: {t_eval:.1f} s)")
    print(f"  floor: read + decode episodes.jsonl       {t_floor:7.3f} s")
    print(f"  load runs (verdicts)                      {t_load:7.3f} s")
    print(f"  analyze (all rates, CIs, pairwise)        {t_analyze:7.3f} s")
    print(f"  write report.md / metrics.csv / json      {t_write:7.3f} s")
    print(
        f"  scoring + reporting total                 {total:7.3f} s  ({total / t_floor:.1f}x floor)  target < 5 s"
    )
    print(f"  figures (matplotlib, separate)            {t_fig:7.3f} s")
    print(
        json.dumps(
            {
                "episodes": n,
                "floor_s": t_floor,
                "load_s": t_load,
                "analyze_s": t_analyze,
                "write_s": t_write,
                "total_s": total,
                "figures_s": t_fig,
            }
        )
    )


if __name__ == "__main__":
    main()
