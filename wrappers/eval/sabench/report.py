"""The SABench report: analyze runs and write terminal / Markdown / CSV / JSON / PNG outputs.

``tooltrap report DIR [DIR ...] --out REPORT`` on SABench runs produces ``REPORT/report.md``,
``report.json``, ``metrics.csv``, ``table4.md`` / ``table4.tex`` (the paper's Table 4 form),
``fig2_goal_vs_cd.png`` and ``fig3_cd_by_trap_and_state.png``
(:data:`REPORT` is registered for SABench in the generic report registry).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooltrap.envs.sabench.benchmark import SABench

from ..bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, Interval
from ..figures import series_style
from ..report import (
    BenchmarkReport,
    MetricRow,
    json_safe,
    metric_row,
    pyplot,
    rates_csv,
    register_report,
    report_files,
)
from ..table import Estimate, Table, count, points, print_tables, rate, text
from . import paper
from .metrics import METRICS, STATE_STRUCTURES, TRAP_FAMILIES, RunAnalysis, analyze, episode_arrays, summarize
from .view import SABenchView

#: 11 scripted runs, as the paper's 11 models: the baselines with and without each mitigation
#: (agent, defense); scripts/bench.py sabench and scripts/baselines.py sabench score them
SCRIPTED_RUNS: tuple[tuple[str, str], ...] = (
    ("gold", "none"),
    ("clarify", "none"),
    ("act-first", "none"),
    ("random", "none"),
    ("gold", "confirm-prompt"),
    ("act-first", "confirm-prompt"),
    ("act-first", "confirm-gate"),
    ("act-first", "preview"),
    ("act-first", "preview-gate"),
    ("random", "confirm-gate"),
    ("random", "preview-gate"),
)

HEADLINE = (
    "goal",
    "cd",
    "goal_and_cd",
    "fail_and_cd",
    "external_cd",
    "ab_violation",
    "unnecessary_clarification",
    "clarification_proxy",
    "cd_given_goal",
    "cd_given_goal_non_ambiguous",
    "trace_cd",
    "undone_updates",
)


#: the overall metrics shown in the terminal table (fail+cd is in report.md: 80 columns hold six)
TERMINAL_METRICS = (
    "goal",
    "cd",
    "goal_and_cd",
    "external_cd",
    "ab_violation",
    "unnecessary_clarification",
)


@dataclass
class Report:
    runs: list[RunAnalysis]
    pairs: dict[tuple[str, str], dict[str, Interval]]
    n_resamples: int
    seed: int

    def names(self) -> list[str]:
        return [r.name for r in self.runs]


def verdicts(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The verdicts of episode records, with each record's system-level outcome."""
    return [{**r["verdict"], "system_outcome": r.get("system_outcome")} for r in records]


