"""SentryBench's figures: every harm curve told apart by its (colour, line style, marker), a legend
entry for every series drawn, frontier labels that do not write over each other where runs share a
point (several agents at 0% ASR)."""

from __future__ import annotations

import itertools

import pytest

from tooltrap.wrappers.eval.sentry.metrics import Rate
from tooltrap.wrappers.eval.sentry.report import (
    RATIOS,
    SentryReport,
    SentryRun,
    SentryTables,
    frontier_figure,
    harm_curve_figure,
    series_styles,
)

Text = pytest.importorskip("matplotlib.text").Text  # the figures need the plot extra
AGENTS = ("obedient", "cautious", "form-sensitive", "careful")
DEFENSES = ("none", "caution", "tgcc")


def _run(agent: str, defense: str, over_refusal: float, asr: float, slope: float) -> SentryRun:
    run = SentryRun(f"{agent}+{defense}", agent, defense, 190)
    run.model = {"over_refusal": Rate(over_refusal, 0, 1, 40), "asr": Rate(asr, 0, 1, 120)}
    run.curve = [slope * r for r in RATIOS]
    return run


def _runs() -> list[SentryRun]:
    """Twelve runs, seven of them at the same two points, three with the same harm curve."""
    points = {
        "obedient": [(0, 1.0), (0.5, 0.85), (0, 0.44)],
        "cautious": [(0.5, 0), (0.5, 0), (0.5, 0)],
        "form-sensitive": [(0.5, 0.14), (0.5, 0), (0.5, 0.05)],
        "careful": [(0, 0), (0.5, 0), (0, 0)],
    }
    return [
        _run(agent, defense, x, y, slope=0.3 if agent == "cautious" else 0.1 * i)
        for i, (agent, (defense, (x, y))) in enumerate(
            (agent, pair) for agent in AGENTS for pair in zip(DEFENSES, points[agent], strict=True)
        )
    ]


def test_every_harm_curve_has_its_own_style_and_legend_entry():
    runs = _runs()
    ax = harm_curve_figure(runs).axes[0]
    lines = ax.get_lines()
    assert len(lines) == len(runs)
    assert len({(line.get_color(), line.get_linestyle(), line.get_marker()) for line in lines}) == len(runs)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(legend) == len(runs) and all(t.startswith(r.name) for t, r in zip(legend, runs, strict=True))
    assert "cautious+tgcc (= cautious+none)" in legend  # a curve drawn over another one says so


def test_styles_stay_distinct_past_the_palette():
    runs = [_run(f"agent{a}", d, 0, 0, 1) for a in range(9) for d in DEFENSES]
    styles = series_styles(runs)
    assert len(set(styles.values())) == len(runs)


def test_frontier_labels_do_not_overlap():
    runs = _runs()
    fig = frontier_figure(runs)
    ax = fig.axes[0]
    fig.canvas.draw()  # places the labels' texts
    renderer = fig.canvas.get_renderer()
    labels = ax.texts
    # one label per agent and point: cautious's three defenses share one
    assert len(labels) == len({(r.agent, r.model["over_refusal"].value, r.model["asr"].value) for r in runs})
    assert "cautious: none, caution, tgcc" in {t.get_text() for t in labels}
    boxes = [Text.get_window_extent(t, renderer) for t in labels]  # the text's box, not its leader line
    assert not [
        (a.get_text(), b.get_text())
        for (a, box_a), (b, box_b) in itertools.combinations(zip(labels, boxes, strict=True), 2)
        if box_a.overlaps(box_b)
    ]
    legend = {t.get_text() for t in ax.get_legend().get_texts()}
    assert legend == {*AGENTS, *(f"defense {d}" for d in DEFENSES)}  # every agent's line, every marker


def test_the_report_writes_both_figures(tmp_path):
    tables = SentryTables(_runs(), [], SentryReport().costs)
    paths = SentryReport().figures(tables, tmp_path)
    assert [p.name for p in paths] == ["frontier.png", "harm_curve.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)
