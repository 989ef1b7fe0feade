"""The README's multi-agent table is what scripts/multiagent_baselines.py writes (CI: --check)."""

from __future__ import annotations

from scripts.multiagent_baselines import README, compute, main, render


def test_the_readme_table_is_what_the_script_writes():
    text = README.read_text(encoding="utf-8")
    assert render(text, compute()) == text, "run: python scripts/multiagent_baselines.py --write-docs"


def test_check_mode_passes(capsys):
    assert main(["--check", "--no-timing"]) == 0
    assert "gold" in capsys.readouterr().out
