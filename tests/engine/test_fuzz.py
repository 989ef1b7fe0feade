"""A CI-sized fuzz run (scripts/fuzz.py): 100,000 mixed actions, valid and hostile, raise nothing and
never change the state in a step whose calls all failed."""

from __future__ import annotations

from scripts.fuzz import run_fuzz


def test_100k_fuzzed_actions_raise_nothing_and_failed_calls_change_nothing():
    out = run_fuzz(100_000, workers=2, seed=7)
    assert out["exceptions"] == {}, out["exception_samples"]
    assert out["state_changes_after_failed_calls"] == 0
    assert out["slowest_step_s"] < 1.0 and out["rss_growth_mb"] < 200
