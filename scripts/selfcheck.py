"""Self-check every task of a benchmark: gold is right, gaming probes score below it (exit 1 on a problem).

Usage: python scripts/selfcheck.py BENCHMARK [ARGS ...]   (see scripts/_verbs.py; `--help` lists the benchmarks)
"""

from __future__ import annotations

import sys

from _verbs import run

if __name__ == "__main__":
    raise SystemExit(run("selfcheck", sys.argv[1:], __doc__))
