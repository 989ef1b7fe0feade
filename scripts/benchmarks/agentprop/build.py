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

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

TARGET = Path(__file__).resolve().parents[3] / "envs" / "agentprop" / "data" / "tasks.json"


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--check", action="store_true", help="fail when the packaged tasks are stale")
    args = parser.parse_args(argv)
    tasks = generate(seed=0)
    text = render_tasks(tasks)
    counts = Counter(t.domain for t in tasks)
    return write_or_check(TARGET, text, check=args.check, script="build_agentprop_tasks.py",
                          what=f"{len(tasks)} tasks ({dict(counts)})")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
