"""Scripts that need data from outside the repository (the AgentProp release, the SentryBench public
datasets) say that it is missing and fail, unless ``--skip-missing`` says that is expected: a run that
checked nothing must not pass for one that did."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, cwd=SCRIPTS.parent)


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["reproduce_agentprop.py", "--check", "--release"], "--release"),
        (["false_alarms.py", "sentry", "--data"], "--data"),
    ],
)
def test_missing_data_fails_unless_told_to_skip(tmp_path, argv, flag):
    nowhere = str(tmp_path / "absent")
    failed = _run(str(SCRIPTS / argv[0]), *argv[1:], nowhere)
    assert failed.returncode == 1
    assert "error: no " in failed.stderr and nowhere in failed.stderr and "--skip-missing" in failed.stderr
    assert f"{flag} DIR" in failed.stderr  # how to point it at the data
    skipped = _run(str(SCRIPTS / argv[0]), *argv[1:], nowhere, "--skip-missing")
    assert skipped.returncode == 0 and "skipped (--skip-missing)" in skipped.stdout


def test_sentry_baselines_never_write_docs_without_the_datasets(tmp_path):
    nowhere = str(tmp_path / "absent")
    for mode in ("--check", "--write-docs"):
        done = _run(str(SCRIPTS / "baselines.py"), "sentry", "--data", nowhere, mode)
        assert done.returncode == 1 and "error: no public dataset files" in done.stderr, mode
    done = _run(str(SCRIPTS / "baselines.py"), "sentry", "--data", nowhere, "--write-docs", "--skip-missing")
    assert done.returncode == 1 and "--write-docs needs them" in done.stderr
