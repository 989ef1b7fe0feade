"""The docs name what the code has: every scripted agent in docs/training.md."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_training_docs_name_every_scripted_agent():
    from tooltrap.agents import GENERIC_AGENTS, baseline_names
    from tooltrap.envs.core import BASELINES
    from tooltrap.envs.packages import PACKAGES

    baseline_names()  # every shipped benchmark's baselines registered
    table = (ROOT / "docs" / "training.md").read_text().split("## Agents", 1)[1].split("\n\n", 1)[0]
    # the shipped benchmarks' (a test's toy benchmark registers its own baselines too)
    shipped = (agents for benchmark, agents in BASELINES.items() if benchmark in PACKAGES)
    names = {*GENERIC_AGENTS, *(name for agents in shipped for name in agents)}
    missing = sorted(n for n in names if f"`{n}`" not in table)
    assert not missing, f"docs/training.md's agents table lacks {missing}"
