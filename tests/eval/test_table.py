"""The typed table behind every report table: one number format per kind, rows that always have the
header's cell count (empty cells stay cells, pipes are escaped), the same text in Markdown and in the
terminal, raw values in CSV; and no report or README script joins ``|`` rows by hand."""

from __future__ import annotations

import ast
import csv
import io
import math
from pathlib import Path

import pytest

from tooltrap.wrappers.eval.table import (
    Column,
    Estimate,
    Kind,
    Table,
    count,
    format_cell,
    number,
    parse_markdown_tables,
    points,
    rate,
    signed,
    text,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("column", "cell", "shown"),
    [
        (rate("asr"), Estimate(0.44166, 0.35, 0.53333, 120), "44.2% [35.0, 53.3]"),
        (rate("asr", show_n=True), Estimate(0.44166, 0.35, 0.53333, 120), "44.2% [35.0, 53.3] (n=120)"),
        (rate("asr"), Estimate(0.0, 0.0, 0.0, 120, upper_bound=0.0247), "0.0% (<= 2.5%)"),
        (rate("asr"), Estimate(math.nan, math.nan, math.nan, 0), "-"),
        (rate("asr"), 0.5, "50.0%"),  # a rate without an interval
        (number("harm"), Estimate(2.5213, 2.23, 2.821, 200, upper_bound=0.01), "2.52 [2.23, 2.82]"),
        (number("sbm", digits=3), Estimate(0.4425, 0.405, 0.483, 46), "0.443 [0.405, 0.483]"),
        (signed("reward"), Estimate(0.125, -0.01, 0.26, 40), "+0.125 [-0.010, +0.260]"),
        (points("cd"), Estimate(0.031, -0.01, 0.072, 40), "+3.1 pts [-1.0, +7.2]"),
        (count("n"), 12345, "12,345"),
        (count("void"), 3.0, "3"),
        (text("run"), "obedient+tgcc", "obedient+tgcc"),
        (text("run"), None, ""),
        (rate("goal / cd"), (Estimate(1.0), Estimate(0.25)), "100.0% / 25.0%"),
    ],
)
def test_each_kind_has_one_format(column: Column, cell, shown: str) -> None:
    assert format_cell(column, cell) == shown


def test_a_row_must_have_a_cell_per_column() -> None:
    table = Table("t", [text("run"), rate("goal")])
    with pytest.raises(ValueError, match="a row of 1 cells for 2 columns"):
        table.add("gold")
    with pytest.raises(ValueError, match="a row of 3 cells"):
        Table("t", [text("run"), rate("goal")], rows=[["a", 0.5, 0.1]])


def test_markdown_reads_back_cell_for_cell() -> None:
    """Empty cells stay empty cells, pipes and newlines inside a cell do not split it; numbers are
    right-aligned; the caption follows the table."""
    table = Table(
        "t",
        [text("run"), text("injection"), rate("p_S1"), count("n")],
        caption="What it compares.",
    )
    table.add("a|b", "type_mismatch", Estimate(1.0, 1.0, 1.0, 10), 10)
    table.add("model", "(no injected episodes)", None, None)
    table.add("two\nlines", "", Estimate(math.nan), 0)
    md = table.markdown()
    assert md.splitlines()[1] == "|---|---|---:|---:|"
    assert md.endswith("\n\nWhat it compares.")
    [parsed] = parse_markdown_tables(md)
    assert parsed[0] == ["run", "injection", "p_S1", "n"]
    assert parsed[1] == ["a|b", "type_mismatch", "100.0% [100.0, 100.0]", "10"]
    assert parsed[2] == ["model", "(no injected episodes)", "", ""]
    assert parsed[3] == ["two lines", "", "-", "0"]


