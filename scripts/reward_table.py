"""Write docs/rewards.md: the shared reward-component vocabulary and which benchmark reports which.

Usage: python scripts/reward_table.py
"""

from __future__ import annotations

from pathlib import Path

import tooltrap.envs.agentprop.benchmark  # noqa: F401  (defines the packaged benchmarks)
import tooltrap.envs.episem  # noqa: F401
import tooltrap.envs.sabench  # noqa: F401
import tooltrap.envs.sentry  # noqa: F401
from tooltrap.envs.core.reward import vocabulary_table

DOC = Path(__file__).resolve().parent.parent / "docs" / "rewards.md"

if __name__ == "__main__":
    DOC.write_text(vocabulary_table(), encoding="utf-8")
    print(f"wrote {DOC}")
