"""Every hostile action costs a bounded step (issue 24): an unknown id among tens of thousands of records,
thousands of unknown argument names, an array of ten thousand items, an object of thousands of keys.
Costs are compared as ratios of medians on the same machine, never against a wall-clock bound (the test
machines are shared); ``scripts/bench_hostile.py`` prints the same ratios."""

from __future__ import annotations

import difflib
import json
import random
import statistics
import time
from typing import Annotated, Any

import pytest
from pydantic import Field

from tooltrap.envs.core import Backend, ErrorKind, ToolCallError, Toolset, did_you_mean, tool
from tooltrap.envs.core.errors import FULL_SCAN_OPTIONS, close_matches
from tooltrap.envs.core.tools import MAX_ITEMS, MAX_KEYS, MAX_PROBLEMS
from tooltrap.envs.sabench import make_env, packaged_tasks

CASCADE = "cal-cascade-dependent-cancel-occurrence-01"


# -- did-you-mean ------------------------------------------------------------------------------------
def test_small_collections_get_difflibs_suggestions_exactly():
    ids = ["evt_1", "evt_2", "evt_12", "ser_growth_weekly_1", "ser_growth_weekly_5"]
    assert did_you_mean("evt_13", ids) == " Did you mean 'evt_1' or 'evt_12' or 'evt_2'?"
    assert did_you_mean("ser_growth_weekly_1x", ids) == (
        " Did you mean 'ser_growth_weekly_1' or 'ser_growth_weekly_5'?"
    )
    assert did_you_mean("SABENCH-v0", ["SABench-v0", "EpiSEM-v0"], ignore_case=True) == (
        " Did you mean 'SABench-v0'?"
    )
    assert did_you_mean("zzz", ids) == ""


def test_up_to_the_full_scan_size_suggestions_equal_difflibs():
    """Property: on every collection of at most FULL_SCAN_OPTIONS options, the bounded search returns what
    ``difflib.get_close_matches`` over all of them returns (with and without case)."""
    rng = random.Random(24)
    for _ in range(2000):
        options = ["".join(rng.choices("abAB_12", k=rng.randint(1, 8))) for _ in range(rng.randint(0, 64))]
        word = "".join(rng.choices("abAB_12", k=rng.randint(0, 20)))
        assert close_matches(word, options) == difflib.get_close_matches(word, options)
        lowered = {o.lower(): o for o in options}
        expected = [lowered[m] for m in difflib.get_close_matches(word.lower(), list(lowered))]
        assert close_matches(word, options, ignore_case=True) == expected


def _ids(n: int) -> dict[str, dict[str, Any]]:
    """``n`` ids that look like a real system's (scattered digits: a one-character slip lands on no other)."""
    return {f"INV-{i * 2654435761 % 2**32:010d}": {} for i in range(n)}


@pytest.mark.parametrize("n", [FULL_SCAN_OPTIONS + 1, 4_000, 100_000])
def test_a_mistyped_id_among_many_is_found(n):
    ids = _ids(n)
    target = list(ids)[-7]  # far past the first options compared in full
    slips = {
        "substituted": target[:-1] + ("x" if target[-1] != "x" else "y"),
        "dropped": target[:5] + target[6:],
        "doubled": target[:8] + target[7:],
        "swapped": target[:6] + target[7] + target[6] + target[8:],
        "appended": target + "-copy",
    }
    for slip, typo in slips.items():
        assert close_matches(typo, ids)[0] == target, slip
    assert close_matches(target.lower(), ids, ignore_case=True)[0] == target


def test_suggestions_do_not_depend_on_a_sets_iteration_order():
    words = [f"w{i * 7919 % 1000:03d}" for i in range(1000)]
    one, other = set(words), set(reversed(words))
    for word in ("w5", "w0x", "w999", "q12"):
        assert did_you_mean(word, one) == did_you_mean(word, other) == did_you_mean(word, sorted(words))


def test_a_huge_word_is_refused_without_comparing_it():
    assert close_matches("x" * 30_000, [f"id_{i}" for i in range(50)]) == []
    assert close_matches("x" * 30_000, {f"id_{i}": 1 for i in range(50_000)}) == []


# -- argument validation -----------------------------------------------------------------------------
class _Hostile(Backend):
    domain = "hostile"

    @tool("write")
    def tag(self, item_id: str, tags: list[str], labels: Annotated[list[str], Field(max_length=500)]) -> dict:
        """Tag an item.

        Args:
            item_id: The item.
            tags: Tags, no bound declared (the engine's applies).
            labels: Labels, a declared bound above the engine's.
        """
        return {"ok": True}

    @tool("read")
    def lookup(self, query: dict[str, Any] | None = None, notes: Any = None) -> dict:
        """Look something up.

        Args:
            query: Field filters.
            notes: Anything.
        """
        return {}


