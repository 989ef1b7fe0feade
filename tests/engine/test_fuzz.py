"""The fuzz run (scripts/fuzz.py) on every benchmark: 20,000 mixed actions each, valid and hostile (every
mutation kind hundreds of times; a sample: CI runs the script once with 50,000 a benchmark and another
seed), every episode under the next setting (each defense that applies x
each variant value: EpiSEM's world x condition x mask, SentryBench's attack, AgentProp's five injection
settings, with the interceptor's operating points among the defenses), over every env id of the
benchmark. Nothing raises (in reset, step, a state hash or the record writer), no step whose calls all
failed changes the state, memory stays flat. How long a step takes is not asserted here (the test
machines are shared and noisy): the script measures it, in CPU time, and CI runs it."""

from __future__ import annotations

import pytest

import tooltrap
from scripts.fuzz import MAX_RSS_GROWTH_MB, run_fuzz

#: per benchmark; the settings are cycled per episode, so every one is played (AgentProp's 240 settings
#: dozens of times each)
ACTIONS = 20_000
#: not CI's seed (7): the test and the script's run play different actions
SEED = 11


@pytest.mark.parametrize("benchmark", ["sabench", "episem", "sentry", "agentprop"])
def test_fuzzed_actions_raise_nothing_and_failed_calls_change_nothing(benchmark):
    out = run_fuzz(ACTIONS, workers=2, seed=SEED, env_id=benchmark)
    assert out["exceptions"] == {}, "\n".join(out["exception_samples"].values())
    assert out["state_changes_after_failed_calls"] == 0
    assert out["settings_seen"] == out["settings"]  # every env id x defense x variant value was played
    assert out["rss_growth_mb"] < MAX_RSS_GROWTH_MB


def test_the_fuzz_plays_every_env_id_variant_axis_and_defense():
    from scripts.fuzz import env_ids, settings

    assert env_ids(["all"]) == list(tooltrap.ENV_IDS)  # every registered env id, once
    plan = settings(env_ids(["SentryBench-v0", "AgentProp-v0", "EpiSEM-v0"]))
    played = {(s.env_id, s.defense, v) for s in plan for v in s.variant}
    sentry = {(d, v) for e, d, v in played if e == "SentryBench-v0"}
    assert {("none", ("attack", "on")), ("caution", ("attack", "off")), ("tgcc", ("attack", "on"))} <= sentry
    agentprop = {(d, v) for e, d, v in played if e == "AgentProp-v0"}
    for point in ("interceptor", "interceptor-output-only", "interceptor-tuned", "interceptor-packaged"):
        for injection in ("none", "type_mismatch", "out_of_range", "missing_required", "semantic_wrong"):
            assert (point, ("injection", injection)) in agentprop
    episem = {v for e, _, v in played if e == "EpiSEM-v0"}
    assert {("world", "safe"), ("condition", "recoverable"), ("mask", "random"), ("mask", ())} <= episem
    assert "confirm-gate" in {s.defense for s in settings(["SABench-Email-v0"])}


def test_a_garbage_collection_inside_a_step_is_timed_apart_from_it():
    """The fuzz's step time leaves out the collector's pauses (they follow the heap, not the action) and
    reports the longest apart: the clock sees a collection that runs while it is registered."""
    import gc

    from scripts.fuzz import _GcClock

    clock = _GcClock()
    gc.callbacks.append(clock)
    try:
        heap = [[i] for i in range(200_000)]  # something for a full collection to walk
        before = clock.total
        gc.collect()
        assert clock.total > before and 0 < clock.longest <= clock.total
    finally:
        gc.callbacks.remove(clock)
    del heap
