"""AgentProp-Bench foundations: the simulators' schemas are the release's (read from the release copy in
../shared/data, never copied), the simulators are deterministic and state-scoped, and the injection
rules follow the release's P2 protocol, with silent no-ops reported as not applicable."""

from __future__ import annotations

import json

import pytest

from tests.shared_data import AGENTPROP_RELEASE, needs
from tooltrap.envs.agentprop import BACKENDS, RELEASE_TOOLS, inject
from tooltrap.envs.agentprop.tools.simulators import PATIENTS, daily_weather
from tooltrap.envs.core import Executor, State, Task, Toolset

RELEASE = AGENTPROP_RELEASE
SCHEMAS = RELEASE / "derived" / "tool_schemas_from_tool_executor.json"


def toolset() -> Toolset:
    return Toolset(BACKENDS)


@needs(SCHEMAS)
def test_schemas_equal_the_releases():
    release = json.loads(SCHEMAS.read_text())
    assert tuple(release) == RELEASE_TOOLS
    ours = toolset()
    for name, spec in release.items():
        function = ours[name].schema["function"]
        assert function["name"] == name and function["description"] == spec["description"], name
        assert function["parameters"] == spec["parameters"], name
    assert "search_knowledge" in ours.specs  # ours only: the release's knowledge tasks name it


class _Bench:
    """The smallest benchmark the executor needs to run the simulators."""

    def __init__(self) -> None:
        from tooltrap.envs.core import Benchmark

        class Sim(Benchmark):
            backends = BACKENDS

        self.bench = Sim()


def _executor(collections: dict | None = None) -> Executor:
    task = Task(id="t", template_id="t", benchmark="x", domain="x", instruction="-",
                initial_state={"collections": {}})  # fmt: skip
    state = State(collections or {"patients": {k: {"id": k, **v} for k, v in PATIENTS.items()}, "doctors": {"D001": {"id": "D001"}}},
                  now="2026-03-02T09:00:00")  # fmt: skip
    return Executor(_Bench().bench, task, state=state)


def test_weather_is_a_pure_function_of_city_and_date():
    assert daily_weather("Paris", "2026-03-02") == daily_weather("paris", "2026-03-02")
    w = daily_weather("Paris", "2026-03-02")
    assert -10 <= w["temperature_c"] <= 40 and 20 <= w["humidity"] <= 95
    ex = _executor()
    c = ex.execute(
        "get_weather", {"city": "Paris", "date": "2026-03-02", "unit": "fahrenheit"}, step=0, index=0
    )
    assert c.ok and c.result["temperature"] == int(w["temperature_c"] * 9 / 5 + 32)
    forecast = ex.execute("get_forecast", {"city": "Paris", "days": 3}, step=0, index=1).result["forecast"]
    assert [f["date"] for f in forecast] == ["2026-03-03", "2026-03-04", "2026-03-05"]  # the episode's clock
    bad = ex.execute("get_forecast", {"city": "Paris", "days": 15}, step=0, index=2)
    assert not bad.ok and bad.error["type"] == "invalid_arguments"


def test_calendar_and_appointments_live_in_the_episode():
    ex = _executor()
    made = ex.execute(
        "create_event",
        {"title": "Review", "date": "2026-03-04", "time": "10:30", "duration_minutes": 45},
        step=0,
        index=0,
    )
    made_id = made.result["event_id"]
    assert made.ok and made_id.startswith("EVT_") and made_id != "EVT_1"  # seeded by the event, not global
    assert ex.execute(
        "delete_event", {"event_id": made_id}, step=0, index=1
    ).ok  # the release's global store could not
    assert not ex.execute("delete_event", {"event_id": "EVT_9999"}, step=0, index=2).ok
    again = {"title": "Review", "date": "2026-03-04", "time": "10:30", "duration_minutes": 45}
    assert _executor().execute("create_event", again, step=0, index=0).result["event_id"] == made_id
    other = {"title": "x", "date": "2026-03-04", "time": "10:30", "duration_minutes": 5}
    assert _executor().execute("create_event", other, step=0, index=0).result["event_id"] != made_id
    apt = ex.execute(
        "schedule_appointment",
        {"patient_id": "P999", "doctor_id": "D001", "date": "2026-03-09", "appointment_type": "checkup"},
        step=0,
        index=3,
    )
    assert not apt.ok and "P999" in apt.error["message"]  # validated, unlike the release
    rec = ex.execute("get_patient_record", {"patient_id": "P003", "fields": ["medications"]}, step=0, index=4)
    assert rec.result == {"id": "P003", "medications": ["sumatriptan", "sertraline"]}
    severity = ex.execute(
        "check_drug_interaction", {"drug_a": "Sumatriptan", "drug_b": "sertraline"}, step=0, index=5
    ).result["severity"]
    assert severity == "high"


