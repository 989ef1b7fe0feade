"""The AgentProp-Bench report: per run (an agent, or ``agent+interceptor[:point]`` with the
interceptor), the stage metrics over the injected episodes with task-resampled intervals, per injection
type; the Spearman correlation of rejection and recovery across the runs without a defense; and, for
every run with the interceptor whose agent also ran without it, the paired comparison on the same
(task, injection): hallucination without and with, Cohen's h, the z-test, abstention precision, saved
and broken answers and the interceptions whose pair gave no answer (each decided by the paired episode
without the interceptor). Provider-stopped episodes are counted apart."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooltrap.envs.agentprop.benchmark import AgentProp

from ..bootstrap import Interval
from ..figures import grid, series_style
from ..report import (
    OVERALL,
    BenchmarkReport,
    by,
    identity,
    json_safe,
    metric_row,
    metric_table,
    pyplot,
    register_report,
    report_files,
    system_outcome_counts,
)
from ..table import Estimate, Table, count, print_tables, rate, signed, text
from .metrics import (
    METRICS,
    InterceptorComparison,
    by_injection,
    columns,
    interceptor_comparison,
    rejection_recovery_correlation,
    stage_metrics,
)
from .view import AgentPropView

#: the headline columns of the tables (all of :data:`METRICS` are in metrics.csv)
HEADLINE = ("accuracy_clean", "accuracy_injected", "p_S1", "p_S2", "p_S3", "r12", "r23",
            "injection_to_error", "rejection", "recovery", "tool_call_rate", "fabrication", "abstention")  # fmt: skip


@dataclass
class AgentPropRun:
    name: str
    agent: str
    defense: str
    n_episodes: int
    metrics: dict[str, Interval] = field(default_factory=dict)
    per_injection: dict[str, dict[str, Interval]] = field(default_factory=dict)
    system_outcomes: dict[str, int] = field(default_factory=dict)


@dataclass
class AgentPropTables:
    runs: list[AgentPropRun]
    rejection_recovery_spearman: float
    #: run with the interceptor -> its comparison with the same agent's run without a defense
    interceptor: dict[str, InterceptorComparison]
    n_resamples: int = 1000
    #: run with the interceptor -> the run without it that it is paired with
    paired_with: dict[str, str] = field(default_factory=dict)


#: the stages of the figure (each a rate over injected episodes)
STAGES = ("p_S1", "p_S2", "p_S3")
#: the per-injection table's columns
PER_INJECTION = ("p_S1", "p_S2", "r23", "accuracy_injected")


def _rho(value: float) -> str:
    return (
        "undefined (fewer than three runs, or no variation in rejection or recovery)"
        if math.isnan(value)
        else f"{value:.3f}"
    )


def _estimate(iv: Interval) -> Estimate:
    """A stage metric's cell: nothing to show (``-``) when its denominator is empty."""
    return Estimate(math.nan) if iv.n == 0 else Estimate.of(iv)


