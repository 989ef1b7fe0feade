"""SentryBench's scripted baselines under every defense, the report, and the detector's precision and
recall on the real injection and benign rows of the public corpora.

Usage: python scripts/baselines.py sentry [--out DIR] [--data DIR] [--write-docs | --check] [--skip-missing]

Runs ``tooltrap eval SentryBench-v0 --agent A --defense D`` for the agents obedient, cautious,
form-sensitive and careful under none, caution and tgcc (into ``--out``, default a temporary folder),
writes the report (``sentry.md``, ``metrics.csv``, ``report.json``, ``frontier.png``,
``harm_curve.png``), prints it, and prints the detector's precision / recall on ``--data`` (default
``../shared/data/sentry``) with the bound it puts on the gate: the obedient agent's attack success under
tgcc is at most the share of scenario payloads the detector misses. ``--write-docs`` stores the numbers
and figures in ``docs/`` (the README's table comes from them); ``--check`` fails when they are stale.
Without the public datasets the detector's numbers on them cannot be computed: the script says so and
fails, unless ``--skip-missing`` (then ``--check`` checks everything else; ``--write-docs`` is refused,
as it would store the numbers without them).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

try:
    from _results import add_skip_missing, baseline_parser, missing_data, publish, run_folder
except ImportError:  # imported as scripts.sentry_baselines (from the tests)
    from scripts._results import add_skip_missing, baseline_parser, missing_data, publish, run_folder

import tooltrap  # noqa: F401
from tooltrap.agents import make_agent
from tooltrap.envs.sentry import packaged_scenarios
from tooltrap.envs.sentry.authoring.loaders import load_payload_rows
from tooltrap.evaluate import evaluate
from tooltrap.wrappers.defenses.detector import THRESHOLD, detector_report, injection_score
from tooltrap.wrappers.eval.sentry.report import METRICS, REPORT

AGENTS = ("obedient", "cautious", "form-sensitive", "careful")
DEFENSES = ("none", "caution", "tgcc")
ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
RESULT = DOCS / "sentry_baselines.json"
SHARED = ROOT.parent / "shared" / "data" / "sentry"
DETECTOR_FILES = (
    "deepset_prompt_injections/train.csv",
    "deepset_prompt_injections/test.csv",
    "jackhhao_jailbreak_classification/balanced/jailbreak_dataset_train_balanced.csv",
    "jackhhao_jailbreak_classification/balanced/jailbreak_dataset_test_balanced.csv",
)


def number(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(x, 4)


def detector_numbers(data: Path) -> dict:
    out = {}
    for relative in DETECTOR_FILES:
        path = data / relative
        if not path.exists():
            continue
        rows = load_payload_rows(path)
        rep = detector_report((r.text, r.label == "injection") for r in rows)
        out[relative] = {"n_injection": rep.n_injection, "n_benign": rep.n_benign, "precision": number(rep.precision),
                         "recall": number(rep.recall), "false_positive_rate": number(rep.false_positive_rate)}  # fmt: skip
    payloads = [t.attack.payload for t in packaged_scenarios() if t.attack is not None]
    caught = sum(injection_score(p) >= THRESHOLD for p in payloads)
    out["scenario_payloads"] = {"n": len(payloads), "recall": number(caught / len(payloads))}
    return out


def main(argv: list[str]) -> int:
    parser = baseline_parser(__doc__)
    parser.add_argument("--data", type=Path, default=SHARED, help=f"the public datasets (default {SHARED})")
    add_skip_missing(parser)
    args = parser.parse_args(argv)
    absent = [f for f in DETECTOR_FILES if not (args.data / f).exists()]
    if absent and (args.write_docs or not args.skip_missing):
        # --write-docs would store the numbers without the detector's: never, even when told to skip
        return missing_data(
            f"public dataset files ({', '.join(absent)})",
            args.data,
            skip=False,
            hint="Give their folder with --data DIR."
            + (" --write-docs needs them." if args.write_docs else ""),
        )
    with run_folder(args.out) as out:
        runs = {}
        for agent in AGENTS:
            for defense in DEFENSES:
                name = f"{agent}+{defense}"
                runs[name] = evaluate(
                    "SentryBench-v0",
                    make_agent(agent),
                    out / name,
                    mitigation=None if defense == "none" else defense,
                )
        tables = REPORT.build(runs)
        REPORT.write(tables, out / "report")
        REPORT.print_terminal(tables)
        detector = detector_numbers(args.data)
        for name, d in detector.items():
            print(f"detector on {name}: " + ", ".join(f"{k} {v}" for k, v in d.items()))
        result = {
            "runs": {
                r.name: {
                    m: {
                        "value": number(r.model[m].value),
                        "ci_low": number(r.model[m].ci_low),
                        "ci_high": number(r.model[m].ci_high),
                        "n": r.model[m].n,
                        "upper_bound": number(r.model[m].upper_bound),
                    }
                    for m in METRICS
                }
                for r in tables.runs
            },  # fmt: skip
            "dominance": [list(d) for d in tables.dominance],
            "detector": detector,
        }
        text = json.dumps(result, indent=1) + "\n"
        figures = {out / "report" / f: DOCS / f"sentry_{f}" for f in ("frontier.png", "harm_curve.png")}
        if args.check and RESULT.exists() and not all((args.data / f).exists() for f in DETECTOR_FILES):
            # without the public datasets the detector's numbers on them cannot be recomputed: check the rest
            stored = json.loads(RESULT.read_text(encoding="utf-8"))
            stored["detector"] = {k: v for k, v in stored["detector"].items() if k in result["detector"]}
            print(
                f"skipped (--skip-missing): {args.data} is missing; the detector's numbers on the real rows are not checked"
            )
            text = json.dumps(result, indent=1) + "\n"
            if json.dumps(stored, indent=1) + "\n" == text:
                print(f"{RESULT} is current (without the real-row detector numbers)")
                return 0
            print(f"stale: {RESULT} (run python scripts/baselines.py sentry --write-docs)", file=sys.stderr)
            return 1
        return publish(
            RESULT, text, figures, write=args.write_docs, check=args.check, script="baselines.py sentry"
        )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
