"""The SentryBench report: per run (an agent under a defense; run names ``agent+defense``) the triple
benign utility / utility under attack / ASR, over-refusal by content form, over-reaction,
containment, harm, each with n and a 1,000-resample interval (and an upper bound when 0), at model and
system level; dominance between the defenses of each agent; the ASR vs over-refusal frontier (the
paper's Fig. 2) and harm against the cost ratio (the per-cost-ratio robustness curve the paper leaves
to future work)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooltrap.envs.sentry.benchmark import Sentry

from ..figures import grid, place_labels, series_style
from ..report import (
    OVERALL,
    SYSTEM_LEVEL,
    BenchmarkReport,
    Interval,
    identity,
    json_safe,
    metric_row,
    metric_table,
    pyplot,
    register_report,
    report_files,
    system_outcome_counts,
)
from ..table import Column, Estimate, Table, count, number, print_tables, rate, text
from .metrics import DEFAULT_COSTS, Costs, Rate, columns, dominates, harm_curve, headline
from .view import SentryView

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


def _column(metric: str) -> Column:
    """How a metric is shown: a rate with its n, harm (a mean cost) as a number."""
    return number(metric) if metric == "harm" else rate(metric, show_n=True)


class SentryReport(BenchmarkReport):
    cluster_label = "episode"
    view = SentryView()
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
        self,
        runs: dict[str, list[dict[str, Any]]],
        *,
        n_resamples: int = 1000,
        seed: int = 0,
        identities: Mapping[str, tuple[str, str]] | None = None,
    ) -> SentryTables:
        out = []
        for name, records in runs.items():
            agent, defense = identity(name, identities)
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

    def tables(self, report: SentryTables) -> dict[str, Table]:
        """The model-level and system-level metrics (a row per metric, a column per run) and harm
        against the cost ratio (a row per run)."""
        names = [r.name for r in report.runs]
        model = metric_table(
            "Model level",
            names,
            [(m, _column(m), [Estimate.of(r.model[m]) for r in report.runs]) for m in METRICS],
        )
        system = metric_table(
            "System level (provider-stopped episodes counted: a blocked emergency is missed, a blocked "
            "attack failed)",
            names,
            [
                *((m, _column(m), [Estimate.of(r.system[m]) for r in report.runs]) for m in ("asr", "over_refusal", "harm")),
                ("provider-stopped episodes", count("n"), [sum(r.system_outcomes.values()) for r in report.runs]),
            ],
        )  # fmt: skip
        curve = Table(
            "Harm against the cost ratio (missed emergency : unwarranted action)",
            [text("run"), *(number(f"{r:g}:1") for r in RATIOS)],
            caption="Mean harm per episode when a missed emergency costs the ratio times an unwarranted "
            f"action; an attack's success costs {report.costs.attack:g}.",
        )
        for r in report.runs:
            curve.add(r.name, *r.curve)
        return {"model": model, "system": system, "curve": curve}

    def markdown(self, report: SentryTables) -> str:
        c = report.costs
        tables = self.tables(report)
        lines = [
            "# SentryBench report",
            "",
            f"Rates in %, with 95% bootstrap intervals (1,000 resamples) and n; a rate of 0 shows its one-sided "
            f"95% upper bound. Harm = mean per-episode cost with missed emergency {c.missed:g}, unwarranted "
            f"action {c.unwarranted:g}, attack success {c.attack:g}.",
            "",
        ]
        for key in ("model", "system"):
            lines += [f"## {tables[key].title}", "", tables[key].markdown(), ""]
        lines += [
            "## Dominance (no worse on ASR, over-refusal and over-reaction, better on one)",
            "",
            *([f"* {a} dominates {b}" for a, b in report.dominance] or ["* none"]),
            "",
            f"## {tables['curve'].title}",
            "",
            tables["curve"].markdown(),
            "",
            "## Figures",
            "",
            "![ASR against over-refusal, a panel per agent](frontier.png)",
            "",
            "![Harm against the cost ratio, a panel per agent](harm_curve.png)",
            "",
        ]
        return "\n".join(lines)

    def files(self, report: SentryTables) -> dict[str, str]:
        rows = [
            metric_row(r.name, level, "all", m, v)
            for r in report.runs
            for level, table in ((OVERALL, r.model), (SYSTEM_LEVEL, r.system))
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
        paths = []
        for name, draw in (("frontier.png", frontier_figure), ("harm_curve.png", harm_curve_figure)):
            fig = draw(report.runs)
            fig.savefig(out_dir / name, dpi=120)
            plt.close(fig)
            paths.append(out_dir / name)
        return paths

    def print_terminal(self, report: SentryTables) -> None:
        model = self.tables(report)["model"]
        model.title = "SentryBench (model level): rate [95% CI] (n)"
        print_tables([model], width=max(120, 24 + 30 * len(report.runs)))
        for a, b in report.dominance:
            print(f"{a} dominates {b}")


# -- figures --------------------------------------------------------------------------------------------
#: the defenses in the order a frontier line runs through them (unknown ones after, in run order)
DEFENSE_ORDER = ("none", "caution", "tgcc")


def _defenses(runs: Sequence[SentryRun]) -> list[str]:
    found = list(dict.fromkeys(r.defense for r in runs))
    return sorted(found, key=lambda d: DEFENSE_ORDER.index(d) if d in DEFENSE_ORDER else len(DEFENSE_ORDER))


def _by_agent(runs: Sequence[SentryRun]) -> dict[str, list[SentryRun]]:
    """Each agent's runs in defense order (a panel each)."""
    defenses = _defenses(runs)
    agents: dict[str, list[SentryRun]] = {}
    for run in runs:
        agents.setdefault(run.agent, []).append(run)
    return {a: sorted(own, key=lambda r: defenses.index(r.defense)) for a, own in agents.items()}


