"""Recompute the AgentProp-Bench release's printed numbers from its result files and print them beside
the printed values.

Usage: python scripts/reproduce_agentprop.py [--release DIR] [--write-docs | --check] [--skip-missing]
(default DIR: ../shared/data/agentprop-release)

Exits 1 when a recomputed number differs from the printed one, and when there is no release copy at
DIR (nothing reproduced), unless ``--skip-missing`` says that is expected. ``--write-docs`` stores the comparison in
``docs/agentprop_reproduction.json`` (the README's reproduction table comes from it); ``--check`` fails
when that file is stale. Numbers that need the unreleased human labels, or the paper's 13 models (the
release has 9), are listed as not recomputable, never printed as if they were.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

try:
    from _results import add_skip_missing, missing_data, publish
except ImportError:  # imported as scripts.reproduce_agentprop (from the tests)
    from scripts._results import add_skip_missing, missing_data, publish

from tooltrap.wrappers.eval.agentprop.judges import release_human_agreement
from tooltrap.wrappers.eval.agentprop.release import (
    NEEDS_THIRTEEN_MODELS,
    NOT_RECOMPUTABLE,
    PRINTED_CALIBRATION,
    ensemble_agreement,
    ensemble_correctness,
    format_interval,
    heuristic_overcount,
    hop_rates,
    injected_correctness,
    injection_to_error_range,
    interceptor_hallucination,
    judge_agreement,
    read_latex_table,
    read_rows,
    rejection_and_recovery,
    rejection_recovery_spearman,
    results_table,
    tool_call_rate,
)

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "agentprop-release"
RESULT = Path(__file__).resolve().parent.parent / "docs" / "agentprop_reproduction.json"


#: (what, ours, printed, digits): a printed number and the digits it is printed to (9: a released file's
#: full float)
Check = tuple[str, float, float, int]

#: what each group of not-recomputable numbers needs
NOT_RECOMPUTABLE_BECAUSE = (
    ("the 87 unreleased human labels", NOT_RECOMPUTABLE),
    ("the 13 models, 9 released", NEEDS_THIRTEEN_MODELS),
)

#: (printed table, baseline file, P2 file, the columns it prints after the model)
TABLES = (
    ("table1_main", "baseline_all.csv", "p2_all.csv", ("n_B", "n_P2", "baseline", "p2", "eps")),
    ("table5_retail", "baseline_retail.csv", "p2_retail.csv", ("n_P2", "baseline", "p2", "eps")),
)


def table_cells(release: Path, results: Path) -> list[tuple[str, str, str]]:
    """(what, ours, printed) for every cell of Tables 1 and 5, formatted as the tables print them."""
    out = []
    for table, baseline, p2, columns in TABLES:
        printed = read_latex_table(release / "paper" / "tables" / f"{table}.tex")
        ours = results_table(read_rows(results / baseline), read_rows(results / p2))
        for model, cells in printed.items():
            for column, cell in zip(columns, cells, strict=True):
                value = ours[model][column] if model in ours else None
                if column.startswith("n_"):
                    text = str(value)
                elif column == "eps":
                    text = format_interval(value, digits=2)
                else:
                    text = format_interval(value, scale=100.0)
                out.append((f"{table} {model} {column}", text, cell))
    return out


def number_checks(results: Path, p2: list[dict[str, str]], hops: dict[str, dict[str, Any]]) -> list[Check]:
    """Every printed number outside Tables 1 and 5 beside ours: ``hop_rates.json`` in full, then the
    headline numbers of the paper and its tables, each to the digits it is printed with."""
    released = json.loads((results / "hop_rates.json").read_text(encoding="utf-8"))
    checks: list[Check] = []
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
    # "P2 correctness falls from 24.4% to 16.2% (GPT-4o-mini) and from 36.0% to 24.3% (o3-mini)": the
    # ensemble on every baseline session, then on the injected (S1) ones
    baseline = ensemble_correctness(read_rows(results / "baseline_all_rejudged.csv"))
    injected = injected_correctness(hops)
    for model, before, after in (("gpt4o_mini", 0.244, 0.162), ("o3_mini", 0.360, 0.243)):
        checks.append((f"{model} ensemble correctness, baseline", baseline[model], before, 3))
        checks.append(
            (f"{model} ensemble correctness, injected (1 - injection to error)", injected[model], after, 3)
        )
    for judge, printed in (("gpt4o_mini", 0.770), ("gpt4o", 0.792), ("gemini_25_flash", 0.821)):
        checks.append((f"Table 3 {judge} kappa vs ensemble majority", ensemble[f"{judge}_kappa"], printed, 3))
    checks.append(
        ("heuristic over-count of P2 correctness vs the ensemble", heuristic_overcount(p2), 0.34, 2)
    )
    for calibrated, (low, high) in ((False, (0.57, 0.90)), (True, (0.53, 0.70))):
        label = (
            f"calibrated ({PRINTED_CALIBRATION[0]} / {PRINTED_CALIBRATION[1]})" if calibrated else "ensemble"
        )
        lowest, highest = injection_to_error_range(hops, calibrated=calibrated)
        checks.append((f"injection to error over models, lowest, {label}", lowest, low, 2))
        checks.append((f"injection to error over models, highest, {label}", highest, high, 2))
    robustness = rejection_and_recovery(hops)
    checks.append(("gpt41_nano rejection (1 - p_S1)", robustness["gpt41_nano"]["rejection"], 0.375, 3))
    checks.append(("gpt41_nano recovery (1 - r23)", robustness["gpt41_nano"]["recovery"], 0.029, 3))
    checks.append(
        ("gemini_20_flash rejection (1 - p_S1)", robustness["gemini_20_flash"]["rejection"], 0.95, 2)
    )
    for model, change in (("gpt4o_mini", -0.230), ("gemini_20_flash", -0.013)):
        checks.append(
            (
                f"{model} hallucination change with the interceptor",
                rates[(model, "early_interceptor")] - rates[(model, "no_interceptor")],
                change,
                3,
            )
        )
    return checks


def reproduced(ours: float, printed: float, digits: int) -> bool:
    """Whether ``ours`` prints as ``printed`` at ``digits`` decimals."""
    return math.isclose(round(ours, digits), round(printed, digits), abs_tol=10 ** -(digits + 1))


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--release", type=Path, default=DEFAULT)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write-docs", action="store_true")
    mode.add_argument("--check", action="store_true")
    add_skip_missing(parser)
    args = parser.parse_args(argv)
    results = args.release / "data" / "results"
    if not results.is_dir():  # --check too: without the release the stored comparison cannot be recomputed
        return missing_data(
            "AgentProp-Bench release copy (data/results)",
            args.release,
            skip=args.skip_missing,
            hint="Give its folder with --release DIR.",
        )
    p2 = read_rows(results / "p2_all_rejudged.csv")
    hops = hop_rates(p2)
    checks = number_checks(results, p2, hops)
    cells = table_cells(args.release, results)
    failed = 0
    for what, ours, printed, digits in checks:
        same = reproduced(ours, printed, digits)
        failed += not same
        if digits < 9 or not same:
            print(f"{'ok ' if same else 'DIFF'} {what}: {ours:.{min(digits + 2, 6)}f} (printed {printed})")
    print(
        f"hop rates: {len(hops)} models, every point and interval equal to hop_rates.json"
        if not failed
        else ""
    )
    for what, ours, printed in cells:
        same = ours == printed
        failed += not same
        if not same:
            print(f"DIFF {what}: {ours} (printed {printed})")
    for table in sorted({what.split(" ", 1)[0] for what, _, _ in cells}):
        mine = [c for c in cells if c[0].startswith(table + " ")]
        print(f"{table}: {sum(o == p for _, o, p in mine)}/{len(mine)} printed cells equal")
    for needs, numbers in NOT_RECOMPUTABLE_BECAUSE:
        for name, value in numbers.items():
            print(f"not recomputable (needs {needs}): {name} = {value}")
    total = len(checks) + len(cells)
    print(f"{total - failed}/{total} printed numbers reproduced")
    labels = release_human_agreement(args.release)
    print(
        f"on the {labels['n']} released human labels only (not the paper's 100): human vs heuristic kappa "
        f"{labels['human_vs_heuristic']['kappa']:.3f}, human vs ensemble kappa {labels['human_vs_ensemble']['kappa']:.3f}"
    )
    document = {
        "reproduced": f"{total - failed}/{total}",
        "headline": [
            {"what": what, "ours": round(ours, digits), "printed": printed}
            for what, ours, printed, digits in checks
            if digits < 9
        ],
        "hop_rates": {
            model: {k: h[k] for k in ("n", "p_S1", "p_S2", "p_S3", "r_2_3", "injection_to_error")}
            for model, h in hops.items()
        },
        "tables": {
            table: f"{sum(o == p for w, o, p in cells if w.startswith(table + ' '))}/"
            f"{sum(w.startswith(table + ' ') for w, _, _ in cells)}"
            for table in sorted({what.split(" ", 1)[0] for what, _, _ in cells})
        },
        "not_recomputable": NOT_RECOMPUTABLE,
        "not_recomputable_13_models": NEEDS_THIRTEEN_MODELS,
        "released_models": len(hops),
        "released_s2_traces": sum(h["n_S2"] for h in hops.values()),
        "released_human_labels": {
            "n": labels["n"],
            "human_vs_heuristic_kappa": round(labels["human_vs_heuristic"]["kappa"], 4),
            "human_vs_ensemble_kappa": round(labels["human_vs_ensemble"]["kappa"], 4),
        },
    }
    text = json.dumps(document, indent=1) + "\n"
    published = publish(
        RESULT, text, {}, write=args.write_docs, check=args.check, script="reproduce_agentprop.py"
    )
    return 1 if failed or published else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
