"""What every report's figures share: one series style per series (a colour and a marker of their
own for the first 12, a line style on top), small-multiple grids, and labels placed where they do not
write over each other. Needs matplotlib (the ``plot`` extra) only when a figure is drawn."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: 12 colours told apart on white and (the first 7, Okabe-Ito without its pale yellow) with the common
#: colour-vision deficiencies; a series is also told apart by its marker (:data:`MARKERS`)
PALETTE = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#D55E00",  # vermillion
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#882255",  # wine
    "#999933",  # olive
    "#332288",  # indigo
    "#888888",  # grey
    "#661100",  # brown
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*")
LINE_STYLES = ("-", "--", "-.", ":")
LABEL_FONT_SIZE = 7.0


@dataclass(frozen=True)
class SeriesStyle:
    """How one series is drawn."""

    color: str
    marker: str
    linestyle: str

    def line(self) -> dict[str, Any]:
        """Keyword arguments of ``Axes.plot`` for a line with markers."""
        return {"color": self.color, "marker": self.marker, "linestyle": self.linestyle}


def series_style(index: int) -> SeriesStyle:
    """The ``index``-th series' style: a colour and a marker of its own for the first 12 series, and
    a distinct (colour, marker) pair for the first 144 (the marker shifts by one per round of the
    palette)."""
    k = len(PALETTE)
    return SeriesStyle(
        PALETTE[index % k],
        MARKERS[(index + index // k) % len(MARKERS)],
        LINE_STYLES[(index // k) % len(LINE_STYLES)],
    )


def grid(plt: Any, n: int, *, panel: tuple[float, float] = (4.0, 3.2), max_columns: int = 3) -> Any:
    """A figure of ``n`` small multiples with shared axes (``panel``: inches per panel); the axes in
    reading order, unused ones hidden. Returns (figure, axes list)."""
    columns = min(max(n, 1), max_columns if n > 4 else 2 if n > 1 else 1)
    rows = math.ceil(max(n, 1) / columns)
    fig, axes = plt.subplots(
        rows,
        columns,
        figsize=(panel[0] * columns, panel[1] * rows + 0.8),
        sharex=True,
        sharey=True,
        squeeze=False,
    )
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _label_offsets(line: float) -> list[float]:
    """Vertical offsets (points) of a label's bottom from its point: just above, then a line further up
    or down in turn."""
    above = [3 + k * line for k in range(30)]
    below = [-3 - line - k * line for k in range(30)]
    return [offset for pair in zip(above, below, strict=True) for offset in pair]


def _inside(frame: Any, box: Any) -> bool:
    return frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1


def place_labels(ax: Any, labels: Sequence[tuple[float, float, str, str]]) -> list[Any]:
    """Annotate each ``(x, y, text, colour)`` beside its point at the first offset whose box meets no
    label placed before, inside the axes if one is: points at the same or close places would otherwise
    write over each other. A label moved off its point gets a leader line. Call once the axes' limits
    and the layout are final (boxes are measured as drawn)."""
    figure = ax.figure
    renderer = figure.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    offsets = _label_offsets(1.35 * LABEL_FONT_SIZE)
    placed: list[Any] = []
    annotations = []
    for x, y, text, color in labels:
        on_the_right = ax.transData.transform((x, y))[0] < frame.x0 + 0.6 * frame.width
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
