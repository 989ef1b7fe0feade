"""A sample of the fuzz run (scripts/fuzz.py; CI runs its 100,000 actions once): 10,000 mixed actions,
valid and hostile (every mutation kind hundreds of times), raise nothing, never change the state in a
step whose calls all failed and never leak. (Whether a hostile action stalls a step is a time, measured by
the script CI runs, not asserted here: the test machines are shared and noisy.)"""

from __future__ import annotations

from scripts.fuzz import MAX_RSS_GROWTH_MB, run_fuzz


def test_fuzzed_actions_raise_nothing_and_failed_calls_change_nothing():
    out = run_fuzz(10_000, workers=1, seed=7)
    assert out["exceptions"] == {}, out["exception_samples"]
    assert out["state_changes_after_failed_calls"] == 0
    assert out["rss_growth_mb"] < MAX_RSS_GROWTH_MB
