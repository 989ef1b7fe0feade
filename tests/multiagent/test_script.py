"""The multi-agent tables of the docs are what scripts/multiagent_baselines.py writes (CI: --check)."""

from __future__ import annotations

from scripts._docs import Documents
from scripts.multiagent_baselines import compute, main, render


def test_the_docs_tables_are_what_the_script_writes():
    docs = render(Documents.load(), compute())
    assert not docs.changed(), "run: python scripts/multiagent_baselines.py --write-docs"


def test_check_mode_passes(capsys):
    assert main(["--check", "--no-timing"]) == 0
    assert "gold" in capsys.readouterr().out
