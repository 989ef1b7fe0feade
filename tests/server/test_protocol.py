"""Hostile and odd input against a real ``tooltrap serve`` process on loopback: every refusal is a typed
JSON error (a code and a message, never a traceback), leaves the session as it was, and costs a bounded
amount; a session past the cap is refused at once; a client that vanishes or idles has its env freed;
the server serves others throughout. Also OpenEnv's stateless HTTP routes and the CLI's usage errors."""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tooltrap.cli import main
from tooltrap.client import Client, ServerError

from .conftest import served

ENV = "SABench-Calendar-v0"
CAP = 4096  # --max-message-bytes of the hostile server
#: a bound on waiting for the server to notice something (a guard against hanging, not a timing check)
PATIENCE = 60.0


@pytest.fixture(scope="module")
def server():
    with served(ENV, "--max-message-bytes", str(CAP), "--max-sessions", "8") as url:
        yield url


def ws_url(url: str, query: str = "") -> str:
    return url.replace("http://", "ws://") + "/ws" + query


def exchange(ws, message) -> dict:
    ws.send(message if isinstance(message, str | bytes) else json.dumps(message))
    return json.loads(ws.recv(timeout=PATIENCE))


def assert_error(reply: dict, code: str) -> dict:
    assert reply["type"] == "error", reply
    data = reply["data"]
    assert data["code"] == code, data
    assert isinstance(data["message"], str) and data["message"]
    assert "Traceback" not in json.dumps(reply)
    return data


def capacity(url: str) -> dict:
    return httpx.get(url + "/capacity", timeout=PATIENCE).json()


def wait_until(url: str, predicate) -> dict:
    """Poll /capacity until ``predicate`` holds (the server frees a session when it notices the socket
    is gone, a moment after the client closed it)."""
    deadline = time.monotonic() + PATIENCE
    while True:
        seen = capacity(url)
        if predicate(seen) or time.monotonic() > deadline:
            return seen
        time.sleep(0.02)


def test_malformed_messages_are_typed_errors_and_leave_the_session_usable(server):
    with connect(ws_url(server)) as ws:
        reset = exchange(ws, {"type": "reset", "data": {"seed": 0}})
        assert reset["type"] == "observation"
        cases = [
            ("{not json", "INVALID_JSON"),
            ("[" * 3000, "INVALID_JSON"),  # nesting too deep: a RecursionError inside json, caught
            ('"just a string"', "VALIDATION_ERROR"),
            (json.dumps({"type": "jump"}), "UNKNOWN_TYPE"),
            (json.dumps({"data": {}}), "UNKNOWN_TYPE"),
            (json.dumps({"type": "step"}), "VALIDATION_ERROR"),
            (json.dumps({"type": "step", "data": "a string"}), "VALIDATION_ERROR"),
            (json.dumps({"type": "step", "data": {"text": 3}}), "VALIDATION_ERROR"),
            (json.dumps({"type": "step", "data": {"text": "x", "name": "y"}}), "VALIDATION_ERROR"),
            (json.dumps({"type": "step", "data": {"name": "y", "arguments": []}}), "VALIDATION_ERROR"),
            (json.dumps({"type": "step", "data": {"tool": "y"}}), "VALIDATION_ERROR"),
            (json.dumps({"type": "state", "extra": 1}), "VALIDATION_ERROR"),
            (json.dumps({"type": "reset", "data": {"seed": -1}}), "VALIDATION_ERROR"),
            (json.dumps({"type": "reset", "data": {"seed": True}}), "VALIDATION_ERROR"),
            (json.dumps({"type": "reset", "data": {"episode_id": "x" * 300}}), "VALIDATION_ERROR"),
            (
                json.dumps({"type": "reset", "data": {"task_id": "a", "options": {"task_id": "b"}}}),
                "VALIDATION_ERROR",
            ),
            (json.dumps({"type": "reset", "data": {"task_idd": "x"}}), "VALIDATION_ERROR"),
            (json.dumps({"type": "reset", "data": {"task_id": "no-such-task"}}), "VALIDATION_ERROR"),
            (b"\xff\xfe{", "INVALID_JSON"),  # a binary frame that is not UTF-8
        ]
        for frame, code in cases:
            data = assert_error(exchange(ws, frame), code)
            assert len(data["message"]) < 1000  # an error never echoes the input back whole
        # the env's own typed errors say which, with did-you-mean
        data = assert_error(exchange(ws, {"type": "reset", "data": {"task_idd": "x"}}), "VALIDATION_ERROR")
        assert data["error"] == "UnknownOptionError" and "task_id" in data["message"]
        # nothing above changed the episode: the state is the reset's, and it steps on
        state = exchange(ws, {"type": "state"})["data"]
        assert state == {
            "episode_id": None,
            "step_count": 0,
            "task_id": reset["data"]["metadata"]["info"]["task_id"],
            "done": False,
        }
        step = exchange(ws, {"type": "step", "data": {"name": "calendar_list_events", "arguments": {}}})
        assert step["type"] == "observation" and json.loads(step["data"]["observation"]["text"])["ok"]


