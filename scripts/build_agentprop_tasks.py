"""Generate the AgentProp-Bench tasks (seed 0) into the package: ``envs/agentprop/data/tasks.json``.

Usage: python scripts/build_agentprop_tasks.py [--check]   (--check: fail when the packaged file is stale)
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from tooltrap.envs.agentprop.tasks import generate, render_tasks

TARGET = Path(__file__).resolve().parent.parent / "envs" / "agentprop" / "data" / "tasks.json"


def main(argv: list[str]) -> int:
    tasks = generate(seed=0)
    text = render_tasks(tasks)
    counts = Counter(t.domain for t in tasks)
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text:
            print(f"stale: {TARGET} (run python scripts/build_agentprop_tasks.py)", file=sys.stderr)
            return 1
        print(f"{len(tasks)} tasks: packaged file is current")
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"{len(tasks)} tasks ({dict(counts)}) -> {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
