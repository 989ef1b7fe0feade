"""Generate the AgentProp-Bench tasks (seed 0) into the package: ``envs/agentprop/data/tasks.json``.

Usage: python scripts/build.py agentprop [--check]   (--check: fail when the packaged file is stale)
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

try:
    from _results import write_or_check
except ImportError:  # imported as scripts.build_agentprop_tasks (from the tests)
    from scripts._results import write_or_check

from tooltrap.envs.agentprop.authoring.generate import generate, render_tasks

TARGET = Path(__file__).resolve().parents[3] / "envs" / "agentprop" / "data" / "tasks.json"


def main(argv: list[str]) -> int:
    tasks = generate(seed=0)
    text = render_tasks(tasks)
    counts = Counter(t.domain for t in tasks)
    return write_or_check(TARGET, text, check="--check" in argv, script="build_agentprop_tasks.py",
                          what=f"{len(tasks)} tasks ({dict(counts)})")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
