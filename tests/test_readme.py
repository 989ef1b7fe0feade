"""Numbers in the README come from scripts CI runs: the mitigation table is checked against the runs
that scripts/sabench_golden.py scores (its headline goal / CD, tests/golden/sabench.json)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from scripts.sabench_golden import GOLDEN

README = Path(__file__).parent.parent / "README.md"


def _runs(label: str) -> list[str]:
    names = []
    for part in label.split(" / "):
        part = re.sub(r"\s*\(.*?\)", "", part).strip()
        agent, _, defense = part.partition(" + ")
        names.append(f"{agent}+{defense or 'none'}")
    return names


def _values(cell: str) -> list[list[float]]:
    out = []
    for part in cell.split(" / "):
        numbers = [float(x) for x in re.findall(r"-?\d+\.\d", part)]
        out.append(numbers)
    return out


def test_mitigation_table_matches_the_scored_runs():
    headline = json.loads(GOLDEN.read_text(encoding="utf-8"))["headline"]
    text = README.read_text(encoding="utf-8")
    table = text.split("| run | goal | CD |")[1].split("\n\n")[0]
    rows = [r for r in table.strip().splitlines()[1:] if r.startswith("|")]
    assert len(rows) >= 6
    checked = 0
    for row in rows:
        label, goal, cd = (c.strip() for c in row.strip("|").split("|"))
        for run, goal_values, cd_values in zip(_runs(label), _values(goal), _values(cd), strict=True):
            for metric, shown in (("goal", goal_values), ("cd", cd_values)):
                expected = headline[run][metric]
                assert shown == expected[: len(shown)], f"README {run} {metric}: {shown} != {expected}"
                checked += 1
    assert checked >= 14