def test_a_bad_action_is_the_envs_observation_not_a_protocol_error(server):
    """Malformed action text is the env's to answer (a parse_error observation, counted), as in process."""
    with connect(ws_url(server)) as ws:
        exchange(ws, {"type": "reset", "data": {"seed": 0}})
        reply = exchange(ws, {"type": "step", "data": {"text": "{not json"}})
        assert reply["type"] == "observation"
        assert json.loads(reply["data"]["observation"]["text"])["error"]["type"] == "parse_error"


def test_step_before_reset_and_after_done(server):
    with connect(ws_url(server)) as ws:
        assert_error(exchange(ws, {"type": "step", "data": {"text": "{}"}}), "NOT_RESET")
        exchange(ws, {"type": "reset", "data": {"seed": 0}})
        done = exchange(ws, {"type": "step", "data": {"name": "respond", "arguments": {"message": "Done."}}})
        assert done["data"]["done"] is True and "verdict" in done["data"]["metadata"]["info"]
        assert_error(exchange(ws, {"type": "step", "data": {"text": "{}"}}), "EPISODE_DONE")
        assert exchange(ws, {"type": "state"})["data"]["done"] is True
        again = exchange(ws, {"type": "reset", "data": {"seed": 1, "episode_id": "ep-2"}})
        assert again["data"]["done"] is False
        assert exchange(ws, {"type": "state"})["data"]["episode_id"] == "ep-2"


def test_an_unknown_session_id_is_refused(server):
    with connect(ws_url(server, "?session_id=nope")) as ws:
        data = assert_error(json.loads(ws.recv(timeout=PATIENCE)), "SESSION_ERROR")
        assert "nope" in data["message"]
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=PATIENCE)


def test_oversized_frames_close_that_session_with_a_typed_error_and_others_go_on(server):
    with connect(ws_url(server)) as other:
        exchange(other, {"type": "reset", "data": {"seed": 0}})
        # past the cap: the typed error, then close code 1009
        with connect(ws_url(server), max_size=None) as ws:
            exchange(ws, {"type": "reset", "data": {"seed": 0}})
            data = assert_error(
                exchange(ws, {"type": "step", "data": {"text": "x" * CAP}}), "MESSAGE_TOO_LARGE"
            )
            assert str(CAP) in data["message"]
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=PATIENCE)
            assert closed.value.rcvd.code == 1009
        # multi-byte characters count as bytes: 1,100 4-byte characters are over 4,096 bytes
        with connect(ws_url(server)) as ws:
            emoji = json.dumps({"type": "step", "data": {"text": "\U0001f600" * 1100}}, ensure_ascii=False)
            assert len(emoji) < CAP < len(emoji.encode())
            assert_error(exchange(ws, emoji), "MESSAGE_TOO_LARGE")
        # far past it: the WebSocket layer refuses the frame before reading it (close code 1009)
        with connect(ws_url(server), max_size=None) as ws:
            ws.send("x" * (100 * CAP))
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=PATIENCE)
            assert closed.value.rcvd.code == 1009
        # the other session was untouched
        step = exchange(other, {"type": "step", "data": {"name": "calendar_list_events", "arguments": {}}})
        assert step["type"] == "observation"
    assert wait_until(server, lambda c: c["envs_open"] == 0)["envs_open"] == 0