class AgentPropReport(BenchmarkReport):
    cluster_label = "task"
    view = AgentPropView()
    progress_outcomes = ("correct", "fabricated")

    def summarize(
        self, records: Sequence[dict[str, Any]], *, n_resamples: int = 1000, seed: int = 0
    ) -> dict[str, Interval]:
        return stage_metrics(columns(records), n_resamples=n_resamples, seed=seed)

    def build(
        self,
        runs: dict[str, list[dict[str, Any]]],
        *,
        n_resamples: int = 1000,
        seed: int = 0,
        identities: Mapping[str, tuple[str, str]] | None = None,
    ) -> AgentPropTables:
        out = []
        for name, records in runs.items():
            agent, defense = identity(name, identities)
            cols = columns(records)
            out.append(
                AgentPropRun(
                    name, agent, defense, len(cols["task"]),
                    stage_metrics(cols, n_resamples=n_resamples, seed=seed),
                    by_injection(cols, n_resamples=n_resamples, seed=seed),
                    system_outcome_counts(records),
                )
            )  # fmt: skip
        plain = {r.name: r.metrics for r in out if r.defense == "none"}
        # each run with the interceptor against the first run of its agent without a defense
        without = {}
        for r in out:
            if r.defense == "none":
                without.setdefault(r.agent, r.name)
        paired = {
            r.name: without[r.agent]
            for r in out
            if r.defense.startswith("interceptor") and r.agent in without
        }
        comparisons = {name: interceptor_comparison(runs[base], runs[name]) for name, base in paired.items()}
        return AgentPropTables(out, rejection_recovery_correlation(plain), comparisons, n_resamples, paired)

    def tables(self, report: AgentPropTables) -> dict[str, Table]:
        """The headline (a row per run), the stages per injection type (a row per run and type) and the
        interceptor's paired comparison (a row per run with the interceptor)."""
        headline = Table(
            "Headline",
            [text("run"), *(rate(m) for m in HEADLINE), count("provider-stopped")],
        )
        for r in report.runs:
            headline.add(
                r.name, *(_estimate(r.metrics[m]) for m in HEADLINE), sum(r.system_outcomes.values())
            )
        per_injection = Table(
            "By injection type",
            [text("run"), text("injection"), *(rate(m) for m in PER_INJECTION)],
            caption="A run without injected episodes has one row with empty cells.",
        )
        for r in report.runs:
            for kind in sorted(r.per_injection):
                per_injection.add(r.name, kind, *(_estimate(r.per_injection[kind][m]) for m in PER_INJECTION))
            if not r.per_injection:
                per_injection.add(r.name, "(no injected episodes)", *([None] * len(PER_INJECTION)))
        paired = Table(
            "The interceptor, paired on the same (task, injection)",
            [
                text("run"),
                text("paired with"),
                count("n"),
                rate("hallucination without"),
                rate("with"),
                signed("Cohen's h"),
                signed("z", digits=2),
                text("p"),
                count("abstained"),
                rate("abstention precision"),
                count("saved"),
                count("broken"),
                count("pair gave no answer"),
            ],
            caption="Compares each run with the interceptor to its agent's run without a defense on the "
            "same (task, injection) pairs: the hallucination rate without and with the interceptor, and "
            "whether each abstention saved a wrong answer or broke a right one.",
        )
        for name, c in report.interceptor.items():
            paired.add(
                name,
                report.paired_with.get(name, ""),
                c.n,
                c.hallucination_without,
                c.hallucination_with,
                c.cohens_h,
                c.z,
                f"{c.p:.3g}",
                c.intercepted,
                c.abstention_precision,
                c.saved,
                c.broken,
                c.unanswered_pairs,
            )
        return {"headline": headline, "per_injection": per_injection, "paired": paired}

    def markdown(self, report: AgentPropTables) -> str:
        tables = self.tables(report)
        lines = [
            "# AgentProp-Bench report",
            "",
            f"Percentages with 95% bootstrap intervals ({report.n_resamples:,} resamples of tasks). S1: the "
            "injection changed the first call and it was executed; S2: it ran successfully (an observable "
            "effect); S3: a wrong final answer. r12 = p(S2)/p(S1), r23 = p(S3 | S2), rejection = 1 - p(S1), "
            "recovery = 1 - r23. Provider-stopped episodes are counted apart, in no rate.",
            "",
            tables["headline"].markdown(),
            "",
            f"Spearman(rejection, recovery) across the runs without a defense: "
            f"{_rho(report.rejection_recovery_spearman)}",
            "",
            f"## {tables['per_injection'].title}",
            "",
            tables["per_injection"].markdown(),
            "",
            "![Stage rates per injection type, a panel per run](stages_by_injection.png)",
            "",
            f"## {tables['paired'].title}",
            "",
        ]
        if report.interceptor:
            lines += [
                "Each abstention is judged by the episode without the interceptor on the same (task, "
                "injection): saved when it answered wrong, broken when it answered right, neither when it "
                "gave no answer (abstained or truncated); precision = saved / (saved + broken).",
                "",
                tables["paired"].markdown(),
            ]
        else:
            lines.append(
                "No comparison: no run here has the interceptor as its defense together with a run of the "
                "same agent without a defense."
            )
        lines.append("")
        return "\n".join(lines)

    def files(self, report: AgentPropTables) -> dict[str, str]:
        rows = [
            metric_row(r.name, OVERALL if group == "all" else by("injection"), group, m, v)
            for r in report.runs
            for group, table in (("all", r.metrics), *r.per_injection.items())
            for m, v in table.items()
        ]
        rho = report.rejection_recovery_spearman
        document = {
            "benchmark": "agentprop",
            "runs": [
                {
                    "name": r.name,
                    "agent": r.agent,
                    "defense": r.defense,
                    "n_episodes": r.n_episodes,
                    "system_outcomes": r.system_outcomes,
                }
                for r in report.runs
            ],  # fmt: skip
            "rejection_recovery_spearman": None if math.isnan(rho) else rho,
            "interceptor": {k: json_safe(c.to_dict()) for k, c in report.interceptor.items()},
            "rates": [json_safe(row) for row in rows],
        }
        return report_files("agentprop.md", self.markdown(report), rows, document, allow_nan=False)

    def figures(self, report: AgentPropTables, out_dir: Path) -> list[Path]:
        """``stages_by_injection.png``: p(S1), p(S2), p(S3) per injection type with their intervals, a
        panel per run (needs matplotlib)."""
        plt = pyplot()
        if plt is None:
            return []
        fig = stages_figure(report.runs)
        path = out_dir / "stages_by_injection.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return [path]

    def print_terminal(self, report: AgentPropTables) -> None:
        print_tables(
            [
                metric_table(
                    "AgentProp-Bench: % [95% CI], tasks resampled",
                    [r.name for r in report.runs],
                    [(m, rate(m), [_estimate(r.metrics[m]) for r in report.runs]) for m in METRICS],
                )
            ],
            width=max(120, 26 + 22 * len(report.runs)),
        )
        print(
            f"Spearman(rejection, recovery) across runs without a defense: {_rho(report.rejection_recovery_spearman)}"
        )
        if report.interceptor:
            paired = self.tables(report)["paired"]
            print_tables([paired], width=200)


