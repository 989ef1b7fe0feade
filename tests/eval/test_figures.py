"""What every report's figures share: series told apart by colour and marker well past ten series."""

from __future__ import annotations

from tooltrap.wrappers.eval.figures import MARKERS, PALETTE, series_style


def test_the_first_twelve_series_differ_in_colour_and_in_marker():
    styles = [series_style(i) for i in range(12)]
    assert len({s.color for s in styles}) == 12 == len(PALETTE)
    assert len({s.marker for s in styles}) == 12 == len(MARKERS)


def test_styles_stay_distinct_past_the_palette():
    styles = [series_style(i) for i in range(144)]
    assert len({(s.color, s.marker) for s in styles}) == 144
