"""The OpenAI-compatible agent against a real HTTP server on loopback (its replies scripted by the model
name, tests/llm_server.py), the local transformers agent, and concurrent evaluation."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from tooltrap.evaluate import evaluate, read_episodes, run_episode

from ..conftest import MINI_ENV_KWARGS
from ..llm_server import hermes_call, scripted_model

pytest.importorskip("httpx")

#: look the events up, then answer: an episode that executes a read call and ends on the terminal tool
LOOK_UP_THEN_ANSWER = scripted_model(
    hermes_call("calendar_list_events", query="standup"), hermes_call("respond", message="done")
)


def _env(mini_tasks):
    return gym.make("SABench-v0", tasks_file=str(mini_tasks), **MINI_ENV_KWARGS)


def _agent(url, model=LOOK_UP_THEN_ANSWER, **kwargs):
    from tooltrap.agents import make_agent

    return make_agent(f"openai:{model}", base_url=url, backoff=0.01, max_retries=3, max_tokens=48, **kwargs)


def _executed(record) -> list[tuple[str, bool]]:
    """(tool, succeeded) of every call the env executed in the episode."""
    return [(call["name"], call["ok"]) for step in record["trace"]["steps"] for call in step["calls"]]


def test_native_tool_calls_reach_the_env_and_raw_completions_the_trace(llm_server, mini_tasks):
    env = _env(mini_tasks)
    agent = _agent(llm_server)
    for task_id in env.unwrapped.tasks.ids:
        record = run_episode(env, agent, task_id, seed=0)
        assert record["system_outcome"] is None
        for step in record["trace"]["steps"]:
            raw = json.loads(step["raw"])  # the server's assistant message, verbatim
            assert raw["role"] == "assistant" and raw["content"] is None
            sent = [c["function"]["name"] for c in raw["tool_calls"]]
            assert [call["name"] for call in step["calls"]] == sent
        # the server's tool_calls, parsed by the agent, executed by the env; the answer ends the episode
        assert _executed(record) == [("calendar_list_events", True), ("respond", True)]
        assert record["trace"]["terminal"] == "respond"


def test_retries_with_backoff_then_success(llm_server, mini_tasks):
    env = _env(mini_tasks)
    record = run_episode(
        env, _agent(llm_server, f"flaky-2+{LOOK_UP_THEN_ANSWER}"), env.unwrapped.tasks.ids[0], seed=0
    )
    assert record["system_outcome"] is None
    assert _executed(record) == [("calendar_list_events", True), ("respond", True)]  # the third try's reply


@pytest.mark.parametrize(
    "model, kind", [("filtered", "content_filter"), ("broken", "invalid_response"), ("flaky-99", "http_503")]
)
def test_provider_failures_are_system_outcomes(llm_server, mini_tasks, model, kind):
    env = _env(mini_tasks)
    record = run_episode(env, _agent(llm_server, model), env.unwrapped.tasks.ids[0], seed=0)
    assert record["system_outcome"] == kind
    assert record["trace"]["truncated"] == f"system:{kind}"


def test_json_in_text_fallback_when_tools_are_rejected(llm_server, mini_tasks):
    env = _env(mini_tasks)
    agent = _agent(llm_server, f"notools+{LOOK_UP_THEN_ANSWER}")
    record = run_episode(env, agent, env.unwrapped.tasks.ids[0], seed=0)
    assert record["system_outcome"] is None
    assert agent.client.native_tools is False
    raw = json.loads(record["trace"]["steps"][0]["raw"])
    assert "tool_calls" not in raw and "<tool_call>" in raw["content"]  # the call came back as text
    assert _executed(record) == [("calendar_list_events", True), ("respond", True)]


def test_concurrent_http_evaluation_and_report_separates_system_outcomes(llm_server, mini_tasks, tmp_path):
    kwargs = {"tasks_file": str(mini_tasks), **MINI_ENV_KWARGS}
    records = evaluate("SABench-v0", _agent(llm_server), tmp_path / "a", env_kwargs=kwargs, concurrency=4)
    ids = [r["task_id"] for r in read_episodes(tmp_path / "a" / "episodes.jsonl")]
    assert sorted(ids) == sorted(set(ids)) and len(records) == 5
    assert all(_executed(r) == [("calendar_list_events", True), ("respond", True)] for r in records)
    evaluate("SABench-v0", _agent(llm_server, "filtered"), tmp_path / "f", env_kwargs=kwargs, concurrency=2)
    from tooltrap.wrappers.eval.sabench.report import build_report, load_runs

    report = build_report(load_runs([tmp_path / "a", tmp_path / "f"], ["model", "filtered"]), n_resamples=200)
    filtered = report.runs[1]
    assert filtered.system_outcomes == {"content_filter": 5} and filtered.n_episodes == 0


def test_local_transformers_agent_batched(tiny_model, mini_tasks, tmp_path):
    """Left-padded batched generation gives each episode the completion it gets alone. The untrained
    model's near-flat logits make the first move sensitive to any padding or masking error."""
    from tooltrap.agents import make_agent

    agent = make_agent(f"hf:{tiny_model}", max_new_tokens=16)
    kwargs = {"tasks_file": str(mini_tasks), **MINI_ENV_KWARGS, "max_steps": 1}  # the first move is the test
    batched = evaluate("SABench-v0", agent, tmp_path / "batched", env_kwargs=kwargs, concurrency=4)
    single = evaluate("SABench-v0", agent, tmp_path / "single", env_kwargs=kwargs, concurrency=1)
    assert len(batched) == len(single) == 5
    by_id = {r["task_id"]: r for r in single}
    for r in batched:  # greedy decoding: the same first move whether batched or not
        assert r["trace"]["steps"][0]["raw"] == by_id[r["task_id"]]["trace"]["steps"][0]["raw"]


