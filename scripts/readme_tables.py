"""Write the generated tables of the README and the docs pages (each block in whichever holds it): the mitigation table of scripted baselines, from the runs CI
scores (``tests/golden/sabench.json``, made by ``scripts/baselines.py sabench``), the learning-curve
table, from the last run of ``scripts/learning_curve.py --write-docs`` (``docs/learning_curve.json``),
the benchmarks' baseline tables from their ``docs/*_baselines.json``, and the EpiSEM corpus inventory,
from the packaged counts (``envs/episem/data/manifest.json``, written by ``scripts/build.py episem``).
``tests/test_readme.py`` checks the README holds exactly what this script writes, so a stale table
fails CI.

Usage: python scripts/readme_tables.py [--check]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tooltrap.wrappers.eval.table import Column, Estimate, Kind, Table, count, number, rate, text

try:
    from _docs import Documents
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._docs import Documents
    from scripts._help import script_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
GOLDEN = ROOT / "tests" / "golden" / "sabench.json"
START, END = "<!-- mitigation-table:start (scripts/readme_tables.py) -->", "<!-- mitigation-table:end -->"
CURVE = ROOT / "docs" / "learning_curve.json"
CURVE_START = (
    "<!-- learning-curve:start (scripts/learning_curve.py --write-docs; scripts/readme_tables.py) -->"
)
CURVE_END = "<!-- learning-curve:end -->"
EPISEM = ROOT / "docs" / "episem_baselines.json"
EPISEM_START = (
    "<!-- episem-baselines:start (scripts/baselines.py episem --write-docs; scripts/readme_tables.py) -->"
)
EPISEM_END = "<!-- episem-baselines:end -->"
EPISEM_MANIFEST = ROOT / "envs" / "episem" / "data" / "manifest.json"
INVENTORY_START = "<!-- episem-inventory:start (envs/episem/data/manifest.json; scripts/readme_tables.py) -->"
INVENTORY_END = "<!-- episem-inventory:end -->"
#: the paper's inventory (seed 001): the corpus is authored to it, so the README sets ours beside it
PAPER_ATOMS = {"critical": 944, "irrelevant": 419}
#: README rows of the EpiSEM table: (label, metric)
EPISEM_ROWS = (
    ("Full UCR", "full_ucr"),
    ("Critical UCR (suppressed)", "critical_ucr"),
    ("Critical UCR@1", "critical_ucr_at_1"),
    ("Irrelevant UCR@1", "irrelevant_ucr_at_1"),
    ("Recovery UCR (recoverable)", "recovery_ucr"),
    ("SBM", "sbm"),
    ("no-boundary rate", "no_boundary"),
    ("Full SWS", "full_sws"),
    ("SWS, single critical masks, suppressed", "sws_suppressed"),
    ("SWS, single critical masks, recoverable", "sws_recoverable"),
    ("PUR", "pur"),
    ("COFR (per rollout)", "cofr"),
)

#: README rows: (label, runs shown in it as "agent+defense"; several runs share a row as a / b)
ROWS = (
    ("gold", ("gold+none",)),
    ("gold + confirm-prompt", ("gold+confirm-prompt",)),
    ("clarify (always asks)", ("clarify+none",)),
    ("act-first", ("act-first+none",)),
    ("act-first + confirm-prompt (compliant: asks before its first write)", ("act-first+confirm-prompt",)),
    ("act-first + confirm-gate", ("act-first+confirm-gate",)),
    ("act-first + preview (accepts every preview)", ("act-first+preview",)),
    ("act-first + preview-gate", ("act-first+preview-gate",)),
    (
        "random / random + confirm-gate / random + preview-gate",
        ("random+none", "random+confirm-gate", "random+preview-gate"),
    ),
)


def _golden(values: list[float], *, interval: bool) -> Estimate:
    """A rate of the golden headline (``[value, low, high]`` in %) as a cell."""
    value, low, high = (v / 100 for v in values)
    return Estimate(value, low, high) if interval else Estimate(value)


def mitigation_table(headline: dict[str, dict[str, list[float]]]) -> str:
    """Goal and CD per scripted run; several runs share a row as ``a / b`` (their values only)."""
    table = Table("mitigations", [text("run"), rate("goal"), rate("CD")])
    for label, runs in ROWS:
        interval = len(runs) == 1
        table.add(
            label,
            tuple(_golden(headline[r]["goal"], interval=interval) for r in runs),
            tuple(_golden(headline[r]["cd"], interval=interval) for r in runs),
        )
    return table.markdown()


def _stored(m: dict[str, Any] | None) -> Estimate:
    """A stored metric (``value``, ``ci_low``, ``ci_high``, ``n``, ``upper_bound``; None: not computed)."""
    if m is None or m["value"] is None:
        return Estimate(float("nan"))
    return Estimate(m["value"], m.get("ci_low"), m.get("ci_high"), m.get("n"), m.get("upper_bound"))


def _replace(docs: Documents, start: str, end: str, body: str) -> Documents:
    docs.replace(start, end, body)
    return docs


def curve_table() -> str:
    """The learning-curve table from docs/learning_curve.json, as scripts/learning_curve.py prints it."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("learning_curve", ROOT / "scripts" / "learning_curve.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    result = json.loads(CURVE.read_text(encoding="utf-8"))
    times = ", ".join(f"{stage} {seconds} s" for stage, seconds in result["stage_seconds"].items())
    cut = "; ".join(result["cut"]) or "nothing"
    tokens = "; ".join(
        f"{name}: GRPO prompts {t['grpo_prompt']['median']:g} / {t['grpo_prompt']['max']} "
        f"({t['grpo_prompt']['under_budget']} of {t['grpo_prompt']['n']} under 700), SFT rows "
        f"{t['sft_row']['median']:g} / {t['sft_row']['max']} ({t['sft_row']['under_budget']} of "
        f"{t['sft_row']['n']} under 700)"
        for name, t in result.get("prompt_tokens", {}).items()
    )
    return (
        f"{module.table(result)}\n\n{result['model']}, {result['seconds']} s on this machine's CPU "
        f"(stage times: {times}; cut to fit the budget: {cut})."
        + (f" Training tasks' tokens, median / max: {tokens}." if tokens else "")
    )


