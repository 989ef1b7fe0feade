from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tooltrap.agents import make_agent
from tooltrap.cli import main
from tooltrap.evaluate import RunMismatchError, evaluate, read_episodes

METRICS = {
    "goal",
    "cd",
    "goal_and_cd",
    "fail_and_cd",
    "ab_violation",
    "external_cd",
    "unnecessary_clarification",
}


def test_eval_writes_episodes_and_summary(tmp_path, capsys):
    out = tmp_path / "run"
    assert (
        main(
            [
                "eval",
                "SABench-Calendar-v0",
                "--agent",
                "act-first",
                "--out",
                str(out),
                "--quiet",
                "--resamples",
                "500",
            ]
        )
        == 0
    )
    episodes = read_episodes(out / "episodes.jsonl")
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary) >= METRICS
    assert summary.pop("system_outcomes") == {"n": 0, "by_kind": {}}
    assert all(set(v) == {"value", "ci_low", "ci_high", "n"} for v in summary.values())
    first = episodes[0]
    assert {
        "task_id",
        "template_id",
        "trap_family",
        "state_structure",
        "verdict",
        "reward",
        "reward_components",
        "trace",
    } <= set(first)
    assert "cd" in capsys.readouterr().out


class Crash(Exception):
    pass


def test_resume_after_interruption(tmp_path):
    out = tmp_path / "run"
    agent = make_agent("gold")
    seen = []

    def crash_after_three(record):
        seen.append(record["task_id"])
        if len(seen) == 3:
            raise Crash

    with pytest.raises(Crash):
        evaluate("SABench-Calendar-v0", agent, out, on_episode=crash_after_three)
    assert len(read_episodes(out / "episodes.jsonl")) == 3
    with (out / "episodes.jsonl").open("a") as fh:  # a torn write from a crash mid-line
        fh.write('{"task_id": "half')
    records = evaluate("SABench-Calendar-v0", agent, out)
    ids = [r["task_id"] for r in read_episodes(out / "episodes.jsonl")]
    assert len(ids) == len(set(ids)) == len(records)
    assert ids[:3] == seen


def test_mismatched_rerun_is_refused(tmp_path):
    evaluate("SABench-Calendar-v0", make_agent("gold"), tmp_path, tasks="cal-cascade-*")
    with pytest.raises(RunMismatchError):
        evaluate("SABench-Calendar-v0", make_agent("clarify"), tmp_path)
    assert main(["eval", "SABench-Calendar-v0", "--agent", "clarify", "--out", str(tmp_path), "--quiet"]) == 2


def test_task_filters(tmp_path):
    records = evaluate("SABench-Calendar-v0", make_agent("clarify"), tmp_path, tasks="trap_family=ambiguity")
    assert records and all(r["trap_family"] == "ambiguity" for r in records)


def test_cli_entry_point_and_unknown_agent(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "tooltrap", "list"], capture_output=True, text=True, check=True
    )
    assert "SABench-Calendar-v0" in out.stdout
    for name in ("confirm-prompt", "confirm-gate", "preview", "preview-gate"):  # defenses, described
        line = next(x for x in out.stdout.splitlines() if x.strip().startswith(name + " "))
        assert len(line.split(name, 1)[1].strip()) > 20
    with pytest.raises(Exception, match="Did you mean 'gold'"):
        make_agent("gld")


def test_concurrent_evaluation_streams_and_resumes(tmp_path):
    out = tmp_path / "run"
    seen = []

    def crash_after_five(record):
        seen.append(record["task_id"])
        if len(seen) == 5:
            raise Crash

    with pytest.raises(Crash):
        evaluate(
            "SABench-Calendar-v0", make_agent("act-first"), out, concurrency=4, on_episode=crash_after_five
        )
    partial = read_episodes(out / "episodes.jsonl")
    assert 5 <= len(partial) < 68  # the other workers stopped after their current episode
    records = evaluate("SABench-Calendar-v0", make_agent("act-first"), out, concurrency=4)
    ids = [r["task_id"] for r in read_episodes(out / "episodes.jsonl")]
    assert len(ids) == len(set(ids)) == len(records) == 68
    sequential = {
        r["task_id"]: r["verdict"]
        for r in evaluate("SABench-Calendar-v0", make_agent("act-first"), tmp_path / "seq")
    }
    assert all(r["verdict"] == sequential[r["task_id"]] for r in records)  # same results in any order