def _refusal(name: str, arguments: dict[str, Any]) -> str:
    with pytest.raises(ToolCallError) as err:
        Toolset([_Hostile])[name].validate(arguments)
    assert err.value.kind == ErrorKind.INVALID_ARGUMENTS
    return err.value.message


def test_validation_stops_at_the_first_hundred_problems_and_says_so():
    message = _refusal("tag", {"item_id": "a", "tags": [], "labels": [], **{f"k{i}": 0 for i in range(2000)}})
    assert f"validation stopped at the first {MAX_PROBLEMS} problems" in message
    assert "k0: unexpected argument" in message and "k5:" not in message  # five named, not 2,000
    few = _refusal("tag", {"item_id": 1, "tagz": [], "labels": []})
    assert "item_id: Input should be a valid string" in few and "Did you mean 'tags'" in few
    assert "tags: Field required" in few and "stopped" not in few
    many = _refusal("tag", {"item_id": "a", "tags": [0] * 12, "labels": []})
    assert many.endswith("; and 7 more.")  # every problem counted, five named


def test_arrays_and_objects_are_bounded_where_the_schema_declares_nothing():
    assert f"tags: 10000 items; at most {MAX_ITEMS} are accepted." in _refusal(
        "tag", {"item_id": "a", "tags": [0] * 10_000, "labels": []}
    )
    Toolset([_Hostile])["tag"].validate({"item_id": "a", "tags": ["t"] * MAX_ITEMS, "labels": ["l"] * 500})
    assert "labels: 501 items; at most 500" in _refusal(
        "tag", {"item_id": "a", "tags": [], "labels": ["l"] * 501}
    )
    assert f"query: an object of 3000 keys; at most {MAX_KEYS}" in _refusal(
        "lookup", {"query": {str(i): i for i in range(3000)}}
    )
    deep: Any = [0] * 200
    for _ in range(800):  # nested 800 deep, the innermost over-long: found without recursion
        deep = [deep]
    assert "notes" + ".0" * 800 + ": 200 items" in _refusal("lookup", {"notes": deep})
    # an over-long required array is reported once: not also as missing, nor item by item
    only = _refusal("tag", {"item_id": "a", "tags": [0] * 10_000, "labels": [], "x": 1})
    assert "Field required" not in only and "tags.0" not in only and "x: unexpected argument" in only


# -- the unknown-id step scales flat -----------------------------------------------------------------
def _calendar_with(tmp_path, n: int):
    raw = json.loads(packaged_tasks("calendar").get(CASCADE).model_dump_json())
    events = raw["initial_state"]["collections"]["events"]
    first = next(iter(events.values()))
    for i in range(n - len(events)):
        events[f"bulk_{i}"] = {**first, "id": f"bulk_{i}", "series_id": None}
    path = tmp_path / f"calendar_{n}.json"
    path.write_text(json.dumps([raw]))
    env = make_env("calendar", tasks_file=path, state_format="tools_only")
    env.reset(options={"task_id": CASCADE})
    assert len(env.state.collection("events")) == n
    return env


def _unknown_id_step_ms(env, repeat: int = 25) -> float:
    times = []
    for i in range(repeat):
        if i % 4 == 0:  # (five failed steps in a row would end the episode)
            env.reset(options={"task_id": CASCADE})
        action = json.dumps({"name": "calendar_get_event", "arguments": {"event_id": f"bulk_{i % 30}x"}})
        start = time.thread_time()  # CPU time: a shared machine's other processes do not count
        observation, *_ = env.step(action)
        times.append(time.thread_time() - start)
        assert "Did you mean 'bulk_" in json.loads(observation)["error"]["message"]
    return statistics.median(times)


def test_an_unknown_id_costs_the_same_among_40_4000_and_40000_records(tmp_path):
    """Before: 0.26 ms at 40 records, 29 ms at 4,000, 268 ms at 40,000 (difflib against every id: 1,000x).
    Now flat: the median CPU time of the step at 4,000 and 40,000 records is asserted within 10x the one
    at 40 (measured 2-3x: past 64 records the search adds the one-edit look-ups, then stays the same)."""
    medians = {n: _unknown_id_step_ms(_calendar_with(tmp_path, n)) for n in (40, 4_000, 40_000)}
    assert medians[4_000] < 10 * medians[40], medians
    assert medians[40_000] < 10 * medians[40], medians
