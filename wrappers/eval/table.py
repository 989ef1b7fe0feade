"""One typed table behind every report table: columns with a kind, rows of cells, three renderers.

A :class:`Table` is a title, its :class:`Column` list (each with a :class:`Kind`: text, count, rate,
number, signed number, percentage points) and rows of cells. A cell is a ``str`` (text), an ``int``
(count), a ``float`` or an :class:`Estimate` (a value with an optional interval, n and one-sided upper
bound), ``None`` (an empty cell: nothing applies) or a tuple of those (several values in one cell,
shown ``a / b``). The kind of the column decides how a value is shown, in one place
(:func:`format_cell`), so the terminal, the Markdown report and the README show a number the same way:

* rate: a percentage with its interval, ``44.2% [35.0, 53.3]``; a rate of 0 with a one-sided upper
  bound ``0.0% (<= 2.5%)``; an empty denominator ``-``
* number: ``2.52 [2.23, 2.82]`` (``digits`` decimals)
* signed: ``+0.125 [-0.010, +0.260]`` (rewards)
* points: a difference of two rates in percentage points, ``+3.1 pts [-1.0, +7.2]``
* count: ``1,234``; text: as given

A column with ``show_n`` adds the denominator, ``44.2% [35.0, 53.3] (n=120)``.

Renderers: :meth:`Table.markdown` (a pipe table; a ``|`` in a cell is escaped and an empty cell stays
an empty cell, so every row has the header's cell count), :meth:`Table.rich` (a ``rich`` table for
the terminal) and :meth:`Table.csv` (raw values, an :class:`Estimate` spread over ``name``,
``name_ci_low``, ``name_ci_high``, ``name_n``).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol


class Kind(Enum):
    """How a column's values are shown."""

    TEXT = "text"
    COUNT = "count"
    RATE = "rate"
    NUMBER = "number"
    SIGNED = "signed"
    POINTS = "points"
    #: each row says: a table with one row per metric and one column per run shows every cell of a row
    #: the way the row's own column (:meth:`Table.add`'s ``row``) says
    ROW = "row"


#: the kinds whose cells are right-aligned (numbers)
NUMERIC = frozenset({Kind.COUNT, Kind.RATE, Kind.NUMBER, Kind.SIGNED, Kind.POINTS, Kind.ROW})


class IntervalLike(Protocol):
    """A value with its interval and n (a bootstrap interval, a benchmark's own rate type)."""

    value: float
    ci_low: float
    ci_high: float
    n: int


@dataclass(frozen=True)
class Estimate:
    """A value with, optionally, its 95% interval, its denominator ``n`` and (for a rate observed as 0)
    its one-sided upper bound. ``value`` NaN: nothing to estimate (an empty denominator)."""

    value: float
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    upper_bound: float | None = None

    @classmethod
    def of(cls, interval: IntervalLike, *, interval_shown: bool = True) -> Estimate:
        """An interval-like object (value, ci_low, ci_high, n; ``upper_bound`` when it has one);
        ``interval_shown=False`` keeps the value and n only."""
        bound = getattr(interval, "upper_bound", None)
        if not interval_shown:
            return cls(float(interval.value), n=int(interval.n))
        return cls(
            float(interval.value), float(interval.ci_low), float(interval.ci_high), int(interval.n), bound
        )


Scalar = str | int | float | Estimate | None
Cell = Scalar | tuple[Scalar, ...]


@dataclass(frozen=True)
class Column:
    """A column: its header, its kind, the decimals of numbers (``digits``: default 1 for rates and
    points, 2 for numbers, 3 for signed numbers) and whether a cell shows its denominator."""

    name: str
    kind: Kind = Kind.TEXT
    digits: int | None = None
    show_n: bool = False

    @property
    def decimals(self) -> int:
        if self.digits is not None:
            return self.digits
        return {Kind.NUMBER: 2, Kind.SIGNED: 3}.get(self.kind, 1)


def text(name: str) -> Column:
    return Column(name, Kind.TEXT)


