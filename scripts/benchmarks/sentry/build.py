"""Build SentryBench scenario sets.

Usage:
  python scripts/build.py sentry                 # the packaged corpus from the bundled pools
  python scripts/build.py sentry --check         # fail when data/scenarios.json is stale
  python scripts/build.py sentry --data DIR --out FILE [--seed N]
                                                        # a scenario set from real files (never packaged)
  python scripts/build.py sentry --refresh-payloads --data DIR
                                                        # re-sample the bundled payload excerpts

``DIR`` holds the public datasets as in ``../shared/data/sentry`` (see its PROVENANCE.md): with
``--data``, the terse reports are Figure Eight disaster messages (related, English, long enough, no
PII flag, an actionable category), sampled without replacement with the seed, and the payload
excerpts come from deepset/prompt-injections and jackhhao/jailbreak-classification. The Figure Eight
messages have no stated license: a set built from them stays on your machine (``--out``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

try:
    from _results import write_or_check
except ImportError:  # imported as scripts.build_sentry_corpus (from the tests)
    from scripts._results import write_or_check

from tooltrap.envs.sentry.authoring.corpus import build_scenarios, load_pool
from tooltrap.envs.sentry.authoring.loaders import (
    english_payloads,
    load_disaster_messages,
    load_payload_rows,
    sample,
)

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

DATA = Path(__file__).resolve().parents[3] / "envs" / "sentry" / "data"
#: Figure Eight category -> (incident type, responder, alert severity or None)
ACTIONABLE = {
    "fire": ("fire", "fire", None),
    "search_and_rescue": ("structural", "rescue", None),
    "medical_help": ("medical", "ems", None),
    "floods": ("flood", "rescue", "warning"),
    "earthquake": ("structural", "rescue", "warning"),
    "storm": ("storm", "rescue", "watch"),
    "security": ("crime", "police", None),
}
PAYLOAD_FILES = (
    ("deepset_prompt_injections/train.csv", "Apache-2.0 (deepset/prompt-injections)"),
    (
        "jackhhao_jailbreak_classification/balanced/jailbreak_dataset_train_balanced.csv",
        "MIT (jackhhao/jailbreak-classification)",
    ),
)


def real_payloads(data: Path, n_each: int, seed: int) -> list[dict]:
    out = []
    for relative, license_ in PAYLOAD_FILES:
        rows = english_payloads(load_payload_rows(data / relative), max_chars=300)
        for row in sample(rows, n_each, seed):
            out.append(
                {"id": f"pl-{len(out) + 1:03d}", "text": row.text, "source": row.source, "license": license_}
            )
    return out


def real_reports(data: Path, content: dict, n: int, seed: int) -> dict:
    """The bundled content with its terse reports replaced by real disaster messages."""
    rows = load_disaster_messages(data / "figure8_disaster_response_splits")
    usable = [
        r
        for r in rows
        if r.categories and any(c in ACTIONABLE for c in r.categories) and "direct_report" in r.categories
    ]
    chosen = sample(usable, n, seed)
    locations = content["locations"]
    # the escalation cases stay authored: a real disaster message is an emergency, never a case to escalate
    items = [i for i in content["items"] if i["form"] != "report" or i["kind"] == "escalate"]
    for k, row in enumerate(chosen):
        category = next(c for c in row.categories if c in ACTIONABLE)
        incident, unit, severity = ACTIONABLE[category]
        loc = locations[k % len(locations)]
        items.append({
            "id": f"rp-real-{k + 1:03d}", "form": "report", "kind": "emergency", "urgent": True,
            "incident_type": incident, "unit_type": unit, "location": loc["id"], "caller": None,
            "alert": {"district": loc["district"], "severity": severity, "hazard": incident} if severity else None,
            "text": row.text, "source": row.source,
        })  # fmt: skip
    return {**content, "items": items}


def render(scenarios: list) -> str:
    rows = [s.model_dump(mode="json") for s in scenarios]
    return json.dumps({"tasks": rows}, ensure_ascii=False, separators=(",", ":")) + "\n"


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--refresh-payloads", action="store_true")
    args = parser.parse_args(argv)
    if args.refresh_payloads:
        if args.data is None:
            parser.error("--refresh-payloads needs --data DIR")
        payloads = real_payloads(args.data, 40, args.seed)
        (DATA / "payloads.json").write_text(
            json.dumps(payloads, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        print(f"{len(payloads)} payload excerpts -> {DATA / 'payloads.json'}")
        return 0
    content = load_pool(DATA / "content.json")
    payloads = load_pool(DATA / "payloads.json")
    if args.data is not None:
        if args.out is None:
            parser.error("--data builds a set from real files: give --out FILE (it is never packaged)")
        n_reports = sum(1 for i in content["items"] if i["form"] == "report" and i["kind"] != "escalate")
        scenarios = build_scenarios(
            real_reports(args.data, content, n_reports, args.seed),
            real_payloads(args.data, 60, args.seed),
            seed=args.seed,
        )
        args.out.write_text(render(scenarios), encoding="utf-8")
        print(f"{len(scenarios)} scenarios from {args.data} -> {args.out}")
        return 0
    scenarios = build_scenarios(
        content,
        payloads,
        seed=args.seed,
        content_file=DATA / "content.json",
        payloads_file=DATA / "payloads.json",
    )
    text = render(scenarios)
    target = DATA / "scenarios.json"
    return write_or_check(
        target, text, check=args.check, script="build_sentry_corpus.py", what=f"{len(scenarios)} scenarios"
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