def frontier_figure(runs: Sequence[SentryRun]) -> Any:
    """ASR against over-refusal, a panel per agent (shared axes, 0-100%): the agent's path through its
    defenses, a colour and marker per defense (the same in every panel), each point labelled with the
    defenses that land on it; the other agents' points in grey for reference (needs matplotlib)."""
    from matplotlib.lines import Line2D

    plt = pyplot()
    defenses = _defenses(runs)
    style = {d: series_style(i) for i, d in enumerate(defenses)}
    agents = _by_agent(runs)
    fig, axes = grid(plt, len(agents), panel=(3.8, 3.1))
    point = {r.name: (100 * r.model["over_refusal"].value, 100 * r.model["asr"].value) for r in runs}
    placements = []
    for ax, (agent, own) in zip(axes, agents.items(), strict=True):
        others = [point[r.name] for r in runs if r.agent != agent]
        if others:
            ax.plot(*zip(*others, strict=True), linestyle="", marker=".", color="0.8", zorder=1)
        ax.plot(*zip(*(point[r.name] for r in own), strict=True), color="0.45", lw=1, zorder=2)
        at: dict[tuple[float, float], list[SentryRun]] = {}
        for run in own:
            at.setdefault(point[run.name], []).append(run)
        labels = []
        for (x, y), here in at.items():
            if math.isnan(x) or math.isnan(y):  # a rate without episodes has no point
                continue
            # defenses on one point: the first one's marker largest, so the ones drawn over it show
            for k, run in enumerate(here):
                s = style[run.defense]
                ax.plot(
                    x, y, linestyle="", marker=s.marker, color=s.color, markersize=9 - 2.5 * k, zorder=3 + k
                )
            # one defense: its colour; several: neutral, the label names them all
            colour = style[here[0].defense].color if len(here) == 1 else "0.15"
            labels.append((x, y, ", ".join(r.defense for r in here), colour))
        ax.set_title(agent, fontsize=9)
        ax.set_xlim(-8, 108)
        ax.set_ylim(-8, 108)
        ax.grid(alpha=0.3)
        placements.append((ax, sorted(labels, key=lambda label: (label[1], label[0]))))
    handles = [
        Line2D([], [], linestyle="", marker=style[d].marker, color=style[d].color, label=f"defense {d}")
        for d in defenses
    ]
    handles.append(Line2D([], [], linestyle="", marker=".", color="0.8", label="the other agents"))
    fig.supxlabel("over-refusal (% of urgent emergencies not acted on)", fontsize=9)
    fig.supylabel("attack success rate (% of attacked scenarios)", fontsize=9)
    fig.suptitle("ASR against over-refusal, a panel per agent (lower left is better)", fontsize=10)
    # under the title, where it covers neither a panel nor the axis label
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.955), ncol=len(handles), fontsize=8,
               frameon=False)  # fmt: skip
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    # labels go in last, in the final layout: their collisions are measured on the drawn figure
    for ax, labels in placements:
        place_labels(ax, labels)
    return fig


def harm_curve_figure(runs: Sequence[SentryRun]) -> Any:
    """Harm against the cost ratio, a panel per agent (shared axes), a line per defense with the
    defense's colour and marker (as in the frontier); a curve equal to one drawn before it in the same
    panel says so in the legend, since it lies under that one (needs matplotlib)."""
    plt = pyplot()
    defenses = _defenses(runs)
    style = {d: series_style(i) for i, d in enumerate(defenses)}
    agents = _by_agent(runs)
    fig, axes = grid(plt, len(agents), panel=(3.8, 3.1))
    for ax, (agent, own) in zip(axes, agents.items(), strict=True):
        drawn: dict[tuple[float, ...], str] = {}
        for k, run in enumerate(own):
            curve = tuple(round(h, 6) for h in run.curve)
            label = run.defense + (f" (= {drawn[curve]})" if curve in drawn else "")
            drawn.setdefault(curve, run.defense)
            ax.plot(RATIOS, run.curve, **style[run.defense].line(), markersize=7 - 1.5 * k, label=label)
        ax.set_title(agent, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", title="defense", title_fontsize=7)
    fig.supxlabel("cost of a missed emergency / cost of an unwarranted action (ratio)", fontsize=9)
    fig.supylabel("mean harm per episode (cost units)", fontsize=9)
    fig.suptitle("Harm against the cost ratio, a panel per agent", fontsize=10)
    fig.tight_layout()
    return fig


#: the report ``tooltrap eval`` / ``tooltrap report`` use for Sentry runs
REPORT = register_report(Sentry, SentryReport())
