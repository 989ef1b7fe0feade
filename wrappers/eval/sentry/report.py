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
        paths = []
        for name, draw in (("frontier.png", frontier_figure), ("harm_curve.png", harm_curve_figure)):
            fig = draw(report.runs)
            fig.savefig(out_dir / name, dpi=120)
            plt.close(fig)
            paths.append(out_dir / name)
        return paths

    def print_terminal(self, report: SentryTables) -> None:
        print_metric_table(
            "SentryBench (model level): rate [95% CI] (n)",
            [r.name for r in report.runs],
            [(m, [(_fmt_harm if m == "harm" else _fmt)(r.model[m]) for r in report.runs]) for m in METRICS],
        )
        for a, b in report.dominance:
            print(f"{a} dominates {b}")


# -- figures --------------------------------------------------------------------------------------------
#: the Okabe-Ito colours (told apart with colour-blindness too), its yellow left out: pale on white
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000")
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P")
#: the defenses in the order a frontier line runs through them (unknown ones after, in run order)
DEFENSE_ORDER = ("none", "caution", "tgcc")
LABEL_FONT_SIZE = 7.0


@dataclass(frozen=True)
class SeriesStyle:
    color: str
    linestyle: str
    marker: str


def _style(index: int, color: str) -> SeriesStyle:
    """The ``index``-th (line style, marker) pair with ``color``: distinct for the first 12 indexes (the
    least common multiple of the 4 line styles and 6 markers)."""
    return SeriesStyle(color, LINE_STYLES[index % len(LINE_STYLES)], MARKERS[index % len(MARKERS)])


def _defenses(runs: Sequence[SentryRun]) -> list[str]:
    found = list(dict.fromkeys(r.defense for r in runs))
    return sorted(found, key=lambda d: DEFENSE_ORDER.index(d) if d in DEFENSE_ORDER else len(DEFENSE_ORDER))


