"""Write docs/rewards.md: the shared reward-component vocabulary and which benchmark reports which.

Usage: python scripts/reward_table.py
"""

from __future__ import annotations

from pathlib import Path

from tooltrap.envs.core.reward import vocabulary_table
from tooltrap.envs.packages import load_benchmarks

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

DOC = Path(__file__).resolve().parent.parent / "docs" / "rewards.md"

if __name__ == "__main__":
    script_parser(__doc__).parse_args()
    load_benchmarks()
    DOC.write_text(vocabulary_table(), encoding="utf-8")
    print(f"wrote {DOC}")