SENTRY = ROOT / "docs" / "sentry_baselines.json"
SENTRY_START = (
    "<!-- sentry-baselines:start (scripts/baselines.py sentry --write-docs; scripts/readme_tables.py) -->"
)
SENTRY_END = "<!-- sentry-baselines:end -->"
SENTRY_COLUMNS = (
    ("benign utility", "benign_utility"),
    ("utility under attack", "utility_under_attack"),
    ("ASR", "asr"),
    ("over-refusal (transcripts / reports)", None),
    ("over-reaction", "over_reaction"),
    ("containment", "containment"),
    ("harm", "harm"),
)


def _runs_table(
    title: str,
    first: str,
    columns: Sequence[tuple[str, str | None]],
    runs: dict[str, dict[str, Any]],
    *,
    pair: tuple[str, str],
    kind: Callable[[str, str | None], Column] = lambda label, _key: rate(label),
) -> Table:
    """A row per run and a column per ``(label, key)`` of its stored estimates; the column whose key is
    None shows the two estimates ``pair`` names (as "a / b")."""
    table = Table(title, [text(first), *(kind(label, key) for label, key in columns)])
    for name, run in runs.items():
        table.add(
            name,
            *(
                (_stored(run[pair[0]]), _stored(run[pair[1]])) if key is None else _stored(run[key])
                for _, key in columns
            ),
        )
    return table


def sentry_table(result: dict) -> str:
    """The SentryBench baselines under every defense, from docs/sentry_baselines.json."""
    table = _runs_table(
        "sentry", "agent + defense", SENTRY_COLUMNS, result["runs"],
        pair=("over_refusal_transcript", "over_refusal_report"),
        kind=lambda label, key: number(label) if key == "harm" else rate(label),
    )  # fmt: skip
    detector = result["detector"]
    parts = [
        f"{label}: precision {detector[key]['precision']:.2f}, recall {detector[key]['recall']:.2f} "
        f"({detector[key]['n_injection']} injections, {detector[key]['n_benign']} benign)"
        for label, key in (
            ("deepset test", "deepset_prompt_injections/test.csv"),
            (
                "jackhhao test",
                "jackhhao_jailbreak_classification/balanced/jailbreak_dataset_test_balanced.csv",
            ),
        )
        if key in detector
    ]
    payloads = detector["scenario_payloads"]
    parts.append(f"the corpus's {payloads['n']} payloads: recall {payloads['recall']:.2f}")
    return table.markdown() + "\n\nDetector (score >= 1) on the real rows: " + "; ".join(parts) + "."