def count(name: str) -> Column:
    return Column(name, Kind.COUNT)


def rate(name: str, *, show_n: bool = False, digits: int | None = None) -> Column:
    return Column(name, Kind.RATE, digits, show_n)


def number(name: str, *, digits: int | None = None, show_n: bool = False) -> Column:
    return Column(name, Kind.NUMBER, digits, show_n)


def signed(name: str, *, digits: int | None = None, show_n: bool = False) -> Column:
    return Column(name, Kind.SIGNED, digits, show_n)


def points(name: str, *, digits: int | None = None) -> Column:
    return Column(name, Kind.POINTS, digits)


def _nan(x: float | None) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _number(kind: Kind, x: float, decimals: int) -> str:
    """One number as the kind shows it (rates scaled to %, points and signed with their sign)."""
    if kind is Kind.RATE:
        return f"{100 * x:.{decimals}f}"
    if kind is Kind.POINTS:
        return f"{100 * x:+.{decimals}f}"
    if kind is Kind.SIGNED:
        return f"{x:+.{decimals}f}"
    return f"{x:.{decimals}f}"


def _estimate(column: Column, e: Estimate) -> str:
    kind, d = column.kind, column.decimals
    if _nan(e.value):
        return "-"
    if kind is Kind.COUNT:  # a count kept as a float (a summary's value): no interval to show
        return f"{round(e.value):,}"
    unit = "%" if kind is Kind.RATE else " pts" if kind is Kind.POINTS else ""
    shown = _number(kind, e.value, d) + unit
    if e.upper_bound is not None and e.value == 0 and kind is Kind.RATE:  # a bound on a rate only
        bound = _number(kind, e.upper_bound, d) + unit
        shown += f" (<= {bound})"
    elif not _nan(e.ci_low) and not _nan(e.ci_high):
        shown += f" [{_number(kind, e.ci_low, d)}, {_number(kind, e.ci_high, d)}]"  # type: ignore[arg-type]
    if column.show_n and e.n is not None:
        shown += f" (n={e.n:,})"
    return shown


def _scalar(column: Column, value: Scalar) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Estimate):
        return _estimate(column, value)
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) and column.kind in (Kind.COUNT, Kind.TEXT):
        return f"{value:,}"
    return _estimate(column, Estimate(float(value)))


def format_cell(column: Column, cell: Cell) -> str:
    """The cell as every renderer shows it: ``None`` is empty, a tuple is its values joined by ``/``."""
    if isinstance(cell, tuple):
        return " / ".join(_scalar(column, value) for value in cell)
    return _scalar(column, cell)


