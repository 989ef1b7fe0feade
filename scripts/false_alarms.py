"""Run the detector over every public dataset copy a benchmark's loaders read: false alarms on clean
rows (and the rows that trip it), recall on injection rows (exit 1 when a clean emergency text trips it).

Usage: python scripts/false_alarms.py BENCHMARK [ARGS ...]   (see scripts/_verbs.py; `--help` lists the benchmarks)
"""

from __future__ import annotations

import sys

from _verbs import run

if __name__ == "__main__":
    raise SystemExit(run("false_alarms", sys.argv[1:], __doc__))
