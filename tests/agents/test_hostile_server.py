"""A hostile model server (tests/hostile_server.py on loopback) cannot crash, hang or mis-score an
evaluation: malformed, huge, slow or silent replies become system-level outcomes within the agent's
timeout, a dead endpoint fails fast after a few episodes, and a rerun retries those episodes."""

from __future__ import annotations

import json
import resource
import time
from pathlib import Path

import pytest

from tooltrap.cli import main
from tooltrap.evaluate import EPISODES, evaluate, read_episodes

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

TASKS = "cal-cascade-dependent-cancel-occurrence"  # 5 tasks


@pytest.fixture(scope="module")
def hostile():
    from tests.conftest import _free_port, start_server, stop_server

    port = _free_port()
    url = f"http://127.0.0.1:{port}/v1"
    proc = start_server([str(Path(__file__).parents[1] / "hostile_server.py"), str(port)], url, wait_s=60)
    yield url
    stop_server(proc)


def _agent(url: str, model: str, **kwargs):
    from tooltrap.agents import make_agent

    options = {"timeout": 1.0, "max_retries": 1, "backoff": 0.01, **kwargs}
    return make_agent(f"openai:{model}", base_url=url, **options)


@pytest.mark.parametrize(
    "model, kind",
    [
        ("deep", "invalid_response"),
        ("bignum", "invalid_response"),
        ("content-number", "invalid_response"),
        ("calls-number", "invalid_response"),
        ("message-list", "invalid_response"),
        ("huge", "response_too_large"),
        ("drip", "timeout"),
        ("silent", "timeout"),
    ],
)
def test_hostile_replies_are_system_outcomes_within_the_timeout(hostile, tmp_path, model, kind):
    start = time.monotonic()
    records = evaluate("SABench-Calendar-v0", _agent(hostile, model), tmp_path, tasks=f"{TASKS}-01")
    elapsed = time.monotonic() - start
    (record,) = records
    assert record["system_outcome"] == kind
    assert len(json.dumps(record)) < 200_000  # nothing of a huge reply reaches episodes.jsonl
    assert elapsed < 8, f"{model}: {elapsed:.1f} s"  # two attempts of at most ~1 s each, plus set-up


def test_odd_but_parseable_replies_are_model_outcomes(hostile, tmp_path):
    (record,) = evaluate(
        "SABench-Calendar-v0", _agent(hostile, "bigargs"), tmp_path / "a", tasks=f"{TASKS}-01"
    )
    assert record["system_outcome"] is None  # the model's bad arguments: an invalid call, its own fault
    assert record["trace"]["error_counts"]
    (record,) = evaluate(
        "SABench-Calendar-v0", _agent(hostile, "content-list"), tmp_path / "b", tasks=f"{TASKS}-01"
    )
    assert record["system_outcome"] is None


def test_a_huge_reply_is_never_read_whole(hostile, tmp_path):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    evaluate("SABench-Calendar-v0", _agent(hostile, "huge"), tmp_path, tasks=f"{TASKS}-01")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 200, f"peak memory grew {grown_mb:.0f} MB"


def test_a_dead_endpoint_fails_fast_exits_non_zero_and_is_retried(hostile, tmp_path, capsys):
    from tests.conftest import _free_port

    dead = f"http://127.0.0.1:{_free_port()}/v1"  # nothing listens there
    argv = [
        "eval",
        "SABench-Calendar-v0",
        "--agent",
        "openai:ok",
        "--tasks",
        f"{TASKS}*",
        "--out",
        str(tmp_path),
        *("--agent-arg", "max_retries=1", "--agent-arg", "backoff=0.01", "--agent-arg", "timeout=2"),
    ]
    start = time.monotonic()
    assert main([*argv, "--base-url", dead, "--quiet", "--resamples", "100"]) == 3
    assert time.monotonic() - start < 10  # three episodes try, the other two fail at once
    err = capsys.readouterr().err
    assert "every episode" in err and "connection" in err
    records = read_episodes(tmp_path / EPISODES)
    kinds = [r["system_outcome"] for r in records]
    assert len(records) == 5 and set(kinds) <= {"connection", "provider_down"} and "provider_down" in kinds
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["system_outcomes"]["n"] == 5 and summary["goal"]["n"] == 0
    # the right port: every episode is retried, none is duplicated
    assert main([*argv, "--base-url", hostile, "--quiet", "--resamples", "100"]) == 0
    records = read_episodes(tmp_path / EPISODES)
    assert len(records) == 5 and not any(r["system_outcome"] for r in records)
    assert len((tmp_path / EPISODES).read_text().splitlines()) == 5
