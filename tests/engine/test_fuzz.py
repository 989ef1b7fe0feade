"""The fuzz run (scripts/fuzz.py) on every benchmark: 100,000 mixed actions each, valid and hostile (every
mutation kind thousands of times), every episode under the next setting (each defense that applies x
each variant value: EpiSEM's world x condition x mask, SentryBench's attack, AgentProp's five injection
settings, with the interceptor's operating points among the defenses), over every env id of the
benchmark. Nothing raises (in reset, step, a state hash or the record writer), no step whose calls all
failed changes the state, memory stays flat. How long a step takes is not asserted here (the test
machines are shared and noisy): the script measures it, in CPU time, and CI runs it."""

from __future__ import annotations

import pytest

from scripts.fuzz import MAX_RSS_GROWTH_MB, run_fuzz

#: per benchmark; the settings are cycled per episode, so every one is played hundreds of times
ACTIONS = 100_000


@pytest.mark.parametrize("benchmark", ["sabench", "episem", "sentry", "agentprop"])
def test_fuzzed_actions_raise_nothing_and_failed_calls_change_nothing(benchmark):
    out = run_fuzz(ACTIONS, workers=2, seed=7, env_id=benchmark)
    assert out["exceptions"] == {}, "\n".join(out["exception_samples"].values())
    assert out["state_changes_after_failed_calls"] == 0
    assert out["settings_seen"] == out["settings"]  # every env id x defense x variant value was played
    assert out["rss_growth_mb"] < MAX_RSS_GROWTH_MB