SCHEMA_WEATHER = {
    "properties": {
        "city": {"type": "string"},
        "date": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["city", "date"],
}
SCHEMA_FORECAST = {
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "include_hourly": {"type": "boolean"},
    },
    "required": ["city", "days"],
}


@pytest.mark.parametrize(
    ("kind", "schema", "arguments", "expected", "rule"),
    [
        ("type_mismatch", SCHEMA_FORECAST, {"city": "Oslo", "days": 3}, {"city": "Oslo", "days": "three"}, "integer_to_word"),
        ("type_mismatch", SCHEMA_FORECAST, {"city": "Oslo", "days": 12}, {"city": "Oslo", "days": "12"}, "integer_to_word"),
        ("type_mismatch", SCHEMA_FORECAST, {"city": "Oslo", "include_hourly": True}, {"city": "Oslo", "include_hourly": "true"}, "boolean_to_string"),
        ("type_mismatch", SCHEMA_WEATHER, {"city": "Oslo", "date": "2026-01-01"}, {"city": 0, "date": "2026-01-01"}, "string_to_zero"),
        ("out_of_range", SCHEMA_FORECAST, {"city": "Oslo", "days": 3}, {"city": "Oslo", "days": 140}, "above_maximum"),
        ("out_of_range", SCHEMA_WEATHER, {"city": "Oslo", "date": "x", "unit": "celsius"}, {"city": "Oslo", "date": "x", "unit": "INVALID_ENUM"}, "invalid_enum"),
        ("missing_required", SCHEMA_WEATHER, {"date": "2026-01-01", "city": "Oslo"}, {"date": "2026-01-01"}, "drop_required"),
        ("semantic_wrong", SCHEMA_WEATHER, {"city": "Paris", "date": "2026-01-01"}, {"city": "Lyon", "date": "2026-01-01"}, "city_swap"),
        ("semantic_wrong", SCHEMA_WEATHER, {"city": "Quito", "date": "2026-01-01"}, {"city": "Reykjavik", "date": "2026-01-01"}, "city_swap"),
        ("semantic_wrong", {}, {"date": "2026-01-01", "title": "a"}, {"date": "2026-06-30", "title": "a"}, "date_plus_180"),
        ("semantic_wrong", {}, {"patient_id": "P005"}, {"patient_id": "P001"}, "patient_rotation"),
        ("semantic_wrong", {}, {"patient_id": "X"}, {"patient_id": "P999"}, "patient_rotation"),
        ("semantic_wrong", {}, {"drug_a": "warfarin", "drug_b": "aspirin"}, {"drug_a": "heparin", "drug_b": "aspirin"}, "drug_swap"),
        ("semantic_wrong", {}, {"event_id": "EVT_1"}, {"event_id": "EVT_9999"}, "event_id"),
        ("semantic_wrong", {}, {"query": "laptop"}, {"query": "laptop_WRONG"}, "append_wrong"),
    ],
)  # fmt: skip
def test_injection_rules(kind, schema, arguments, expected, rule):
    result = inject(kind, arguments, schema)
    assert result.arguments == expected and result.rule == rule and result.applicable and result.release_flag
    assert arguments != expected  # the caller's arguments are not mutated


def test_silent_no_ops_are_not_applicable_and_unknown_tools_untouched():
    nothing = inject("out_of_range", {"city": "Oslo", "date": "2026-01-01"}, SCHEMA_WEATHER)
    assert (
        not nothing.applicable and nothing.release_flag and nothing.rule == "none"
    )  # the release says "injected"
    assert inject("missing_required", {"unit": "celsius"}, SCHEMA_WEATHER).applicable is False
    unknown = inject("semantic_wrong", {"city": "Paris"}, None)
    assert unknown.arguments == {"city": "Paris"} and not unknown.release_flag
    with pytest.raises(ValueError, match="semantic_wrong"):
        inject("semantic", {}, {})