def episem_table(result: dict) -> str:
    """The EpiSEM baselines under the SBM search, from docs/episem_baselines.json: each metric shown as
    the report shows it (:func:`~tooltrap.wrappers.eval.episem.report.metric_column`)."""
    from tooltrap.wrappers.eval.episem.report import metric_column

    agents = result["agents"]
    table = Table("episem", [text("metric"), *(Column(a, Kind.ROW) for a in agents)])
    for label, metric in EPISEM_ROWS:
        table.add(label, *(_stored(agents[a]["metrics"][metric]) for a in agents), row=metric_column(metric))
    table.add("rollouts the search needed", *(agents[a]["rollouts"] for a in agents), row=count("n"))
    table.add(
        "tasks: search complete / incomplete",
        *((agents[a]["search_complete"], agents[a]["search_incomplete"]) for a in agents),
        row=count("n"),
    )
    table.add(
        "rollouts truncated (kept in every denominator)",
        *(agents[a]["truncated"] for a in agents),
        row=count("n"),
    )
    return table.markdown()


def episem_inventory(counts: dict) -> str:
    """The EpiSEM corpus inventory (pairs by their number of critical atoms, atoms by role), from the
    manifest ``scripts/build.py episem`` writes, so the README's counts are the packaged corpus's."""
    by_n = counts["tasks_by_n_critical"]
    roles = counts["atoms_by_role"]
    table = Table("inventory", [text("critical atoms per pair"), *(count(k) for k in by_n), count("all")])
    table.add("pairs", *by_n.values(), counts["pairs"])
    others = ", ".join(f"{n:,} {role}" for role, n in roles.items() if role not in ("critical", "irrelevant"))
    return table.markdown() + (
        f"\n\nAtoms by role: {roles['critical']} critical and {roles['irrelevant']} irrelevant atoms (the "
        f"paper: {PAPER_ATOMS['critical']} and {PAPER_ATOMS['irrelevant']}), {others}; {counts['atoms']:,} "
        f"in all, over {counts['families']} families and {counts['pairs']} twin pairs."
    )


AGENTPROP = ROOT / "docs" / "agentprop_baselines.json"
AGENTPROP_START = "<!-- agentprop-baselines:start (scripts/baselines.py agentprop --write-docs; scripts/readme_tables.py) -->"
AGENTPROP_END = "<!-- agentprop-baselines:end -->"
#: README columns of the AgentProp baselines: (label, metric)
AGENTPROP_COLUMNS = (
    ("accuracy clean / injected", None),
    ("p_S1", "p_S1"),
    ("p_S2", "p_S2"),
    ("r23", "r23"),
    ("injection to error", "injection_to_error"),
    ("tool calls", "tool_call_rate"),
    ("fabrication", "fabrication"),
    ("abstention", "abstention"),
)
REPRODUCTION = ROOT / "docs" / "agentprop_reproduction.json"
REPRODUCTION_START = "<!-- agentprop-reproduction:start (scripts/reproduce_agentprop.py --write-docs; scripts/readme_tables.py) -->"
REPRODUCTION_END = "<!-- agentprop-reproduction:end -->"


def agentprop_table(result: dict) -> str:
    """The AgentProp baselines (core tasks x five injections) and the interceptor's paired effect."""
    table = _runs_table(
        "agentprop", "run", AGENTPROP_COLUMNS, result["core"], pair=("accuracy_clean", "accuracy_injected")
    )
    paired = Table(
        "interceptor",
        [text("interceptor run"), rate("hallucination without"), rate("with"), count("abstained"),
         rate("precision"), count("saved"), count("broken"), count("pair gave no answer")],
        caption="Each run with the interceptor against its agent's run without it, on the same (task, "
        "injection) pairs: an abstention saved a wrong answer or broke a right one.",
    )  # fmt: skip
    for name, c in result["interceptor"].items():
        precision = c["abstention_precision"]
        paired.add(
            name, c["hallucination_without"], c["hallucination_with"], c["intercepted"],
            float("nan") if precision is None else precision, c["saved"], c["broken"], c["unanswered_pairs"],
        )  # fmt: skip
    return table.markdown() + "\n\n" + paired.markdown()


