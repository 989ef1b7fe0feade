"""LLM judges over an evaluation's answers, with every judge failure counted and reported (exit 3 when
every judge call failed, as ``tooltrap eval`` for a dead model server).

Usage: python scripts/judge.py BENCHMARK RUN_DIR [ARGS ...]   (see scripts/_verbs.py; `--help` lists the benchmarks)
"""

from __future__ import annotations

import sys

from _verbs import run

if __name__ == "__main__":
    raise SystemExit(run("judge", sys.argv[1:], __doc__))
