"""Ctrl-C during ``tooltrap eval`` stops at once with one line saying how to resume, and leaves every
record written so far whole: the same command then finishes the run without a duplicate.

The evaluation runs in a child process whose agent, after a set number of episodes, blocks until it is
interrupted: the test sends SIGINT while the run is certainly in the middle, never on a timer."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

DRIVER = '''
import os, signal, sys, threading
# a shell that runs the tests in the background ignores SIGINT, and a child inherits that: Python then
# installs no KeyboardInterrupt handler. Ctrl-C at a terminal has one; so does this child.
signal.signal(signal.SIGINT, signal.default_int_handler)
import tooltrap.agents as agents
from tooltrap.agents.scripted import ActFirstAgent
from tooltrap.cli import main

BLOCK_AFTER = int(os.environ.get("BLOCK_AFTER", "0"))  # 0: never block (the resumed run)
started = 0
lock = threading.Lock()


class Gated(ActFirstAgent):
    """act-first, except that every episode after the first BLOCK_AFTER waits for ever."""

    def clone(self):
        return Gated()

    def reset(self, observation, info, *, task=None, seed=None):
        global started
        with lock:
            started += 1
            self.blocked = bool(BLOCK_AFTER) and started > BLOCK_AFTER
        super().reset(observation, info, task=task, seed=seed)

    def act(self, observation, info):
        if self.blocked:
            # until SIGINT ends the process; waking every 50 ms, because the kernel may hand the
            # signal to another thread, and only a main thread that runs bytecode sees Python's flag
            while True:
                threading.Event().wait(0.05)
        return super().act(observation, info)


agents.GENERIC_AGENTS["gated"] = Gated
sys.exit(main(sys.argv[1:]))
'''


def _lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


@pytest.mark.parametrize("concurrency", ["1", "3"])
def test_ctrl_c_stops_cleanly_and_the_same_command_resumes(tmp_path, concurrency):
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    out = tmp_path / "run"
    command = [sys.executable, str(driver), "eval", "SABench-Calendar-v0", "--agent", "gated"]
    command += ["--out", str(out), "--quiet", "--resamples", "50", "--concurrency", concurrency]
    episodes = out / "episodes.jsonl"
    child = subprocess.Popen(
        command, env={**_env(), "BLOCK_AFTER": "5"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    while len(_lines(episodes)) < 5:  # five episodes written; every later one waits in act()
        assert child.poll() is None, child.stderr.read().decode()
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    try:  # a hang guard, not a speed check: the child answers SIGINT in well under a second
        _, err = child.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        child.kill()
        raise
    assert child.returncode == 130
    assert err.decode() == "interrupted: resume with the same command\n"  # one line, no traceback
    written = [json.loads(line) for line in _lines(episodes)]  # every line whole
    assert len(written) == 5 and not list(out.glob("*.tmp")) and not list(out.glob(".*.tmp"))

    resumed = subprocess.run(command, env=_env(), capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming: 5 of 68 episodes done, 63 to run" in resumed.stderr
    ids = [json.loads(line)["task_id"] for line in _lines(episodes)]
    assert len(ids) == len(set(ids)) == 68 and ids[:5] == [r["task_id"] for r in written]


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "BLOCK_AFTER"}