def test_sbm_search_with_http_and_local_agents_concurrently(llm_server, tool_calling_model, tmp_path):
    """The EpiSEM mask search drives model agents like scripted ones: rounds in parallel, one ledger
    line per (task, world, condition, mask); provider failures stop the search and are retried."""
    from tooltrap.agents import make_agent
    from tooltrap.evaluate import evaluate_protocol

    task = "fin-payment-approval-limit-1"
    look_up_then_escalate = scripted_model(
        hermes_call("finance_get_invoice", invoice_id="INV-1"), hermes_call("escalate", reason="check")
    )
    for name, agent in (
        ("http", _agent(llm_server, look_up_then_escalate)),
        ("local", make_agent(f"hf:{tool_calling_model}", max_new_tokens=48)),
    ):
        records = evaluate_protocol("EpiSEM-v0", agent, tmp_path / name, "sbm", tasks=task, concurrency=4)
        keys = [(r["task_id"], json.dumps(r["variant"], sort_keys=True)) for r in records]
        assert len(keys) == len(set(keys)) >= 16  # phase 0 and 1: 4 cells x (1 + 3 single masks)
        assert all(r["system_outcome"] is None for r in records)
        assert all(r["trace"]["steps"][0]["calls"] for r in records)  # every episode opens with a call
    messages: list[str] = []
    failed = evaluate_protocol(
        "EpiSEM-v0",
        _agent(llm_server, "filtered"),
        tmp_path / "f",
        "sbm",
        tasks=task,
        concurrency=2,
        log=messages.append,
    )
    assert failed and all(r["system_outcome"] == "content_filter" for r in failed)
    assert any("ended at the provider" in m for m in messages)


@pytest.mark.parametrize("fixture", ["tiny_model", "tool_calling_model"])
def test_prefix_cache_gives_the_same_greedy_episodes(fixture, mini_tasks, tmp_path, request):
    """The shared prompt prefix's key/value cache, reused across the conversations of a batch and across
    batches and turns, changes nothing: every step's raw completion is the one the agent makes without it,
    batched (conversations of different lengths after the shared prefix: padding in the middle) and one by
    one. The untrained model's near-flat logits make any position or masking error visible; the scripted
    caller plays multi-turn episodes, so later turns reuse the cache too."""
    from tooltrap.agents import make_agent

    model = request.getfixturevalue(fixture)
    kwargs = {"tasks_file": str(mini_tasks), **MINI_ENV_KWARGS, "max_steps": 3}
    runs = {}
    for reuse in (False, True):
        agent = make_agent(f"hf:{model}", max_new_tokens=24, prefix_cache=reuse)
        for concurrency in (1, 4):
            records = evaluate(
                "SABench-v0",
                agent,
                tmp_path / f"{reuse}-{concurrency}",
                env_kwargs=kwargs,
                concurrency=concurrency,
            )
            runs[reuse, concurrency] = {
                r["task_id"]: [s["raw"] for s in r["trace"]["steps"]] for r in records
            }
        stats = agent.backend.prefix_stats
        # the cache was used (or, without it, never built): the comparison is not vacuous
        assert (stats["reused"] > stats["computed"] > 0) if reuse else stats == {"computed": 0, "reused": 0}
    assert len(runs[False, 1]) == 5
    for key, run in runs.items():
        assert run == runs[False, 1], key
    if fixture == "tool_calling_model":  # multi-turn: the reused prefix served a turn after a tool result
        assert all(len(steps) >= 2 for steps in runs[True, 4].values())
