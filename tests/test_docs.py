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


def test_every_relative_link_of_the_readme_and_the_docs_resolves():
    import re

    broken = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            if not (doc.parent / target.split("#", 1)[0]).exists():
                broken.append(f"{doc.relative_to(ROOT)} -> {target}")
    assert not broken, broken