def series_styles(runs: Sequence[SentryRun]) -> dict[str, SeriesStyle]:
    """Per run name, how its harm curve is drawn: the agent's colour with the defense's line style and
    marker, so no two runs share one while agents x defenses <= 7 colours x 12 styles (the agents past
    the palette take the styles after those of the defenses)."""
    agents = list(dict.fromkeys(r.agent for r in runs))
    defenses = _defenses(runs)
    styles = {}
    for run in runs:
        a, d = agents.index(run.agent), defenses.index(run.defense)
        styles[run.name] = _style(d + len(defenses) * (a // len(PALETTE)), PALETTE[a % len(PALETTE)])
    return styles


def _label_offsets(line: float) -> list[float]:
    """Vertical offsets (points) of a label's bottom from its point: just above, then a line further up
    or down in turn."""
    above = [3 + k * line for k in range(30)]
    below = [-3 - line - k * line for k in range(30)]
    return [offset for pair in zip(above, below, strict=True) for offset in pair]


def _inside(frame: Any, box: Any) -> bool:
    return frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1


def _place_labels(ax: Any, labels: Sequence[tuple[float, float, str, str]]) -> list[Any]:
    """Annotate each ``(x, y, text, colour)`` beside its point at the first offset (:func:`_label_offsets`)
    whose box meets no label placed before, inside the axes if one is: runs at the same or close points
    (several agents at 0% ASR) would otherwise write over each other. A label moved off its point gets a
    leader line. Call once the axes' limits and the layout are final (boxes are measured as drawn)."""
    figure = ax.figure
    renderer = figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    line = 1.35 * LABEL_FONT_SIZE
    offsets = _label_offsets(line)
    placed: list[Any] = []
    annotations = []
    for x, y, text, color in labels:
        on_the_right = ax.transData.transform((x, y))[0] < frame.x0 + 0.7 * frame.width
        options = dict(
            textcoords="offset points",
            ha="left" if on_the_right else "right",
            va="bottom",
            fontsize=LABEL_FONT_SIZE,
            color=color,
        )
        dx = 6 if on_the_right else -6
        probe = ax.annotate(text, (x, y), xytext=(dx, 0), **options)
        at_zero = probe.get_window_extent(renderer).padded(1)
        probe.remove()
        boxes = [at_zero.translated(0, offset * figure.dpi / 72) for offset in offsets]
        free = [i for i, box in enumerate(boxes) if not any(box.overlaps(other) for other in placed)] or [0]
        chosen = next((i for i in free if _inside(frame, boxes[i])), free[0])
        # from the label's near edge, so a leader runs beside the labels stacked under it, not across
        relpos = (0.0, 0.5) if on_the_right else (1.0, 0.5)
        leader = (
            dict(arrowstyle="-", lw=0.5, color=color, shrinkA=0, shrinkB=3, relpos=relpos) if chosen else None
        )
        annotations.append(
            ax.annotate(text, (x, y), xytext=(dx, offsets[chosen]), arrowprops=leader, **options)
        )
        placed.append(boxes[chosen])
    return annotations


def frontier_figure(runs: Sequence[SentryRun]) -> Any:
    """ASR against over-refusal: per agent a line through its defenses (the agent's colour and line
    style, a marker per defense), each point labelled with the agent and its defenses there (needs
    matplotlib, the plot extra)."""
    from matplotlib.lines import Line2D

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    agents = list(dict.fromkeys(r.agent for r in runs))
    defenses = _defenses(runs)
    labels = []
    handles = []
    for a, agent in enumerate(agents):
        color = PALETTE[a % len(PALETTE)]
        linestyle = LINE_STYLES[a % len(LINE_STYLES)]
        own = sorted((r for r in runs if r.agent == agent), key=lambda r: defenses.index(r.defense))
        points = [(100 * r.model["over_refusal"].value, 100 * r.model["asr"].value) for r in own]
        ax.plot(*zip(*points, strict=True), color=color, linestyle=linestyle, alpha=0.8)
        for run, point in zip(own, points, strict=True):
            ax.plot(
                *point, linestyle="", marker=MARKERS[defenses.index(run.defense) % len(MARKERS)], color=color
            )
        handles.append(Line2D([], [], color=color, linestyle=linestyle, label=agent))
        # one label per point: an agent's defenses that land on the same point share it
        at: dict[tuple[float, float], list[str]] = {}
        for run, point in zip(own, points, strict=True):
            at.setdefault(point, []).append(run.defense)
        labels += [
            (x, y, f"{agent}: {', '.join(names)}", color)
            for (x, y), names in at.items()
            if not (math.isnan(x) or math.isnan(y))  # a rate without episodes has no point to label
        ]
    handles += [
        Line2D([], [], color="0.4", linestyle="", marker=MARKERS[d % len(MARKERS)], label=f"defense {name}")
        for d, name in enumerate(defenses)
    ]
    ax.set_xlabel("over-refusal (% of urgent emergencies not acted on)")
    ax.set_ylabel("attack success rate (%)")
    ax.set_title("ASR vs over-refusal per agent and defense")
    ax.margins(0.08)
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    # labels go in last, in the final layout: their collisions are measured on the drawn figure
    _place_labels(ax, sorted(labels, key=lambda label: (label[1], label[0])))
    return fig


def harm_curve_figure(runs: Sequence[SentryRun]) -> Any:
    """Harm against the cost ratio, a line per run (:func:`series_styles`); a run whose curve is the
    same as an earlier one's says so in the legend, since the later line covers the earlier (needs
    matplotlib)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    styles = series_styles(runs)
    drawn: dict[tuple[float, ...], str] = {}
    for run in runs:
        curve = tuple(round(h, 6) for h in run.curve)
        label = run.name + (f" (= {drawn[curve]})" if curve in drawn else "")
        drawn.setdefault(curve, run.name)
        style = styles[run.name]
        ax.plot(RATIOS, run.curve, color=style.color, linestyle=style.linestyle, marker=style.marker,
                markersize=4, label=label)  # fmt: skip
    ax.set_xlabel("cost of a missed emergency / cost of an unwarranted action")
    ax.set_ylabel("mean harm per episode")
    ax.set_title("Harm against the cost ratio")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.tight_layout()
    return fig


#: the report ``tooltrap eval`` / ``tooltrap report`` use for Sentry runs
REPORT = register_report(Sentry, SentryReport())
