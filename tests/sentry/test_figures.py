"""SentryBench's figures, a panel per agent: every run drawn once in its agent's panel with its
defense's (colour, marker), the same in every panel; a curve under an equal one says so; frontier labels
that do not write over each other where defenses share a point; the legends name what is drawn."""

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


def _panels(fig):
    return {ax.get_title(): ax for ax in fig.axes if ax.get_visible() and ax.get_title()}


def test_every_harm_curve_is_drawn_once_in_its_agents_panel():
    runs = _runs()
    panels = _panels(harm_curve_figure(runs))
    assert set(panels) == set(AGENTS)
    styles = {}
    for agent, ax in panels.items():
        lines = ax.get_lines()
        own = [r for r in runs if r.agent == agent]
        assert len(lines) == len(own)
        # within a panel each defense has its own (colour, marker, line style); across panels the same one
        for line, run in zip(lines, own, strict=True):
            style = (line.get_color(), line.get_marker(), line.get_linestyle())
            assert styles.setdefault(run.defense, style) == style
        assert len({(line.get_color(), line.get_marker()) for line in lines}) == len(own)
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert [t.split(" ")[0] for t in legend] == [r.defense for r in own]
    cautious = [t.get_text() for t in panels["cautious"].get_legend().get_texts()]
    assert cautious == ["none", "caution (= none)", "tgcc (= none)"]  # curves drawn over another say so


def test_frontier_labels_do_not_overlap():
    runs = _runs()
    fig = frontier_figure(runs)
    fig.canvas.draw()  # places the labels' texts
    renderer = fig.canvas.get_renderer()
    panels = _panels(fig)
    assert set(panels) == set(AGENTS)
    for agent, ax in panels.items():
        labels = ax.texts
        own = [r for r in runs if r.agent == agent]
        # one label per point: defenses on one point share it
        assert len(labels) == len({(r.model["over_refusal"].value, r.model["asr"].value) for r in own})
        boxes = [Text.get_window_extent(t, renderer) for t in labels]  # the text's box, not its leader
        assert not [
            (a.get_text(), b.get_text())
            for (a, box_a), (b, box_b) in itertools.combinations(zip(labels, boxes, strict=True), 2)
            if box_a.overlaps(box_b)
        ], agent
    assert "none, caution, tgcc" in {t.get_text() for t in panels["cautious"].texts}
    legend = {t.get_text() for t in fig.legends[0].get_texts()}
    assert legend == {*(f"defense {d}" for d in DEFENSES), "the other agents"}


def test_the_report_writes_both_figures(tmp_path):
    tables = SentryTables(_runs(), [], SentryReport().costs)
    paths = SentryReport().figures(tables, tmp_path)
    assert [p.name for p in paths] == ["frontier.png", "harm_curve.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)
