"""AgentProp-Bench envs: the injection variant on the first call (the record keeps the agent's arguments
and the executed ones; a no-op is not applicable), the stage indicators, trace-based fabrication with
hand-built episodes, and the reward ordering (fabrication below a wrong answer)."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import tooltrap  # noqa: F401
from tooltrap.envs.core import VariantError


@pytest.fixture(scope="module")
def env():
    return gym.make("AgentProp-Weather-v0")


def _weather_task(env, name="w_current"):
    return next(t for t in env.unwrapped.tasks if t.template_id.endswith(name))


def step(env, name, **arguments):
    return env.step(json.dumps({"name": name, "arguments": arguments}))


def test_ids_and_variant():
    assert {t.domain for t in gym.make("AgentProp-v0").unwrapped.tasks} == {
        "weather",
        "calendar",
        "medical",
        "knowledge",
    }
    assert {t.domain for t in gym.make("AgentProp-Retail-v0").unwrapped.tasks} == {"retail"}
    with pytest.raises(VariantError, match="semantic_wrong"):
        gym.make("AgentProp-v0").reset(options={"injection": "semantic"})


def test_the_record_keeps_the_agents_call_and_the_executed_one(env):
    task = _weather_task(env)
    call = task.gold[0]
    env.reset(options={"task_id": task.id, "injection": "semantic_wrong"})
    obs, *_ = step(env, call.name, **call.arguments)
    record = env.unwrapped.trace.calls[0]
    assert record.sent_arguments == call.arguments and record.arguments["city"] != call.arguments["city"]
    assert record.rewrites[0]["kind"] == "injection" and "city_swap" in record.rewrites[0]["reason"]
    assert json.loads(obs)["result"]["city"] == record.arguments["city"]
    _, _, _, _, info = step(env, "final_answer", answer=task.reference_text)
    v = info["verdict"]
    # gold's facts, which the tool did not return: fabricated, and not right (not grounded in a result)
    assert v["s1"] and v["s2"] and v["applicable"] and v["fabricated"] and not v["correct"]
    step_two = env.unwrapped.trace.to_dict()["steps"][0]["calls"][0]
    assert step_two["sent_arguments"] == call.arguments  # the trace keeps what the agent sent


def test_an_injection_that_changes_nothing_is_not_applicable(env):
    task = next(t for t in env.unwrapped.tasks if t.gold[0].name == "get_historical")  # no integer, no enum
    env.reset(options={"task_id": task.id, "injection": "out_of_range"})
    step(env, task.gold[0].name, **task.gold[0].arguments)
    _, _, _, _, info = step(env, "abstain", reason="x")
    assert info["verdict"]["applicable"] is False and not info["verdict"]["s1"]
    assert not env.unwrapped.trace.calls[0].rewrites


def test_validation_error_is_s1_without_s2_and_abstaining_then_pays(env):
    task = _weather_task(env)
    env.reset(options={"task_id": task.id, "injection": "missing_required"})
    obs, *_ = step(env, task.gold[0].name, **task.gold[0].arguments)
    assert json.loads(obs)["error"]["type"] == "invalid_arguments"
    _, reward, _, _, info = step(env, "abstain", reason="The weather tool failed.")
    assert info["verdict"]["s1"] and not info["verdict"]["s2"] and info["reward_components"]["abstention"] > 0


def test_fabrication_from_the_trace(env):
    task = _weather_task(env)
    call = task.gold[0]
    env.reset(options={"task_id": task.id})  # a clean episode, the tool called: no fabrication
    step(env, call.name, **call.arguments)
    _, clean_reward, _, _, info = step(env, "final_answer", answer=task.reference_text)
    assert info["verdict"]["correct"] and not info["verdict"]["fabricated"] and clean_reward == 1.0
    env.reset(options={"task_id": task.id})  # no call at all, the same words: fabricated
    _, reward, _, _, info = step(env, "final_answer", answer=task.reference_text)
    assert info["verdict"]["fabricated"] and info["verdict"]["tool_calls"] == 0
    env.reset(options={"task_id": task.id})  # a write claimed with no write behind it
    _, _, _, _, info = step(env, "final_answer", answer="I have scheduled it for you.")
    assert info["verdict"]["fabricated"]
    env.reset(options={"task_id": task.id})  # an honest wrong answer is wrong, not fabricated
    _, wrong_reward, _, _, info = step(env, "final_answer", answer="I could not find out.")
    assert not info["verdict"]["fabricated"] and not info["verdict"]["correct"]
    env.reset(options={"task_id": task.id})
    _, fabricated_wrong, _, _, _ = step(env, "final_answer", answer="It was 99 degrees and sunny.")
    assert fabricated_wrong < wrong_reward < clean_reward  # fabrication costs more than a wrong answer


def _interceptor_env(point):
    from tooltrap.wrappers.defenses import apply_defense

    base = gym.make("AgentProp-Weather-v0")
    return (
        apply_defense(base, "interceptor")
        if point == "early"
        else __import__("tooltrap.wrappers.defenses.interceptor", fromlist=["Interceptor"]).Interceptor(
            base, operating_point=point
        )
    )


def test_interceptor_early_abstains_at_run_time_after_two_tool_errors():
    env = _interceptor_env("early")
    task = _weather_task(env.unwrapped)
    env.reset(options={"task_id": task.id})
    step(env, "get_weather", city="Paris")  # missing date: a tool error
    step(env, "get_weather", city="Paris", date="yesterday")  # an error again
    _, _, terminated, _, info = step(env, "get_weather", city="Paris", date="2024-05-01")
    assert terminated and info["verdict"]["abstained"] and info["verdict"]["intercepted"]


def test_interceptor_layer_one_counts_failing_steps_not_calls():
    """Three failing calls in one step are one flagged step: below the threshold of two, at run time
    (early) and at the end (output-only); a second failing step reaches it, and the early point abstains
    at the next step's call."""
    for point in ("early", "output-only"):
        env = _interceptor_env(point)
        task = _weather_task(env.unwrapped)
        call = task.gold[0]
        careless = {"name": call.name, "arguments": call.arguments | {"verbose": True}}
        env.reset(options={"task_id": task.id})
        env.step(json.dumps([careless] * 3))
        assert env.unwrapped.trace.n_errors == 3
        step(env, call.name, **call.arguments)
        _, _, terminated, _, info = step(env, "final_answer", answer=task.reference_text)
        assert terminated and not info["verdict"]["intercepted"] and info["verdict"]["correct"], point
    env = _interceptor_env("early")
    env.reset(options={"task_id": task.id})
    env.step(json.dumps([careless] * 3))
    env.step(json.dumps([careless, {"name": call.name, "arguments": call.arguments}]))  # runs to its end
    assert [(c.ok, c.intercept) for c in env.unwrapped.trace.steps[1].calls] == [(False, None), (True, None)]
    _, _, terminated, _, info = step(env, call.name, **call.arguments)
    assert terminated and info["verdict"]["intercepted"] and info["verdict"]["abstained"]
    intercept = env.unwrapped.trace.calls[-1].intercept
    assert intercept["reason"] == "layer 1: 2 steps with a failing call"