def reproduction_table(result: dict) -> str:
    """The release's printed numbers beside the ones this library recomputes from its result files."""
    table = Table("reproduction", [text("printed number"), text("paper"), text("recomputed")])
    for row in result["headline"]:
        table.add(row["what"], row["printed"], row["ours"])
    for model, h in result["hop_rates"].items():
        r23 = h["r_2_3"]
        table.add(
            f"{model}: p_S1 / p_S2 / p_S3 / r23 (n={h['n']})",
            "hop_rates.json (equal to 1e-9)",
            " / ".join(f"{h[k]['point']:.3f}" for k in ("p_S1", "p_S2", "p_S3"))
            + (f" / {r23['point']:.3f} [{r23['lo']:.3f}, {r23['hi']:.3f}]" if r23 else " / -"),
        )
    for name, n in result["tables"].items():
        table.add(f"{name}.tex cells", "all", f"{n} equal")
    labels = result["released_human_labels"]
    not_recomputable = ", ".join(f"{k} {v}" for k, v in result["not_recomputable"].items())
    thirteen_models = ", ".join(f"{k} {v}" for k, v in result["not_recomputable_13_models"].items())
    return (
        table.markdown()
        + f"\n\n{result['reproduced']} printed numbers reproduced. Not recomputable (they need the 87 "
        f"unreleased human labels): {not_recomputable}. Not recomputable (they are over the paper's 13 "
        f"models; the release has {result['released_models']}, with {result['released_s2_traces']} of the "
        f"271 S2 traces): {thirteen_models}. On the {labels['n']} released labels alone (not the "
        f"paper's 100): human vs heuristic kappa {labels['human_vs_heuristic_kappa']}, human vs ensemble "
        f"kappa {labels['human_vs_ensemble_kappa']}."
    )


def render(docs: Documents, headline: dict[str, dict[str, list[float]]]) -> Documents:
    """``docs`` with every block this script owns rendered, in whichever document holds it."""
    text = _replace(docs, START, END, mitigation_table(headline))
    if CURVE.exists():
        text = _replace(text, CURVE_START, CURVE_END, curve_table())
    if EPISEM.exists():
        text = _replace(
            text, EPISEM_START, EPISEM_END, episem_table(json.loads(EPISEM.read_text(encoding="utf-8")))
        )
    text = _replace(
        text,
        INVENTORY_START,
        INVENTORY_END,
        episem_inventory(json.loads(EPISEM_MANIFEST.read_text(encoding="utf-8"))),
    )
    if SENTRY.exists():
        text = _replace(
            text, SENTRY_START, SENTRY_END, sentry_table(json.loads(SENTRY.read_text(encoding="utf-8")))
        )
    if AGENTPROP.exists():
        text = _replace(
            text,
            AGENTPROP_START,
            AGENTPROP_END,
            agentprop_table(json.loads(AGENTPROP.read_text(encoding="utf-8"))),
        )
    if REPRODUCTION.exists():
        text = _replace(
            text, REPRODUCTION_START, REPRODUCTION_END,
            reproduction_table(json.loads(REPRODUCTION.read_text(encoding="utf-8"))),
        )  # fmt: skip
    return text


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 when the README's tables are stale")
    check = parser.parse_args(argv).check
    headline = json.loads(GOLDEN.read_text(encoding="utf-8"))["headline"]
    docs = render(Documents.load(), headline)
    stale = [p.relative_to(ROOT).as_posix() for p in docs.changed()]
    if check:
        if stale:
            print(f"tables are stale in {', '.join(stale)}: run python scripts/readme_tables.py")
            return 1
        return 0
    docs.write()
    print(f"tables -> {', '.join(stale) or 'nothing changed'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