def test_a_client_that_vanishes_mid_episode_has_its_env_freed(server):
    before = capacity(server)
    assert before["envs_open"] == 0
    for _ in range(3):
        ws = connect(ws_url(server)).__enter__()
        exchange(ws, {"type": "reset", "data": {"seed": 0}})
        exchange(ws, {"type": "step", "data": {"name": "calendar_list_events", "arguments": {}}})
        assert capacity(server)["envs_open"] == 1
        # no close frame, no goodbye: the TCP connection just ends
        ws.socket.shutdown(socket.SHUT_RDWR)
        ws.socket.close()
        seen = wait_until(server, lambda c: c["envs_open"] == 0 and c["active_sessions"] == 0)
        assert seen["envs_open"] == 0 and seen["active_sessions"] == 0
    # a client that sends half a frame and vanishes
    with socket.create_connection(("127.0.0.1", int(server.rsplit(":", 1)[1]))) as raw:
        raw.sendall(
            b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        raw.recv(4096)
        raw.sendall(b"\x81\xfe\x10\x00")  # a masked text frame header announcing 4096 bytes, then nothing
    seen = wait_until(server, lambda c: c["envs_open"] == 0 and c["active_sessions"] == 0)
    assert seen["envs_open"] == 0 and seen["active_sessions"] == 0
    # and the server still serves
    with Client(server) as client:
        assert client.reset(seed=0).info["tools"]


def test_more_sessions_than_the_cap_are_refused_at_once():
    with served(ENV, "--max-sessions", "2") as url:
        first, second = Client(url).connect(), Client(url).connect()
        first.reset(seed=0)
        second.reset(seed=1)
        third = Client(url, timeout=PATIENCE)
        with pytest.raises(ServerError) as refused:
            third.reset(seed=2)
        assert refused.value.code == "CAPACITY_REACHED" and refused.value.closed
        assert refused.value.data["max_sessions"] == 2
        assert capacity(url)["sessions_refused"] == 1
        first.close()
        wait_until(url, lambda c: c["active_sessions"] == 1)
        assert Client(url).connect().reset(seed=2).info["tools"]  # a freed slot is taken again
        second.step('{"name": "calendar_list_events", "arguments": {}}')  # the others were untouched


def test_idle_sessions_are_reaped_after_the_timeout():
    with served(ENV, "--session-timeout", "0.5") as url:
        with connect(ws_url(url)) as ws:
            exchange(ws, {"type": "reset", "data": {"seed": 0}})
            # say nothing: the server speaks first, when the timeout has passed
            data = assert_error(json.loads(ws.recv(timeout=PATIENCE)), "SESSION_TIMEOUT")
            assert "0.5" in data["message"]
            with pytest.raises(ConnectionClosed):
                ws.recv(timeout=PATIENCE)
        seen = wait_until(url, lambda c: c["envs_open"] == 0)
        assert seen["sessions_reaped"] == 1 and seen["envs_open"] == 0 and seen["active_sessions"] == 0


def test_close_ends_the_session(server):
    with connect(ws_url(server)) as ws:
        exchange(ws, {"type": "reset", "data": {"seed": 0}})
        ws.send(json.dumps({"type": "close"}))
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=PATIENCE)
    assert wait_until(server, lambda c: c["envs_open"] == 0)["envs_open"] == 0


