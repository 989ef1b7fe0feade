"""Build a benchmark's packaged corpus from its authoring sources (`--check`: fail when stale).

Usage: python scripts/build.py BENCHMARK [ARGS ...]   (see scripts/_verbs.py; `--help` lists the benchmarks)
"""

from __future__ import annotations

import sys

from _verbs import run

if __name__ == "__main__":
    raise SystemExit(run("build", sys.argv[1:], __doc__))
