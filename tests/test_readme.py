"""Numbers in the README come from scripts CI runs: the mitigation table is what scripts/readme_tables.py
writes from the runs scripts/baselines.py sabench scores (tests/golden/sabench.json)."""

from __future__ import annotations

import json

from scripts._docs import Documents
from scripts.readme_tables import GOLDEN, ROWS, mitigation_table, render


def test_the_generated_tables_of_the_readme_and_the_docs_are_what_the_script_writes():
    headline = json.loads(GOLDEN.read_text(encoding="utf-8"))["headline"]
    docs = render(Documents.load(), headline)
    assert not docs.changed(), "run: python scripts/readme_tables.py"


def test_every_scored_run_is_in_the_table():
    headline = json.loads(GOLDEN.read_text(encoding="utf-8"))["headline"]
    assert {run for _, runs in ROWS for run in runs} == set(headline)
    assert mitigation_table(headline).count("\n") == len(ROWS) + 1


def test_corpus_counts_in_the_readme_are_the_packaged_ones():
    from collections import Counter

    from tooltrap.envs.episem.benchmark import manifest
    from tooltrap.envs.sentry import packaged_scenarios

    text = "\n".join(Documents.load().texts.values())  # the README and the docs pages
    roles = manifest()["atoms_by_role"]
    assert f"{roles['critical']} critical and {roles['irrelevant']} irrelevant atoms" in text
    families = Counter(s.family for s in packaged_scenarios())
    stated = {
        "urgent": "urgent genuine emergencies (40",
        "ambiguous": "ambiguous cases (40",
        "suppression": "suppression attacks (35",
        "trigger": "trigger attacks (30",
        "privilege": "privilege escalation (25",
        "drift": "multi-turn goal drift (30)",
    }
    for family, phrase in stated.items():
        assert phrase in text and str(families[family]) in phrase, family
