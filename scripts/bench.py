"""Time a benchmark's evaluation path, as ratios to a floor measured in the same run.

Usage: python scripts/bench.py BENCHMARK [ARGS ...]   (see scripts/_verbs.py; `--help` lists the benchmarks)
"""

from __future__ import annotations

import sys

from _verbs import run

if __name__ == "__main__":
    raise SystemExit(run("bench", sys.argv[1:], __doc__))