# -- the stateless HTTP routes -----------------------------------------------------------------------------
def test_http_routes_as_openenv_defines_them(server):
    assert httpx.get(server + "/health").json() == {"status": "healthy"}
    metadata = httpx.get(server + "/metadata").json()
    assert metadata["name"] == ENV and metadata["description"] and metadata["version"]
    schema = httpx.get(server + "/schema").json()
    assert {"action", "observation", "state", "tools"} <= set(schema)
    assert schema["action"]["properties"]["text"]["type"] == "string"
    tool_names = {t["function"]["name"] for t in schema["tools"]}
    assert httpx.get(server + "/state").json() == {
        "episode_id": None,
        "step_count": 0,
        "task_id": None,
        "done": False,
    }
    # POST /reset: a fresh env's reset, the same as the WebSocket's
    body = {"seed": 3, "task_index": 1}
    http = httpx.post(server + "/reset", json=body)
    assert http.status_code == 200
    with connect(ws_url(server)) as ws:
        assert exchange(ws, {"type": "reset", "data": body})["data"] == http.json()
    assert {t["function"]["name"] for t in http.json()["metadata"]["info"]["tools"]} <= tool_names
    assert httpx.post(server + "/reset").status_code == 200  # no body: OpenEnv's empty ResetRequest
    # POST /step: a fresh env has no episode; an invalid action is still an invalid action
    step = httpx.post(server + "/step", json={"action": {"text": "{}"}})
    assert step.status_code == 409 and assert_error(step.json(), "NOT_RESET")
    invalid = httpx.post(server + "/step", json={"action": {"bogus": 1}})
    assert invalid.status_code == 422 and assert_error(invalid.json(), "VALIDATION_ERROR")
    for response, status, code in [
        (httpx.post(server + "/step", content=b"{"), 400, "INVALID_JSON"),
        (httpx.post(server + "/step", json={"no": "action"}), 422, "VALIDATION_ERROR"),
        (httpx.post(server + "/reset", json={"task_idd": 1}), 422, "VALIDATION_ERROR"),
        (httpx.post(server + "/reset", content=b"x" * (CAP + 1)), 413, "MESSAGE_TOO_LARGE"),
        (httpx.get(server + "/nowhere"), 404, "NOT_FOUND"),
    ]:
        assert response.status_code == status, response.text
        assert_error(response.json(), code)
    assert capacity(server)["envs_open"] == 0  # every fresh env was closed


def test_an_oversized_body_without_a_length_is_cut_off(server):
    """A chunked body announces no length: it is counted as it streams."""

    def chunks():
        for _ in range(10):
            yield b"x" * 1000

    response = httpx.post(server + "/reset", content=chunks())
    assert response.status_code == 413 and assert_error(response.json(), "MESSAGE_TOO_LARGE")


# -- the CLI -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["serve", "SABench-Calender-v0"], "SABench-Calendar-v0"),
        (["serve", ENV, "--env-arg", "tasks_fiel=x.json"], "tasks_file"),
        (["serve", ENV, "--env-arg", "novalue"], "--env-arg takes KEY=VALUE"),
        (["serve", ENV, "--session-timeout", "0"], "session_timeout"),
        (["serve", ENV, "--max-message-bytes", "10"], "max_message_bytes"),
    ],
)
def test_serve_usage_errors_are_one_line_before_anything_starts(argv, expected, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and expected in err, err


def test_the_client_refuses_a_bad_url():
    from tooltrap.envs.core import EnvUsageError

    with pytest.raises(EnvUsageError, match="base_url"):
        Client("127.0.0.1:8000")
    with pytest.raises(ServerError) as failed:
        Client("http://127.0.0.1:9", timeout=5).reset()
    assert failed.value.code == "CONNECTION_FAILED"


def test_a_missing_extra_is_a_typed_error_naming_it(monkeypatch):
    import sys

    from tooltrap.envs.core import EnvUsageError
    from tooltrap.server import ServerConfig, create_app

    monkeypatch.setitem(sys.modules, "uvicorn", None)  # an import of it now fails, as when not installed
    with pytest.raises(EnvUsageError, match=r"pip install 'tooltrap\[server\]'"):
        create_app(ServerConfig(ENV))
    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(EnvUsageError, match=r"pip install 'tooltrap\[server\]'"):
        Client("http://127.0.0.1:8000")
