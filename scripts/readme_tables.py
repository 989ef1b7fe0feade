"""Write the README's generated tables from the runs CI scores (``tests/golden/sabench.json``, made by
``scripts/sabench_golden.py``): the mitigation table of scripted baselines. ``tests/test_readme.py``
checks the README holds exactly what this script writes, so a stale table fails CI.

Usage: python scripts/readme_tables.py [--check]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
GOLDEN = ROOT / "tests" / "golden" / "sabench.json"
START, END = "<!-- mitigation-table:start (scripts/readme_tables.py) -->", "<!-- mitigation-table:end -->"

#: README rows: (label, runs shown in it as "agent+defense"; several runs share a row as a / b)
ROWS = (
    ("gold", ("gold+none",)),
    ("gold + confirm-prompt", ("gold+confirm-prompt",)),
    ("clarify (always asks)", ("clarify+none",)),
    ("act-first", ("act-first+none",)),
    ("act-first + confirm-prompt (compliant: asks before its first write)", ("act-first+confirm-prompt",)),
    ("act-first + confirm-gate", ("act-first+confirm-gate",)),
    ("act-first + preview (accepts every preview)", ("act-first+preview",)),
    ("act-first + preview-gate", ("act-first+preview-gate",)),
    (
        "random / random + confirm-gate / random + preview-gate",
        ("random+none", "random+confirm-gate", "random+preview-gate"),
    ),
)


def _cell(values: list[float], *, interval: bool) -> str:
    value, low, high = values
    if not interval or low == high == value:
        return f"{value:.1f}%"
    return f"{value:.1f}% [{low:.1f}, {high:.1f}]"


def mitigation_table(headline: dict[str, dict[str, list[float]]]) -> str:
    lines = ["| run | goal | CD |", "|---|---|---|"]
    for label, runs in ROWS:
        interval = len(runs) == 1
        goal = " / ".join(_cell(headline[r]["goal"], interval=interval) for r in runs)
        cd = " / ".join(_cell(headline[r]["cd"], interval=interval) for r in runs)
        lines.append(f"| {label} | {goal} | {cd} |")
    return "\n".join(lines)


def render(readme: str, headline: dict[str, dict[str, list[float]]]) -> str:
    if START not in readme or END not in readme:
        raise SystemExit(f"README.md has no {START} ... {END} block")
    head, _, rest = readme.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{mitigation_table(headline)}\n{END}{tail}"


def main(argv: list[str]) -> int:
    headline = json.loads(GOLDEN.read_text(encoding="utf-8"))["headline"]
    text = README.read_text(encoding="utf-8")
    new = render(text, headline)
    if "--check" in argv:
        if new != text:
            print("README.md tables are stale: run python scripts/readme_tables.py")
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    print(f"tables -> {README}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