def test_a_metric_by_run_table_shows_each_row_in_its_own_kind() -> None:
    table = Table("m", [text("metric"), Column("a", Kind.ROW), Column("b", Kind.ROW)])
    table.add(
        "asr", Estimate(0.5, 0.4, 0.6, 10), Estimate(0.0, 0.0, 0.0, 10, 0.26), row=rate("asr", show_n=True)
    )
    table.add("harm", Estimate(1.5, 1.0, 2.0, 10), Estimate(0.0, 0.0, 0.0, 10), row=number("harm"))
    assert table.formatted() == [
        ["asr", "50.0% [40.0, 60.0] (n=10)", "0.0% (<= 26.0%) (n=10)"],
        ["harm", "1.50 [1.00, 2.00]", "0.00 [0.00, 0.00]"],
    ]


def test_the_terminal_shows_the_markdown_text() -> None:
    from rich.console import Console

    table = Table("t", [text("run"), rate("goal")])
    table.add("gold", Estimate(0.44166, 0.35, 0.53333, 120))
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(table.rich())
    assert "44.2% [35.0, 53.3]" in console.export_text()
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(table.rich(stacked=True))  # the interval on its own line, the same text
    lines = console.export_text().splitlines()
    assert any("44.2%" in line and "[" not in line for line in lines)
    assert any("[35.0, 53.3]" in line for line in lines)


def test_csv_holds_raw_values() -> None:
    table = Table("t", [text("run"), rate("goal"), count("n")])
    table.add("gold", Estimate(0.44166, 0.35, 0.53333, 120), 120)
    table.add("empty", None, None)
    rows = list(csv.DictReader(io.StringIO(table.csv())))
    assert list(rows[0]) == ["run", "goal", "goal_ci_low", "goal_ci_high", "goal_n", "n"]
    assert float(rows[0]["goal"]) == 0.44166 and rows[0]["goal_n"] == "120"
    assert rows[1] == {
        "run": "empty",
        "goal": "nan",
        "goal_ci_low": "",
        "goal_ci_high": "",
        "goal_n": "",
        "n": "",
    }


#: the one module that writes Markdown table rows
TABLE_MODULE = ROOT / "wrappers" / "eval" / "table.py"
#: the reports and the scripts that write the README's and the docs' tables
REPORT_CODE = sorted(
    [
        *(ROOT / "wrappers" / "eval").rglob("*.py"),
        *(ROOT / "scripts" / "benchmarks").glob("*/baselines.py"),
        *(
            ROOT / "scripts" / name
            for name in (
                "readme_tables.py",
                "multiagent_baselines.py",
                "learning_curve.py",
                "reproduce_agentprop.py",
            )
        ),
    ]
)


def _pipe_rows(path: Path) -> list[tuple[int, str]]:
    """String literals (docstrings aside) that build a Markdown row or rule by hand: one that starts or
    ends a row (``"| "``, ``" |"``), the cell separator alone (``" | "``), a rule (``"|---"``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            value = node.value
            if value.startswith("|") or value.rstrip().endswith("|") or value == " | " or "|---" in value:
                found.append((node.lineno, value))
    return found


def test_no_report_code_joins_table_rows_by_hand() -> None:
    """Every report and README table goes through :class:`Table` (one renderer, rows checked)."""
    offenders = {
        str(path.relative_to(ROOT)): rows
        for path in REPORT_CODE
        if path != TABLE_MODULE and (rows := _pipe_rows(path))
    }
    assert not offenders


def test_the_scan_sees_a_hand_joined_row(tmp_path: Path) -> None:
    """The scan above itself: it finds a row joined by hand and leaves docstrings alone."""
    source = tmp_path / "x.py"
    source.write_text('"""Doc | with a pipe."""\nrow = "| " + " | ".join(cells) + " |"\n')
    assert [line for line, _ in _pipe_rows(source)] == [2, 2, 2]
    source.write_text('why = "p(S3 | S2)"\nrow = f"| {a} | {b} |"\n')
    assert [line for line, _ in _pipe_rows(source)] == [2, 2, 2]
