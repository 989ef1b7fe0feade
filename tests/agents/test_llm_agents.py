"""The OpenAI-compatible agent against a real HTTP server on loopback, the local transformers agent, and
concurrent evaluation."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from tooltrap.evaluate import evaluate, read_episodes, run_episode

from ..conftest import MINI_ENV_KWARGS

pytest.importorskip("httpx")
pytest.importorskip("trl")


def _env(mini_tasks):
    return gym.make("SABench-v0", tasks_file=str(mini_tasks), **MINI_ENV_KWARGS)


def _agent(url, model="tiny", **kwargs):
    from tooltrap.agents import make_agent

    return make_agent(f"openai:{model}", base_url=url, backoff=0.01, max_retries=3, max_tokens=48, **kwargs)


def test_native_tool_calls_reach_the_env_and_raw_completions_the_trace(llm_server, mini_tasks):
    env = _env(mini_tasks)
    agent = _agent(llm_server)
    executed = 0
    for task_id in env.unwrapped.tasks.ids:
        record = run_episode(env, agent, task_id, seed=0)
        assert record["system_outcome"] is None
        for step in record["trace"]["steps"]:
            raw = json.loads(step["raw"])  # the server's assistant message, verbatim
            assert raw["role"] == "assistant"
            for call, sent in zip(step["calls"], raw.get("tool_calls") or [], strict=False):
                assert call["name"] == sent["function"]["name"]
                executed += call["name"] != "respond"
    assert executed > 0  # the warmed tiny model's tool calls went through the server and the env


def test_retries_with_backoff_then_success(llm_server, mini_tasks):
    env = _env(mini_tasks)
    record = run_episode(env, _agent(llm_server, "flaky-2"), env.unwrapped.tasks.ids[0], seed=0)
    assert record["system_outcome"] is None


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
    agent = _agent(llm_server, "notools")
    record = run_episode(env, agent, env.unwrapped.tasks.ids[0], seed=0)
    assert record["system_outcome"] is None
    assert agent.client.native_tools is False


def test_concurrent_http_evaluation_and_report_separates_system_outcomes(llm_server, mini_tasks, tmp_path):
    kwargs = {"tasks_file": str(mini_tasks), **MINI_ENV_KWARGS}
    records = evaluate("SABench-v0", _agent(llm_server), tmp_path / "a", env_kwargs=kwargs, concurrency=4)
    ids = [r["task_id"] for r in read_episodes(tmp_path / "a" / "episodes.jsonl")]
    assert sorted(ids) == sorted(set(ids)) and len(records) == 5
    evaluate("SABench-v0", _agent(llm_server, "filtered"), tmp_path / "f", env_kwargs=kwargs, concurrency=2)
    from tooltrap.wrappers.eval.sabench.report import build_report, load_runs

    report = build_report(load_runs([tmp_path / "a", tmp_path / "f"], ["model", "filtered"]), n_resamples=200)
    filtered = report.runs[1]
    assert filtered.system_outcomes == {"content_filter": 5} and filtered.n_episodes == 0


def test_local_transformers_agent_batched(warm_model, mini_tasks, tmp_path):
    from tooltrap.agents import make_agent

    agent = make_agent(f"hf:{warm_model}", max_new_tokens=48)
    kwargs = {"tasks_file": str(mini_tasks), **MINI_ENV_KWARGS}
    batched = evaluate("SABench-v0", agent, tmp_path / "batched", env_kwargs=kwargs, concurrency=4)
    single = evaluate("SABench-v0", agent, tmp_path / "single", env_kwargs=kwargs, concurrency=1)
    assert len(batched) == len(single) == 5
    by_id = {r["task_id"]: r for r in single}
    for r in batched:  # greedy decoding: the same first move whether batched or not
        assert r["trace"]["steps"][0]["action"] == by_id[r["task_id"]]["trace"]["steps"][0]["action"]


def test_sbm_search_with_http_and_local_agents_concurrently(llm_server, warm_model, tmp_path):
    """The EpiSEM mask search drives model agents like scripted ones: rounds in parallel, one ledger
    line per (task, world, condition, mask); provider failures stop the search and are retried."""
    from tooltrap.agents import make_agent
    from tooltrap.evaluate import evaluate_protocol

    task = "fin-payment-approval-limit-1"
    for name, agent in (
        ("http", _agent(llm_server)),
        ("local", make_agent(f"hf:{warm_model}", max_new_tokens=48)),
    ):
        records = evaluate_protocol("EpiSEM-v0", agent, tmp_path / name, "sbm", tasks=task, concurrency=4)
        keys = [(r["task_id"], json.dumps(r["variant"], sort_keys=True)) for r in records]
        assert len(keys) == len(set(keys)) >= 16  # phase 0 and 1: 4 cells x (1 + 3 single masks)
        assert all(r["system_outcome"] is None for r in records)
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
