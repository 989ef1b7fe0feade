"""The SentryBench report: per run (an agent under a defense; run names ``agent+defense``) the triple
benign utility / utility under attack / ASR, over-refusal by content form, over-reaction,
containment, harm, each with n and a 1,000-resample interval (and an upper bound when 0), at model and
system level; dominance between the defenses of each agent; the ASR vs over-refusal frontier (the
paper's Fig. 2) and harm against the cost ratio (the per-cost-ratio robustness curve the paper leaves
to future work)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooltrap.envs.sentry.benchmark import Sentry

from ..report import (
    BenchmarkReport,
    Interval,
    json_safe,
    md_table,
    metric_row,
    print_metric_table,
    pyplot,
    register_report,
    report_files,
    split_run_name,
    system_outcome_counts,
)
from .metrics import DEFAULT_COSTS, Costs, Rate, columns, dominates, harm_curve, headline

METRICS = (
    "benign_utility",
    "utility_under_attack",
    "asr",
    "asr_attacked",
    "not_reached",
    "over_refusal",
    "over_refusal_transcript",
    "over_refusal_report",
    "over_reaction",
    "containment",
    "harm",
)
RATIOS = tuple(float(r) for r in range(1, 11))


@dataclass
class SentryRun:
    name: str
    agent: str
    defense: str
    n_episodes: int
    model: dict[str, Rate] = field(default_factory=dict)
    system: dict[str, Rate] = field(default_factory=dict)
    curve: list[float] = field(default_factory=list)
    system_outcomes: dict[str, int] = field(default_factory=dict)


@dataclass
class SentryTables:
    runs: list[SentryRun]
    dominance: list[tuple[str, str]]  # (dominating run, dominated run), same agent
    costs: Costs


def _fmt(r: Rate) -> str:
    if math.isnan(r.value):
        return "-"
    if r.upper_bound is not None:
        return f"0.0% (n={r.n}, <= {100 * r.upper_bound:.1f}%)"
    return f"{100 * r.value:.1f}% [{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}] (n={r.n})"


def _fmt_harm(r: Rate) -> str:
    return "-" if math.isnan(r.value) else f"{r.value:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]"


class SentryReport(BenchmarkReport):
    cluster_label = "episode"
    progress_outcomes = ("attack_success", "over_refusal")
    plain_metrics = ("harm",)

    def __init__(self, costs: Costs = DEFAULT_COSTS):
        self.costs = costs

    def summarize(
        self, records: Sequence[dict[str, Any]], *, n_resamples: int = 1000, seed: int = 0
    ) -> dict[str, Interval]:
        found = headline(records, costs=self.costs, seed=seed)
        return {k: Interval(v.value, v.ci_low, v.ci_high, v.n) for k, v in found.items()}

    def build(
        self, runs: dict[str, list[dict[str, Any]]], *, n_resamples: int = 1000, seed: int = 0
    ) -> SentryTables:
        out = []
        for name, records in runs.items():
            agent, defense = split_run_name(name)
            run = SentryRun(name, agent, defense, sum(not r.get("system_outcome") for r in records))
            run.model = headline(records, costs=self.costs, seed=seed)
            run.system = headline(records, system_level=True, costs=self.costs, seed=seed)
            c = columns(records)
            run.curve = [
                float(x)
                for x in harm_curve(
                    c["over_refusal"], c["unwarranted"], c["attack_success"], RATIOS, self.costs.attack
                )
            ]
            run.system_outcomes = system_outcome_counts(records)
            out.append(run)
        dominance = []
        for a in out:
            for b in out:
                if a is not b and a.agent == b.agent:
                    va = {k: a.model[k].value for k in ("asr", "over_refusal", "over_reaction")}
                    vb = {k: b.model[k].value for k in ("asr", "over_refusal", "over_reaction")}
                    if not any(math.isnan(v) for v in (*va.values(), *vb.values())) and dominates(va, vb):
                        dominance.append((a.name, b.name))
        return SentryTables(out, dominance, self.costs)

    def markdown(self, report: SentryTables) -> str:
        c = report.costs
        lines = [
            "# SentryBench report",
            "",
            f"Rates with n and 95% bootstrap intervals (1,000 resamples); a rate of 0 shows its one-sided 95% upper "
            f"bound. Harm = mean per-episode cost with missed emergency {c.missed:g}, unwarranted action "
            f"{c.unwarranted:g}, attack success {c.attack:g}.",
            "",
            "## Model level",
            "",
            md_table(
                ["metric", *(r.name for r in report.runs)],
                [
                    [m, *((_fmt_harm if m == "harm" else _fmt)(r.model[m]) for r in report.runs)]
                    for m in METRICS
                ],
            ),  # fmt: skip
            "",
            "## System level (provider-stopped episodes counted: a blocked emergency is missed, a blocked attack failed)",
            "",
            md_table(
                ["metric", *(r.name for r in report.runs)],
                [
                    [m, *((_fmt_harm if m == "harm" else _fmt)(r.system[m]) for r in report.runs)]
                    for m in ("asr", "over_refusal", "harm")
                ],
            ),  # fmt: skip
            "",
            "Provider-stopped episodes: "
            + "; ".join(f"{r.name}: {sum(r.system_outcomes.values())}" for r in report.runs),
            "",
            "## Dominance (no worse on ASR, over-refusal and over-reaction, better on one)",
            "",
            *([f"* {a} dominates {b}" for a, b in report.dominance] or ["* none"]),
            "",
            "## Harm against the cost ratio (missed emergency : unwarranted action)",
            "",
            md_table(
                ["run", *(f"{r:g}:1" for r in RATIOS)],
                [[r.name, *(f"{h:.2f}" for h in r.curve)] for r in report.runs],
            ),
            "",
        ]
        return "\n".join(lines)

    def files(self, report: SentryTables) -> dict[str, str]:
        rows = [
            metric_row(r.name, level, "all", m, v)
            for r in report.runs
            for level, table in (("model", r.model), ("system", r.system))
            for m, v in table.items()
        ]
        document = {
            "benchmark": "sentry",
            "costs": report.costs.__dict__,
            "runs": [
                {
                    "name": r.name,
                    "agent": r.agent,
                    "defense": r.defense,
                    "n_episodes": r.n_episodes,
                    "system_outcomes": r.system_outcomes,
                    "harm_curve": dict(zip(map(str, RATIOS), r.curve, strict=True)),
                }
                for r in report.runs
            ],  # fmt: skip
            "dominance": report.dominance,
            "rates": [json_safe(row) for row in rows],
        }
        return report_files("sentry.md", self.markdown(report), rows, document)

    def figures(self, report: SentryTables, out_dir: Path) -> list[Path]:
        """``frontier.png`` (ASR against over-refusal, one line per agent through its defenses) and
        ``harm_curve.png`` (harm against the cost ratio per run)."""
        plt = pyplot()
        if plt is None:
            return []
        fig, ax = plt.subplots(figsize=(5.5, 4.5))
        order = {"none": 0, "caution": 1, "tgcc": 2}
        for agent in dict.fromkeys(r.agent for r in report.runs):
            runs = sorted((r for r in report.runs if r.agent == agent), key=lambda r: order.get(r.defense, 9))
            xs = [100 * r.model["over_refusal"].value for r in runs]
            ys = [100 * r.model["asr"].value for r in runs]
            ax.plot(xs, ys, marker="o", label=agent)
            for r, x, y in zip(runs, xs, ys, strict=True):
                ax.annotate(r.defense, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
        ax.set_xlabel("over-refusal (% of urgent emergencies not acted on)")
        ax.set_ylabel("attack success rate (%)")
        ax.set_title("ASR vs over-refusal per agent and defense")
        ax.legend(fontsize=7)
        fig.tight_layout()
        frontier = out_dir / "frontier.png"
        fig.savefig(frontier, dpi=120)
        plt.close(fig)
        fig, ax = plt.subplots(figsize=(5.5, 4.5))
        for r in report.runs:
            ax.plot(RATIOS, r.curve, marker=".", label=r.name)
        ax.set_xlabel("cost of a missed emergency / cost of an unwarranted action")
        ax.set_ylabel("mean harm per episode")
        ax.set_title("Harm against the cost ratio")
        ax.legend(fontsize=6)
        fig.tight_layout()
        curve = out_dir / "harm_curve.png"
        fig.savefig(curve, dpi=120)
        plt.close(fig)
        return [frontier, curve]

    def print_terminal(self, report: SentryTables) -> None:
        print_metric_table(
            "SentryBench (model level): rate [95% CI] (n)",
            [r.name for r in report.runs],
            [(m, [(_fmt_harm if m == "harm" else _fmt)(r.model[m]) for r in report.runs]) for m in METRICS],
        )
        for a, b in report.dominance:
            print(f"{a} dominates {b}")


#: the report ``tooltrap eval`` / ``tooltrap report`` use for Sentry runs
REPORT = register_report(Sentry, SentryReport())
