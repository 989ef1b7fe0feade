"""``scripts/bench_server.py`` runs end to end, small: it starts a server, plays episodes at every
concurrency level, checks RSS over its sessions and prints its tables (times are not asserted: the
machine is shared)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_server.py"


def test_bench_server_runs_small():
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--sessions",
            "300",
            "--load-sessions",
            "16",
            "--concurrency",
            "1,8,64",
        ],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    table = [line.split() for line in lines if line.split() and line.split()[0] in ("1", "8", "64")]
    assert [row[0] for row in table] == ["1", "8", "64"]
    assert all(float(row[2]) > 0 and float(row[4]) > 0 for row in table)  # sessions/s, p50 ms
    assert sum("MiB" in line for line in lines) == 4  # start, middle, end, growth
    assert "growth after warm-up" in done.stdout
