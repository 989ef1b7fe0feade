"""Write docs/rewards.md: the shared reward-component vocabulary and which benchmark reports which.

Usage: python scripts/reward_table.py
"""

from __future__ import annotations

from pathlib import Path

from tooltrap.envs.core.reward import vocabulary_table
from tooltrap.envs.packages import load_benchmarks

DOC = Path(__file__).resolve().parent.parent / "docs" / "rewards.md"

if __name__ == "__main__":
    load_benchmarks()
    DOC.write_text(vocabulary_table(), encoding="utf-8")
    print(f"wrote {DOC}")