def stages_figure(runs: Sequence[AgentPropRun]) -> Any:
    """p(S1), p(S2) and p(S3) per injection type with 95% intervals, a panel per run (shared axes, in
    %), a colour and marker per stage; a run without injected episodes says so in its panel."""
    plt = pyplot()
    kinds = sorted({k for r in runs for k in r.per_injection})
    fig, axes = grid(plt, len(runs), panel=(3.6, 2.9), max_columns=4)
    offsets = {stage: (i - (len(STAGES) - 1) / 2) * 0.22 for i, stage in enumerate(STAGES)}
    for ax, r in zip(axes, runs, strict=True):
        for i, stage in enumerate(STAGES):
            style = series_style(i)
            xs, ys, low, high = [], [], [], []
            for j, kind in enumerate(kinds):
                iv = r.per_injection.get(kind, {}).get(stage)
                if iv is None or iv.n == 0 or math.isnan(iv.value):
                    continue
                xs.append(j + offsets[stage])
                ys.append(100 * iv.value)
                low.append(100 * (iv.value - iv.ci_low))
                high.append(100 * (iv.ci_high - iv.value))
            ax.errorbar(xs, ys, yerr=[low, high], fmt=style.marker, color=style.color, capsize=2,
                        markersize=5, label=stage.replace("p_", "p(") + ")")  # fmt: skip
        if not r.per_injection:
            ax.text(0.5, 0.5, "no injected episodes", transform=ax.transAxes, ha="center", fontsize=8)
        ax.set_title(r.name, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.set_ylim(-5, 105)
        ax.set_xticks(range(len(kinds)), [k.replace("_", "\n") for k in kinds], fontsize=7)
    handles, labels = next(
        ((h, lab) for ax in axes for h, lab in [ax.get_legend_handles_labels()] if h), ([], [])
    )
    fig.legend(handles, labels, loc="lower center", ncol=len(STAGES), fontsize=8, frameon=False)
    fig.supylabel("% of the injected episodes", fontsize=9)
    fig.suptitle(
        "Stage rates per injection type (S1: the injection executed; S2: it ran successfully; "
        "S3: a wrong final answer)",
        fontsize=9,
    )
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    return fig


#: the report ``tooltrap eval`` / ``tooltrap report`` use for AgentProp runs
REPORT = register_report(AgentProp, AgentPropReport())
