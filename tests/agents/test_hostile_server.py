"""A hostile model server (tests/hostile_server.py on loopback) cannot crash, hang or mis-score an
evaluation: malformed, huge, slow or silent replies become system-level outcomes within the agent's
timeout (headers dripped byte by byte included), a dead endpoint stops the run after a few episodes
naming the address, and a rerun retries those episodes.

No assertion here reads a clock: a slow reply that was not cut off would arrive whole and be scored as
the model's, so the outcome kind alone shows that the timeout held."""

from __future__ import annotations

import json
import resource
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tooltrap.cli import main
from tooltrap.evaluate import EPISODES, evaluate, read_episodes

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

TASKS = "cal-cascade-dependent-cancel-occurrence"  # 5 tasks


@pytest.fixture(scope="module")
def hostile():
    from tests.conftest import start_server, stop_server

    proc, url = start_server(Path(__file__).parents[1] / "hostile_server.py")
    yield url
    stop_server(proc)


def _valid_reply() -> bytes:
    from tests.hostile_server import RESPOND, _reply

    return _reply(RESPOND)


class HeaderDrip:
    """A raw loopback server (no framework could do it) that sends a valid reply's status line and
    headers one byte every 20 ms (about 5 s in all), then the body: each byte comes well within any read
    timeout, the whole far past the agent's. ``delivered`` says, per connection, whether the client
    stayed until the headers were complete. Listening before the test starts: nothing to wait for."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.delivered: list[bool] = []
        self.handlers: list[threading.Thread] = []


@pytest.fixture
def header_drip() -> Iterator[HeaderDrip]:
    body = _valid_reply()
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        f"X-Padding: {'x' * 160}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    server = HeaderDrip(f"http://127.0.0.1:{listener.getsockname()[1]}/v1")

    def answer(conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(1 << 16)
                for byte in head:
                    conn.sendall(bytes([byte]))
                    time.sleep(0.02)
                conn.sendall(body)
            except OSError:  # the client hung up: what a deadline does
                server.delivered.append(False)
                return
        server.delivered.append(True)

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # closed at teardown
                return
            handler = threading.Thread(target=answer, args=(conn,), daemon=True)
            server.handlers.append(handler)
            handler.start()

    threading.Thread(target=accept, daemon=True).start()
    yield server
    listener.close()


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
    records = evaluate("SABench-Calendar-v0", _agent(hostile, model), tmp_path, tasks=f"{TASKS}-01")
    (record,) = records
    assert record["system_outcome"] == kind  # drip and silent answer whole, late: a timeout held
    assert len(json.dumps(record)) < 200_000  # nothing of a huge reply reaches episodes.jsonl


def test_the_timeout_covers_headers_dripped_byte_by_byte(header_drip, tmp_path):
    """httpx's own timeouts bound each read: a header byte every 20 ms never trips them. The agent's
    timeout is one deadline over the exchange, so the reply (which would be a valid call) never counts."""
    agent = _agent(header_drip.url, "ok", timeout=0.5, max_retries=0)
    (record,) = evaluate("SABench-Calendar-v0", agent, tmp_path, tasks=f"{TASKS}-01")
    assert record["system_outcome"] == "timeout"
    for handler in header_drip.handlers:
        handler.join()
    # the client hung up while the headers were still coming (a timeout checked only once they were
    # all in would have waited for them, and for the body: about 5 s against 0.5)
    assert header_drip.delivered == [False]


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


def test_a_dead_endpoint_stops_the_run_naming_it_and_is_retried(hostile, tmp_path, capsys):
    bound = socket.socket()  # bound, never listening: every connection is refused while it is held
    bound.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{bound.getsockname()[1]}/v1"
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
    assert main([*argv, "--base-url", dead, "--quiet", "--resamples", "100"]) == 3
    bound.close()
    said, error = capsys.readouterr().err.splitlines()
    assert said == f"openai:ok: requests go to {dead} (--base-url)"  # the endpoint, before anything runs
    assert error.startswith(f"error: cannot reach the model server at {dead}: the first 3 episodes")
    # it stopped after three episodes, not after every task: those three are recorded, to be retried
    records = read_episodes(tmp_path / EPISODES)
    assert [r["system_outcome"] for r in records] == ["connection"] * 3
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["system_outcomes"]["n"] == 3 and summary["goal"]["n"] == 0
    # the right port: every episode is retried, none is duplicated
    assert main([*argv, "--base-url", hostile, "--quiet", "--resamples", "100"]) == 0
    records = read_episodes(tmp_path / EPISODES)
    assert len(records) == 5 and not any(r["system_outcome"] for r in records)
    assert len((tmp_path / EPISODES).read_text().splitlines()) == 5
