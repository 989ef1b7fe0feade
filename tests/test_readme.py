"""Numbers in the README come from scripts CI runs: the mitigation table is what scripts/readme_tables.py
writes from the runs scripts/sabench_golden.py scores (tests/golden/sabench.json)."""

from __future__ import annotations

import json

from scripts.readme_tables import GOLDEN, README, ROWS, mitigation_table, render


def test_readme_tables_are_what_the_script_writes():
    headline = json.loads(GOLDEN.read_text(encoding="utf-8"))["headline"]
    text = README.read_text(encoding="utf-8")
    assert render(text, headline) == text, "run: python scripts/readme_tables.py"


def test_every_scored_run_is_in_the_table():
    headline = json.loads(GOLDEN.read_text(encoding="utf-8"))["headline"]
    assert {run for _, runs in ROWS for run in runs} == set(headline)
    assert mitigation_table(headline).count("\n") == len(ROWS) + 1
