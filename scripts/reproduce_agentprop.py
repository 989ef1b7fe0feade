"""Recompute the AgentProp-Bench release's printed numbers from its result files and print them beside
the printed values.

Usage: python scripts/reproduce_agentprop.py [--release DIR]   (default ../shared/data/agentprop-release)

Exits 1 when a recomputed number differs from the printed one. Numbers that need the unreleased human
labels are listed as not recomputable, never printed as if they were.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from tooltrap.wrappers.eval.agentprop_release import (
    NOT_RECOMPUTABLE,
    ensemble_agreement,
    hop_rates,
    interceptor_hallucination,
    judge_agreement,
    read_rows,
    rejection_recovery_spearman,
    tool_call_rate,
)

DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "agentprop-release"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path, default=DEFAULT)
    args = parser.parse_args(argv)
    results = args.release / "data" / "results"
    if not results.exists():
        print(f"no release copy at {args.release}: nothing to reproduce", file=sys.stderr)
        return 0
    p2 = read_rows(results / "p2_all_rejudged.csv")
    hops = hop_rates(p2)
    released = json.loads((results / "hop_rates.json").read_text(encoding="utf-8"))
    checks: list[tuple[str, float, float, int]] = []  # (what, ours, printed, digits)
    for model, h in hops.items():
        for key in ("p_S1", "p_S2", "p_S3", "r_2_3", "injection_to_error"):
            if h[key] is not None:
                for part in ("point", "lo", "hi"):
                    checks.append((f"{model} {key} {part}", h[key][part], released[model][key][part], 9))
    checks.append(("Spearman(p_S1, r23) over 9 models", rejection_recovery_spearman(hops), 0.126, 3))
    ensemble = ensemble_agreement(read_rows(results / "ensemble_judge.csv"))
    checks.append(("heuristic vs ensemble-majority kappa (n=960)", ensemble["heuristic_kappa"], 0.143, 3))
    checks.append(("unanimous rate", ensemble["unanimous_rate"], 0.729, 3))
    checks.append(
        (
            "judge_agreement kappa",
            judge_agreement(read_rows(results / "judge_agreement.csv"))["cohens_kappa"],
            0.1647,
            4,
        )
    )
    rates = interceptor_hallucination(
        read_rows(results / "interceptor_control_600.csv")
        + read_rows(results / "interceptor_heldout_600.csv")
    )
    for model, before, after in (("gpt4o_mini", 0.558, 0.328), ("gemini_20_flash", 0.445, 0.432)):
        checks.append(
            (f"{model} hallucination without the interceptor", rates[(model, "no_interceptor")], before, 3)
        )
        checks.append(
            (f"{model} hallucination with it (early mode)", rates[(model, "early_interceptor")], after, 3)
        )
    calls = tool_call_rate(p2)
    for model, printed in (
        ("gpt4o_mini", 0.40),
        ("gemini_20_flash", 0.05),
        ("gpt4o", 1.00),
        ("gpt41_nano", 0.99),
    ):
        checks.append((f"{model} tool-call rate", calls[model], printed, 2))
    failed = 0
    for what, ours, printed, digits in checks:
        same = math.isclose(round(ours, digits), round(printed, digits), abs_tol=10 ** -(digits + 1))
        failed += not same
        if digits < 9 or not same:
            print(f"{'ok ' if same else 'DIFF'} {what}: {ours:.{min(digits + 2, 6)}f} (printed {printed})")
    print(
        f"hop rates: {len(hops)} models, every point and interval equal to hop_rates.json"
        if not failed
        else ""
    )
    for name, value in NOT_RECOMPUTABLE.items():
        print(f"not recomputable (needs the 87 unreleased human labels): {name} = {value}")
    print(f"{len(checks) - failed}/{len(checks)} printed numbers reproduced")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