@dataclass
class Table:
    """A typed table: ``rows`` hold one cell per column (checked)."""

    title: str
    columns: Sequence[Column]
    rows: list[list[Cell]] = field(default_factory=list)
    #: one line under the table: what it compares, what its numbers are
    caption: str = ""
    #: per row, the column that shows its cells in the :attr:`Kind.ROW` columns (None: text)
    row_columns: list[Column | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        for row in self.rows:
            self._check(row)
        self.row_columns += [None] * (len(self.rows) - len(self.row_columns))

    def _check(self, row: Sequence[Cell]) -> None:
        if len(row) != len(self.columns):
            raise ValueError(
                f"table {self.title!r}: a row of {len(row)} cells for {len(self.columns)} columns: {row!r}"
            )

    def add(self, *cells: Cell, row: Column | None = None) -> None:
        """Append a row (one cell per column); ``row``: how its cells in :attr:`Kind.ROW` columns are
        shown (a table of metrics by run: the metric's kind)."""
        self._check(cells)
        self.rows.append(list(cells))
        self.row_columns.append(row)

    def column_of(self, i: int, j: int) -> Column:
        """The column that shows cell ``j`` of row ``i``."""
        column = self.columns[j]
        if column.kind is Kind.ROW:
            return self.row_columns[i] or Column(column.name)
        return column

    def formatted(self) -> list[list[str]]:
        """Every row's cells as shown."""
        return [
            [format_cell(self.column_of(i, j), cell) for j, cell in enumerate(row)]
            for i, row in enumerate(self.rows)
        ]

    # -- renderers -------------------------------------------------------------------------------
    def markdown(self) -> str:
        """A Markdown pipe table (numbers right-aligned), then the caption as a paragraph."""

        def line(cells: Iterable[str]) -> str:
            return "| " + " | ".join(_md_escape(c) for c in cells) + " |"

        align = ["---:" if c.kind in NUMERIC else "---" for c in self.columns]
        lines = [line(c.name for c in self.columns), "|" + "|".join(align) + "|"]
        lines += [line(row) for row in self.formatted()]
        if self.caption:
            lines += ["", self.caption]
        return "\n".join(lines)

    def rich(self, *, stacked: bool = False) -> Any:
        """A ``rich`` table (the title above, the caption under it). ``stacked``: an interval goes on a
        line of its own under the value (keeps narrow terminals' columns narrow; the same text)."""
        from rich.table import Table as RichTable

        table = RichTable(title=self.title, caption=self.caption or None, show_lines=stacked)
        for c in self.columns:
            table.add_column(c.name, justify="right" if c.kind in NUMERIC else "left")
        for row in self.formatted():
            table.add_row(*(cell.replace(" [", "\n[", 1) if stacked else cell for cell in row))
        return table

    def csv(self) -> str:
        """Raw values (rates as fractions, full precision): an :class:`Estimate` column ``x`` gives
        ``x``, ``x_ci_low``, ``x_ci_high``, ``x_n``; empty cells are empty fields."""
        spread = [any(isinstance(row[j], Estimate) for row in self.rows) for j in range(len(self.columns))]
        header: list[str] = []
        for c, wide in zip(self.columns, spread, strict=True):
            header += [c.name, f"{c.name}_ci_low", f"{c.name}_ci_high", f"{c.name}_n"] if wide else [c.name]
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        for row in self.rows:
            fields: list[Any] = []
            for cell, wide in zip(row, spread, strict=True):
                if wide:
                    e = cell if isinstance(cell, Estimate) else Estimate(math.nan)
                    fields += [_raw(e.value), _raw(e.ci_low), _raw(e.ci_high), _raw(e.n)]
                else:
                    fields.append(_raw(cell))
            writer.writerow(fields)
        return buffer.getvalue()


def _raw(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, tuple):
        return " / ".join(str(_raw(v)) for v in value)
    if isinstance(value, Estimate):
        return value.value
    return value


def _md_escape(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


def parse_markdown_tables(markdown: str) -> list[list[list[str]]]:
    """Every pipe table in ``markdown`` read back: per table, its rows (the header first, the
    alignment row left out) as lists of cells, escaped pipes unescaped. The inverse of
    :meth:`Table.markdown` (the tests read every report back through it)."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] | None = None
    for line in markdown.splitlines():
        if not line.startswith("|"):
            current = None
            continue
        if current is None:
            current = []
            tables.append(current)
        cells = _split_row(line)
        if all(set(cell) <= set("-:") and cell for cell in cells):
            continue  # the alignment row
        current.append(cells)
    return tables


def _split_row(line: str) -> list[str]:
    body = line.strip()
    body = body[1:-1] if body.endswith("|") and not body.endswith("\\|") else body[1:]
    cells, cell, escaped = [], "", False
    for ch in body:
        if escaped:
            cell += ch if ch == "|" else "\\" + ch
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "|":
            cells.append(cell.strip())
            cell = ""
        else:
            cell += ch
    cells.append(cell.strip())
    return cells


def print_tables(
    tables: Sequence[Table], *, width: int | None = None, stacked: bool = False, console: Any = None
) -> None:
    """Print tables to the terminal (:meth:`Table.rich`), ``width`` columns wide (default: the
    terminal's), or to ``console`` (a ``rich`` console)."""
    from rich.console import Console

    if console is None:
        console = Console(width=width) if width else Console()
    for table in tables:
        console.print(table.rich(stacked=stacked))