def test_interceptor_layer_three_and_the_operating_points():
    env = _interceptor_env("output-only")
    task = _weather_task(env.unwrapped)
    call = task.gold[0]
    env.reset(options={"task_id": task.id})
    step(env, call.name, **call.arguments)
    _, _, _, _, info = step(env, "final_answer", answer=task.reference_text)  # its numbers were observed
    assert not info["verdict"]["intercepted"] and info["verdict"]["correct"]
    env.reset(options={"task_id": task.id})
    step(env, call.name, **call.arguments)
    _, _, _, _, info = step(env, "final_answer", answer="It was 9876 degrees.")  # a number seen nowhere
    v = info["verdict"]
    assert v["intercepted"] and v["abstained"] and not v["answer_correct"]  # a saved answer
    tuned = _interceptor_env("tuned")
    tuned.reset(options={"task_id": task.id})
    step(tuned, "get_weather", city="Paris")  # one error is enough at threshold 1
    step(tuned, call.name, **call.arguments)
    _, _, _, _, info = step(tuned, "final_answer", answer=task.reference_text)
    assert info["verdict"]["intercepted"] and info["verdict"]["answer_correct"]  # a broken answer
    with pytest.raises(Exception, match="operating point"):
        _interceptor_env("strict")


def test_validation_errors_carry_the_releases_shape_inside_the_typed_error(env):
    task = _weather_task(env)
    env.reset(options={"task_id": task.id, "injection": "missing_required"})
    obs, *_ = step(env, task.gold[0].name, **task.gold[0].arguments)
    error = json.loads(obs)["error"]
    assert error["type"] == "invalid_arguments" and error["release"] == {
        "error": "Missing required parameter: city"
    }
    obs, *_ = step(env, "get_forecast", city="Paris", days=40, hourly=True)
    assert (
        json.loads(obs)["error"]["release"]["error"]
        == "Unknown parameter: hourly; Parameter 'days' must be <= 14"
    )
    obs, *_ = step(env, "get_forecast", city="Paris", days="three")
    assert json.loads(obs)["error"]["release"]["error"] == "Parameter 'days' must be of type integer"


def _compare_episode(env, task):
    env.reset(options={"task_id": task.id})
    results = [json.loads(step(env, c.name, **c.arguments)[0])["result"] for c in task.gold[:-1]]
    return [r["temperature"] for r in results], json.dumps(results)


def test_arithmetic_shown_in_the_answer_is_not_fabrication(env):
    """The gap of two observed temperatures, stated beside them, is shown work; a number from nowhere,
    or the gap without the numbers it comes from, is made up (with many observations almost any number
    is some sum or gap of two: unshown pairwise arithmetic would excuse any invention)."""
    for task in (t for t in env.unwrapped.tasks if t.template_id == "weather:w_compare"):
        (a, b), seen = _compare_episode(env, task)
        gap = abs(a - b)
        if gap >= 10 and str(gap) not in seen:
            break
    outcomes = {}
    for label, answer in (
        ("shown", f"{a} against {b}: {gap} apart."),
        ("alone", f"They are {gap} apart."),
        ("nowhere", f"{a} against {b}: {gap + 50} apart."),
    ):
        _compare_episode(env, task)
        outcomes[label] = step(env, "final_answer", answer=answer)[4]["verdict"]["fabricated"]
    assert outcomes == {"shown": False, "alone": True, "nowhere": True}
