"""Run a benchmark's scripted baselines and write or check its docs tables (`--check`, `--write-docs`).

Usage: python scripts/baselines.py BENCHMARK [ARGS ...]   (see scripts/_verbs.py; `--help` lists the benchmarks)
"""

from __future__ import annotations

import sys

from _verbs import run

if __name__ == "__main__":
    raise SystemExit(run("baselines", sys.argv[1:], __doc__))