def load_runs(
    dirs: Sequence[str | Path], names: Sequence[str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Verdicts (with system outcomes) of each run folder, keyed by a unique display name."""
    from ..report import load_records

    return {name: verdicts(records) for name, records in load_records(dirs, names).items()}


def build_report(
    verdicts_by_run: dict[str, list[dict[str, Any]]],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Report:
    arrays = {name: episode_arrays(v) for name, v in verdicts_by_run.items()}
    runs, pairs = analyze(arrays, n_resamples=n_resamples, seed=seed)
    return Report(runs, pairs, n_resamples, seed)


# -- tables ------------------------------------------------------------------------------------------
def _groups(report: Report, scope: str) -> list[str]:
    seen: list[str] = []
    for r in report.runs:
        for s, g, _ in r.rates:
            if s == scope and g not in seen:
                seen.append(g)
    order = {v: i for i, v in enumerate((*TRAP_FAMILIES, *STATE_STRUCTURES))}
    return sorted(seen, key=lambda g: (order.get(g, 99), g))


def _rate(iv: Interval) -> Estimate:
    """A rate's cell; ``-`` for an empty denominator."""
    return Estimate(math.nan) if iv.n == 0 else Estimate.of(iv)


def _by_run(
    title: str, report: Report, scope: str, metric: str, groups: Sequence[str], caption: str = ""
) -> Table:
    """A row per run, a column per group of ``scope``: ``metric``'s rate."""
    table = Table(title, [text("run"), *(rate(g) for g in groups)], caption=caption)
    for r in report.runs:
        table.add(r.name, *(_rate(r.get(scope, g, metric)) for g in groups))
    return table


#: the breakdowns, each with its section title
BREAKDOWNS = (
    ("by_trap_family", "By trap family"),
    ("by_state_structure", "By state structure"),
    ("by_domain", "By target domain"),
)


def tables(report: Report) -> dict[str, Table]:
    """Every table of report.md, by key, in order."""
    out: dict[str, Table] = {}
    overall = Table("Overall", [text("run"), count("n"), *(rate(m) for m in HEADLINE)])
    for r in report.runs:
        overall.add(r.name, r.n_episodes, *(_rate(r.get("overall", "all", m)) for m in HEADLINE))
    out["overall"] = overall
    out["table4"] = table4(report)
    counts = Table(
        "Counts",
        [text("run"), count("CD runs"), count("goal-satisfied CD runs"), count("externally visible CD runs"),
         count("system-level outcomes"), text("by kind")],
        caption="System-level outcomes (provider errors, content filters) are excluded from every rate.",
    )  # fmt: skip
    for r in report.runs:
        counts.add(
            r.name, r.cd_runs, r.cd_runs_goal, r.cd_runs_external, sum(r.system_outcomes.values()),
            ", ".join(f"{k} {v}" for k, v in r.system_outcomes.items()),
        )  # fmt: skip
    out["counts"] = counts
    for scope, title in BREAKDOWNS:
        groups = _groups(report, scope)
        out[f"{scope}:cd"] = _by_run(f"{title}: CD rate", report, scope, "cd", groups)
        out[f"{scope}:ab"] = _by_run(
            f"{title}: AB-violation rate (ambiguity tasks)", report, scope, "ab_violation", groups
        )
    cells = _groups(report, "by_trap_x_state")
    out["trap_x_state"] = _by_run(
        "Trap family x state structure: CD rate", report, "by_trap_x_state", "cd", cells
    )
    fams = _groups(report, "external_only_by_trap_family")
    external = Table(
        "External-only authorization policy",
        [text("run"), rate("all"), rate("non-ambiguous"), *(rate(f) for f in fams)],
        caption="Only unauthorized writes that reach outside the organization count as CD.",
    )
    for r in report.runs:
        external.add(
            r.name,
            _rate(r.get("external_only", "all", "cd")),
            _rate(r.get("external_only", "non_ambiguous", "cd")),
            *(_rate(r.get("external_only_by_trap_family", f, "cd")) for f in fams),
        )
    out["external_only"] = external
    rules = list(report.runs[0].rule_violations) if report.runs else []
    failures = Table(
        "Failure rules",
        [text("run"), *(text(k) for k in rules)],
        caption="Unauthorized write records per violated rule (episodes with at least one in parentheses).",
    )
    for r in report.runs:
        failures.add(r.name, *(f"{r.rule_violations[k]:,} ({r.rule_episodes[k]:,})" for k in rules))
    out["failure_rules"] = failures
    if report.pairs:
        compared = ("goal", "cd", "external_cd", "unnecessary_clarification")
        pairs = Table(
            "Pairwise comparisons",
            [text("A - B"), *(points(m) for m in compared)],
            caption="Difference A - B in percentage points, templates resampled jointly.",
        )
        for (a, b), d in report.pairs.items():
            pairs.add(f"{a} - {b}", *(Estimate.of(d[m]) for m in compared))
        out["pairs"] = pairs
    templates = Table("Per template: goal / CD", [text("template"), *(rate(n) for n in report.names())])
    for t in _groups(report, "by_template"):
        templates.add(
            t,
            *(
                (_rate(r.get("by_template", t, "goal")), _rate(r.get("by_template", t, "cd")))
                for r in report.runs
            ),
        )
    out["per_template"] = templates
    return out


def to_markdown(report: Report) -> str:
    found = tables(report)
    parts = [
        "# SABench report",
        "",
        f"Rates in %, with 95% template-clustered bootstrap intervals ({report.n_resamples:,} resamples, seed "
        f"{report.seed}); per-template rates resample tasks within the template.",
        "",
    ]
    for key, table in found.items():
        title = "Table 4 form" if key == "table4" else table.title
        parts += [f"## {title}", "", table.markdown(), ""]
    parts += [
        "## Paper reference (not ours)",
        "",
        f"{paper.SOURCE}. Shown for orientation only: our corpus is authored to the paper's specification,",
        "so absolute numbers are not comparable.",
        "",
        f"- CD {100 * paper.OVERALL['cd']:.1f}% ({paper.COUNTS['cd_runs']} runs; {paper.COUNTS['cd_runs_goal']} goal-satisfied, {paper.COUNTS['cd_runs_external']} external); CD among goal-satisfied {100 * paper.OVERALL['cd_given_goal']:.1f}%; non-ambiguous goal-satisfied {100 * paper.OVERALL['cd_given_goal_non_ambiguous']:.1f}%",
        "- CD by trap family: "
        + ", ".join(f"{k} {100 * v:.1f}%" for k, v in paper.CD_BY_TRAP_FAMILY.items()),
        "- CD by state structure: "
        + ", ".join(f"{k} {100 * v:.1f}%" for k, v in paper.CD_BY_STATE_STRUCTURE.items()),
        "- AB violation: "
        + ", ".join(f"{k} {100 * v:.1f}%" for k, v in paper.AB_VIOLATION_BY_STATE_STRUCTURE.items())
        + f"; clarification proxy {100 * paper.OVERALL['clarification_proxy']:.1f}%",
        f"- Unnecessary clarification {100 * paper.UNNECESSARY_CLARIFICATION_RANGE[0]:.1f}-{100 * paper.UNNECESSARY_CLARIFICATION_RANGE[1]:.1f}% across models; external-only CD: ambiguity {100 * paper.EXTERNAL_ONLY_CD['ambiguity']:.1f}% vs other traps {100 * paper.EXTERNAL_ONLY_CD['other_traps']:.1f}%",
        "",
        "## Figures",
        "",
        "![Goal vs CD](fig2_goal_vs_cd.png)",
        "",
        "![CD by trap family and state structure](fig3_cd_by_trap_and_state.png)",
        "",
    ]
    return "\n".join(parts)


#: the paper's Table 4 columns: (metric, header)
TABLE4 = (
    ("goal", "Goal"),
    ("cd", "CD"),
    ("goal_and_cd", "Goal+CD"),
    ("ab_violation", "AB viol."),
    ("external_cd", "Ext. CD"),
)


def _cell(iv: Interval) -> tuple[str, str]:
    """``(value, interval)`` in % with one decimal, for LaTeX; ``n/a`` for an empty denominator."""
    if iv.n == 0 or iv.value != iv.value:
        return "n/a", ""
    return f"{100 * iv.value:.1f}", f"{100 * iv.ci_low:.1f}--{100 * iv.ci_high:.1f}"


def table4(report: Report) -> Table:
    """The paper's Table 4 form: one row per run, goal / CD / goal+CD / AB violation / external CD in %
    with 95% template-clustered intervals."""
    table = Table(
        "Table 4",
        [text("Run"), count("n"), *(rate(h) for _, h in TABLE4)],
        caption=f"% with 95% template-clustered bootstrap intervals ({report.n_resamples:,} resamples, "
        f"seed {report.seed}); AB violation over ambiguity tasks only.",
    )
    for r in report.runs:
        table.add(r.name, r.n_episodes, *(_rate(r.get("overall", "all", m)) for m, _ in TABLE4))
    return table


def table4_markdown(report: Report) -> str:
    """:func:`table4` in Markdown (``table4.md``)."""
    return table4(report).markdown() + "\n"


def table4_latex(report: Report) -> str:
    """Table 4 as a LaTeX ``booktabs`` table (value and interval on one line; fits one column width
    at ``\\small``)."""
    lines = [
        "% Generated by tooltrap report; needs \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering\\small",
        "\\begin{tabular}{l" + "r" * len(TABLE4) + "}",
        "\\toprule",
        "Run & " + " & ".join(h for _, h in TABLE4) + " \\\\",
        "\\midrule",
    ]
    for r in report.runs:
        cells = []
        for metric, _ in TABLE4:
            value, interval = _cell(r.get("overall", "all", metric))
            cells.append(f"{value} {{\\scriptsize[{interval}]}}" if interval else value)
        name = r.name.replace("_", "\\_").replace("&", "\\&")
        lines.append(f"{name} & " + " & ".join(cells) + " \\\\")
    lines += [
        "\\bottomrule",
        "\\end{tabular}",
        f"\\caption{{SABench outcomes in \\%, with 95\\% template-clustered bootstrap intervals "
        f"({report.n_resamples:,} resamples). AB violation is over ambiguity tasks.}}",
        "\\end{table}",
    ]
    return "\n".join(lines) + "\n"


def to_records(report: Report) -> list[MetricRow]:
    """Long format: one row per (run, scope, group, metric)."""
    rows = [
        metric_row(r.name, scope, group, metric, iv)
        for r in report.runs
        for (scope, group, metric), iv in r.rates.items()
    ]
    rows += [
        metric_row(f"{a} - {b}", "pairwise_difference", "all", metric, iv)
        for (a, b), diffs in report.pairs.items()
        for metric, iv in diffs.items()
    ]
    return rows


def to_csv(report: Report) -> str:
    return rates_csv(to_records(report))


def to_json(report: Report) -> dict[str, Any]:
    return {
        "n_resamples": report.n_resamples,
        "seed": report.seed,
        "metrics": {name: {"outcome": o, "denominator": d or "all"} for name, (o, d) in METRICS.items()},
        "runs": [
            {
                "name": r.name,
                "n_episodes": r.n_episodes,
                "cd_runs": r.cd_runs,
                "cd_runs_goal": r.cd_runs_goal,
                "cd_runs_external": r.cd_runs_external,
                "rule_violations": r.rule_violations,
                "rule_episodes": r.rule_episodes,
                "system_outcomes": r.system_outcomes,
            }
            for r in report.runs
        ],
        "rates": [json_safe(row) for row in to_records(report)],
        "paper_reference": {
            "source": paper.SOURCE,
            "overall": paper.OVERALL,
            "counts": paper.COUNTS,
            "cd_by_trap_family": paper.CD_BY_TRAP_FAMILY,
            "cd_by_state_structure": paper.CD_BY_STATE_STRUCTURE,
        },
    }


#: terminal headers (short, so the table fits 80 columns)
TERMINAL_HEADERS = {
    "goal": "goal",
    "cd": "cd",
    "goal_and_cd": "goal+cd",
    "fail_and_cd": "fail+cd",
    "external_cd": "ext cd",
    "ab_violation": "ab viol",
    "unnecessary_clarification": "unn clar",
}
TERMINAL_WIDTH = 80


def terminal_tables(report: Report) -> list[Table]:
    """The headline in two tables of three metrics (each fits 80 columns with the intervals stacked under
    the values) and the CD rate by trap family and by state structure."""
    title = f"SABench, % [95% template CI, {report.n_resamples:,} resamples]"
    out = []
    for part, metrics in enumerate((TERMINAL_METRICS[:3], TERMINAL_METRICS[3:])):
        table = Table(
            title + (" (continued)" if part else ""),
            [text("run"), *(rate(TERMINAL_HEADERS.get(m, m)) for m in metrics)],
        )
        for r in report.runs:
            table.add(r.name, *(_rate(r.get("overall", "all", m)) for m in metrics))
        out.append(table)
    for scope in ("by_trap_family", "by_state_structure"):
        groups = _groups(report, scope)
        for start in range(0, len(groups), 3):
            shown = groups[start : start + 3]
            table = Table(
                f"CD rate {scope.replace('_', ' ')}, %",
                [text("run"), *(rate(g.replace("_", " ")) for g in shown)],
            )
            for r in report.runs:
                table.add(r.name, *(_rate(r.get(scope, g, "cd")) for g in shown))
            out.append(table)
    return out


def print_terminal(report: Report, *, console: Any = None) -> None:
    """Print the headline and the CD breakdowns as tables at most 80 columns wide."""
    print_tables(terminal_tables(report), width=TERMINAL_WIDTH, stacked=True, console=console)


# -- figures -----------------------------------------------------------------------------------------
def plot_figures(report: Report, out_dir: Path) -> list[Path]:
    """Paper Fig. 2 (goal vs CD per run) and Fig. 3 (CD by trap family and by state structure), each with
    the paper's reference values beside ours, labeled as such. Needs matplotlib (the ``plot`` extra)."""
    plt = pyplot()
    if plt is None:
        return []
    paths = []
    fig, ax = plt.subplots(figsize=(8.4, 4.8))
    first_at: dict[tuple[float, float], list[str]] = {}  # runs on one point: later ones drawn smaller
    for i, r in enumerate(report.runs):
        g, c = r.get("overall", "all", "goal"), r.get("overall", "all", "cd")
        style = series_style(i)
        here = first_at.setdefault((round(g.value, 4), round(c.value, 4)), [])
        same = f", same point as {here[0]}" if here else ""
        here.append(r.name)
        ax.errorbar(
            100 * g.value,
            100 * c.value,
            xerr=[[100 * (g.value - g.ci_low)], [100 * (g.ci_high - g.value)]],
            yerr=[[100 * (c.value - c.ci_low)], [100 * (c.ci_high - c.value)]],
            fmt=style.marker,
            color=style.color,
            markersize=max(3.0, 9.0 - 2.0 * (len(here) - 1)),
            zorder=2 + len(here),
            capsize=3,
            label=f"{r.name} (n={r.n_episodes}{same})",
            clip_on=False,
        )
    ax.axhline(100 * paper.OVERALL["cd"], ls="--", color="grey", lw=1)
    ax.text(
        2,
        100 * paper.OVERALL["cd"] + 1,
        f"paper reference: 11-model CD {100 * paper.OVERALL['cd']:.1f}% (not ours)",
        color="grey",
        fontsize=8,
    )
    # a little room past 0 and 100 so points and error bars on the edges are not cut
    ax.set_xlim(-4, 104)
    ax.set_ylim(-4, 104)
    ax.set_xlabel("goal rate (%)")
    ax.set_ylabel("collateral-damage rate (%)")
    ax.set_title("Goal vs collateral damage (cf. paper Fig. 2)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))  # outside: never over a point
    fig.tight_layout()
    path = out_dir / "fig2_goal_vs_cd.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    paths.append(path)

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    for ax, scope, reference, title in (
        (axes[0], "by_trap_family", paper.CD_BY_TRAP_FAMILY, "CD by trap family"),
        (axes[1], "by_state_structure", paper.CD_BY_STATE_STRUCTURE, "CD by state structure"),
    ):
        groups = [
            g
            for g in (TRAP_FAMILIES if scope == "by_trap_family" else STATE_STRUCTURES)
            if g in _groups(report, scope)
        ]
        n_bars = len(report.runs) + 1
        width = 0.8 / n_bars
        for i, r in enumerate(report.runs):
            values = [r.get(scope, g, "cd") for g in groups]
            xs = [j + i * width for j in range(len(groups))]
            bars = ax.bar(
                xs,
                [100 * v.value for v in values],
                width,
                color=series_style(i).color,
                label=r.name,
                yerr=[
                    [100 * (v.value - v.ci_low) for v in values],
                    [100 * (v.ci_high - v.value) for v in values],
                ],
                capsize=2,
            )
            color = bars.patches[0].get_facecolor() if bars.patches else None
            for x, v in zip(xs, values, strict=True):
                if v.value == 0:  # a zero bar has no height: mark it so it is not read as missing
                    ax.plot([x - width / 2, x + width / 2], [0, 0], color=color, lw=3, clip_on=False)
        xs = [j + (n_bars - 1) * width for j in range(len(groups))]
        ax.bar(
            xs,
            [100 * reference.get(g, float("nan")) for g in groups],
            width,
            color="lightgrey",
            hatch="//",
            edgecolor="grey",
            label="paper reference (11 models, not ours)",
        )
        # a group's n under its name (the runs share the tasks), or each run's n when they differ
        sizes = [sorted({r.get(scope, g, "cd").n for r in report.runs}) for g in groups]
        ticks = [
            f"{g}\n(n={n[0]})" if len(n) == 1 else f"{g}\n(n={min(n)}-{max(n)})"
            for g, n in zip(groups, sizes, strict=True)
        ]
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))], ticks)
        ax.set_ylabel("CD rate (%)")
        ax.set_ylim(0, 105)
        ax.set_title(f"{title} (cf. paper Fig. 3)")
    # one legend under both panels: inside a panel it would cover bars and labels
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.04 + 0.035 * ((len(labels) - 1) // 4), 1, 1))
    path = out_dir / "fig3_cd_by_trap_and_state.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    paths.append(path)
    return paths


def write_report(report: Report, out_dir: str | Path, *, figures: bool = True) -> list[Path]:
    """Write report.md, metrics.csv, report.json, table4.md, table4.tex (and the figures when
    matplotlib is installed)."""
    return REPORT.write(report, out_dir, figures=figures)


class SABenchReport(BenchmarkReport):
    """SABench through the generic report interface (``tooltrap eval`` / ``tooltrap report``)."""

    cluster_label = "template"
    view = SABenchView()
    progress_outcomes = ("goal", "cd")

    def summarize(
        self,
        records: Sequence[dict[str, Any]],
        *,
        n_resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
    ) -> dict[str, Interval]:
        return summarize(episode_arrays(verdicts(records)), n_resamples=n_resamples, seed=seed)

    def build(
        self,
        runs: dict[str, list[dict[str, Any]]],
        *,
        n_resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
        identities: Mapping[str, tuple[str, str]] | None = None,
    ) -> Report:
        return build_report(
            {name: verdicts(records) for name, records in runs.items()}, n_resamples=n_resamples, seed=seed
        )

    def files(self, report: Report) -> dict[str, str]:
        return report_files(
            "report.md",
            to_markdown(report),
            to_records(report),
            to_json(report),
            **{"table4.md": table4_markdown(report), "table4.tex": table4_latex(report)},
        )

    def figures(self, report: Report, out_dir: Path) -> list[Path]:
        return plot_figures(report, out_dir)

    def print_terminal(self, report: Any) -> None:
        print_terminal(report)


#: the report ``tooltrap eval`` / ``tooltrap report`` use for SABench runs
REPORT = register_report(SABench, SABenchReport())