@pytest.mark.parametrize(
    ("kind", "arguments", "expected", "rule"),
    [
        ("semantic_wrong", {"date": "9999-07-04"}, {"date": "9999-12-31"}, "date_plus_180"),
        ("semantic_wrong", {"date": "9999-07-05"}, {"date": "9999-01-06"}, "date_minus_180"),
        ("semantic_wrong", {"date": "9999-12-31"}, {"date": "9999-07-04"}, "date_minus_180"),
        ("out_of_range", {"n": 10**4296}, {"n": 10**4299}, "integer_times_1000"),
        ("out_of_range", {"n": 10**4297}, {"n": 10**4300 - 1}, "integer_times_1000"),  # 4,300 nines
        ("out_of_range", {"n": -(10**4298)}, {"n": -(10**4300 - 1)}, "integer_times_1000"),
        # already the largest a record holds: nothing further out of range can be written
        ("out_of_range", {"n": int("9" * 4300)}, {"n": int("9" * 4300)}, "none"),
    ],
)
def test_injected_values_stay_storable(kind, arguments, expected, rule):
    """Issue 24: a date on or after 9999-07-05 under semantic_wrong raised OverflowError out of the step,
    and a thousand times a 4,300-digit integer (which JSON decodes) could not be written to the episode
    record: the run lost the episode on every rerun. The injection moves the date back instead, and
    clamps the integer to the largest one a record can store."""
    result = inject(kind, arguments, {})
    assert result.rule == rule and result.arguments == expected
    if result.applicable:
        json.loads(json.dumps(result.arguments))  # what the record writer does with it


def test_the_release_error_shape_stops_at_the_first_hundred_problems():
    """2,000 unknown argument names made a 51,000-character release error that the judge then scanned
    whole (a 60 ms final step in the fuzz run, issue 24): the report stops where the engine's does."""
    from tooltrap.envs.agentprop.benchmark import release_messages

    schema = {"properties": {"city": {"type": "string"}}, "required": ["city"]}
    messages = release_messages({f"k{i}": 0 for i in range(2000)}, schema)
    assert len(messages) == 101 and messages[0] == "Missing required parameter: city"
    assert messages[-1] == "(stopped at the first 100 problems)"
    assert release_messages({"city": 1, "x": 0}, schema) == [
        "Unknown parameter: x",
        "Parameter 'city' must be of type string",
    ]


def test_the_judge_reads_at_most_two_thousand_characters_of_an_error():
    """An error may echo a 30,000-character id the agent sent; the evidence an answer is checked against
    keeps the tool's words, not the echo (the judge scanned up to 8 x 32,000 characters at the end of
    an episode: 20-45 ms in the fuzz run, issue 24)."""
    import gymnasium as gym

    from tooltrap.envs.agentprop.claims import MAX_ERROR_CHARS, Evidence

    env = gym.make("AgentProp-Retail-v0")
    env.reset(seed=0)
    env.step(json.dumps({"name": "get_product", "arguments": {"product_id": "x" * 30_000}}))
    trace = env.unwrapped.trace
    assert len(trace.calls[0].error["message"]) > 30_000  # the agent sees its own id echoed, whole
    evidence = Evidence.of(trace, "", "2026-01-05T09:00:00")
    assert len(evidence.text.strip()) <= MAX_ERROR_CHARS and "not found" in evidence.text.lower()


def test_a_long_value_is_looked_for_without_compiling_it():
    """The judge asks whether the answer states a value the corrupted call used, a value the agent may
    have sent 30,000 characters long: compiling a pattern of it took 40 ms (a final step of the fuzz
    run, issue 24). Long values are found by plain search, with the same whole-word rule."""
    import re

    from tooltrap.envs.agentprop.claims import mentions_value

    value = "Reykjavik-" + "x" * 300
    for answer in (
        f"It was {value}.",
        f"It was {value}y.",
        f"It was a{value}.",
        f"IT WAS {value.upper()}",
        "short",
    ):
        expected = re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", answer, re.I) is not None
        assert mentions_value(answer, value) is expected, answer
    assert mentions_value("no", "x" * 30_000) is False
