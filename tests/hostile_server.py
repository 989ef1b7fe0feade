"""A hostile OpenAI-compatible server for the tests and ``scripts/hostile_server.py`` (FastAPI + uvicorn,
no model): the requested model name picks how it misbehaves.

``deep`` a 100,000-deep JSON reply; ``bignum`` a 5,000-digit number in the reply; ``bigargs`` a
5,000-digit number inside the tool-call arguments string; ``content-number`` / ``content-list`` content
as a number / a list of numbers; ``calls-number`` ``tool_calls: 5``; ``message-list`` the message as a
list; ``huge`` a reply of 1 GB, streamed lazily; ``drip`` a valid reply one byte every 50 ms;
``silent`` accepts and answers a valid call only after 30 s (far past any test's timeout: a client that
waited it out would score a model outcome, not a timeout); ``ok`` a valid ``respond`` call.

Also: ``not-json`` an HTML error page with status 200; ``wrong-shape`` JSON without ``choices``;
``empty-choices`` ``choices: []``; ``storm-500`` / ``storm-503`` / ``storm-429`` that status on every
request; ``http-400`` a 400 (not retried); ``filtered`` finish_reason ``content_filter``; ``cut`` a
valid reply whose body stops half-way (the connection closes early); ``surrogate-content`` content
``"hi \\ud800"``; ``surrogate-bytes`` the same surrogate as raw bytes (``ED A0 80``, which
``json.loads`` decodes with ``surrogatepass``); ``control-content`` NUL and other control characters;
``mb-content`` 1 MB of text; ``surrogate-args`` / ``bad-args`` / ``empty-args`` a call of the request's
first tool with a string parameter whose arguments hold a lone surrogate escape / are not JSON (an
invalid ``\\x`` escape) / are ``""``.

``script:<base64url JSON>`` plays a list of turns: the n-th assistant turn of the conversation (counted
in the request) is turn n, the last repeating (:func:`script_model` builds the name). A turn is
``{"content": TEXT, "calls": [{"name": ..., "arguments": {...}} or {"name": ..., "arguments_text":
"..."}], "encoding": "surrogatepass"}`` (all optional); a string ``"$KIND"`` anywhere in it is the hostile
text :data:`TEXTS` ``[KIND]``. Replies are JSON with ASCII escapes, as most servers write them, or raw
UTF-8 bytes with surrogates passed through (``"encoding": "surrogatepass"``).

Under ``/healthy/v1`` every model name gets a plain-text answer: a rerun of a hostile run's command with
``--base-url .../healthy/v1`` (the same agent behind another address) retries its system outcomes.
``GET /v1/counts`` says how many requests each model name made (``healthy:NAME`` under ``/healthy``); a
name ``KIND#TAG`` gets ``KIND``'s replies and its own count.

:class:`RawServer` answers at the socket level what an HTTP framework cannot send: ``/reset/v1`` resets
the connection (RST) once the request is read; ``/drip-headers/v1`` sends the status line and headers one
byte every 100 ms.

Run: python tests/hostile_server.py PORT  (or ``fd:N``, a listening socket: tests/serving.py)
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import struct
import sys
import threading
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse


def _reply(message: Any) -> bytes:
    return json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).encode()


#: the hostile texts a script turn names as "$KIND"
TEXTS: dict[str, str] = {
    "high": "hi \ud800 there",  # a lone high surrogate
    "low": "lo \udc00 w",  # a lone low surrogate
    "nul": "nul \x00 end",
    "control": "ctl \x01\x07\x08\x0b\x1b\x7f \u2028\u202e end",
    "emoji": "ok \U0001f642 then \ud83d lone",  # a valid emoji beside a lone half of one
    "mb": "x" * 2**20,  # 1 MB
}


def script_model(turns: list[dict[str, Any]]) -> str:
    """The model name that makes the server play ``turns`` (see the module docstring)."""
    return "script:" + base64.urlsafe_b64encode(json.dumps(turns).encode()).decode()


def _render(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("$") and value[1:] in TEXTS:
        return TEXTS[value[1:]]
    if isinstance(value, dict):
        return {k: _render(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v) for v in value]
    return value


def _scripted(name: str, messages: list[dict[str, Any]]) -> Response:
    turns = json.loads(base64.urlsafe_b64decode(name[len("script:") :]))
    turn = turns[min(sum(m.get("role") == "assistant" for m in messages), len(turns) - 1)]
    message: dict[str, Any] = {"role": "assistant", "content": _render(turn.get("content"))}
    calls = []
    for i, call in enumerate(turn.get("calls", [])):
        arguments = call.get("arguments_text")
        if arguments is None:
            arguments = json.dumps(_render(call.get("arguments", {})))
        calls.append(
            {"id": f"c{i}", "type": "function", "function": {"name": call["name"], "arguments": arguments}}
        )
    if calls:
        message["tool_calls"] = calls
    reply = {
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}]
    }
    if turn.get("encoding") == "surrogatepass":
        body = json.dumps(reply, ensure_ascii=False).encode("utf-8", "surrogatepass")
    else:
        body = json.dumps(reply).encode()
    return Response(body, media_type="application/json")


def _text_parameter(tools: list[dict[str, Any]]) -> tuple[str, str]:
    """The request's first tool with a string parameter, and that parameter (required ones first)."""
    for tool in tools:
        function = tool.get("function", {})
        parameters = function.get("parameters", {})
        properties = parameters.get("properties", {})
        names = [*parameters.get("required", []), *properties]
        for name in names:
            if properties.get(name, {}).get("type") == "string":
                return function["name"], name
    return "respond", "message"


def _call(body: dict[str, Any], arguments: str) -> bytes:
    name, _ = _text_parameter(body.get("tools") or [])
    call = {"id": "c0", "type": "function", "function": {"name": name, "arguments": arguments}}
    return _reply({"role": "assistant", "content": None, "tool_calls": [call]})


RESPOND = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "c0", "type": "function", "function": {"name": "respond", "arguments": '{"message": "done"}'}}
    ],
}


def create_app() -> FastAPI:
    app = FastAPI()
    #: requests by model name ("healthy:" + name under /healthy), read at GET /v1/counts
    counts: dict[str, int] = {}

    @app.post("/healthy/v1/chat/completions")
    async def healthy(request: Request) -> Any:
        name = "healthy:" + str((await request.json()).get("model", ""))
        counts[name] = counts.get(name, 0) + 1
        return Response(_reply({"role": "assistant", "content": "I could not finish this request."}))

    @app.get("/v1/counts")
    async def read_counts() -> dict[str, int]:
        return counts

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        body = await request.json()
        full = str(body.get("model", ""))
        counts[full] = counts.get(full, 0) + 1
        name = full.partition("#")[0]  # "KIND#anything": KIND's reply, counted apart
        reply = _more(name, body)
        if reply is not None:
            return reply
        if name == "deep":
            return Response(
                b'{"choices": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", media_type="application/json"
            )
        if name == "bignum":
            return Response(
                b'{"choices": [{"message": {"content": ' + b"9" * 5000 + b"}}]}",
                media_type="application/json",
            )
        if name == "bigargs":
            call = {"name": "respond", "arguments": '{"message": ' + "9" * 5000 + "}"}
            return Response(
                _reply(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [{"id": "c", "type": "function", "function": call}],
                    }
                )
            )
        if name == "content-number":
            return Response(_reply({"role": "assistant", "content": 5}))
        if name == "content-list":
            return Response(_reply({"role": "assistant", "content": [1, 2, 3]}))
        if name == "calls-number":
            return Response(_reply({"role": "assistant", "content": None, "tool_calls": 5}))
        if name == "message-list":
            return Response(_reply([{"role": "assistant", "content": "hi"}]))
        if name == "huge":

            async def gigabyte():
                yield b'{"choices": [{"message": {"role": "assistant", "content": "'
                chunk = b"x" * 2**20
                for _ in range(1024):
                    yield chunk

            return StreamingResponse(gigabyte(), media_type="application/json")
        if name == "drip":

            async def drip():
                for byte in _reply(RESPOND):
                    await asyncio.sleep(0.05)
                    yield bytes([byte])

            return StreamingResponse(drip(), media_type="application/json")
        if name == "silent":
            await asyncio.sleep(30)
        return Response(_reply(RESPOND), media_type="application/json")

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"data": []}

    return app


def _more(name: str, body: dict[str, Any]) -> Response | None:
    """The replies added for issue 24 (see the module docstring); None for the others."""
    json_type = "application/json"
    if name.startswith("script:"):
        return _scripted(name, body.get("messages", []))
    if name == "not-json":
        return Response(b"<html><body>502 Bad Gateway</body></html>", media_type="text/html")
    if name == "wrong-shape":
        return Response(json.dumps({"result": {"text": "hi"}}).encode(), media_type=json_type)
    if name == "empty-choices":
        return Response(json.dumps({"choices": []}).encode(), media_type=json_type)
    if name.startswith("storm-"):
        status = int(name.split("-")[1])
        headers = {"Retry-After": "1"} if status == 429 else {}
        return Response(b'{"error": {"message": "try later"}}', status, headers, json_type)
    if name == "http-400":
        return Response(b'{"error": {"message": "bad request"}}', 400, media_type=json_type)
    if name == "filtered":
        reply = {
            "choices": [{"message": {"role": "assistant", "content": ""}, "finish_reason": "content_filter"}]
        }
        return Response(json.dumps(reply).encode(), media_type=json_type)
    if name == "cut":
        whole = _reply({"role": "assistant", "content": "a reply that never ends"})
        # the declared length is the whole reply's: the server closes the connection half-way
        return _Cut(whole[: len(whole) // 2], len(whole))
    if name in ("surrogate-content", "surrogate-bytes"):
        reply = {
            "choices": [{"message": {"role": "assistant", "content": "hi \ud800"}, "finish_reason": "stop"}]
        }
        if name == "surrogate-bytes":
            return Response(
                json.dumps(reply, ensure_ascii=False).encode("utf-8", "surrogatepass"), media_type=json_type
            )
        return Response(json.dumps(reply).encode(), media_type=json_type)
    if name == "control-content":
        return Response(_reply({"role": "assistant", "content": TEXTS["nul"] + TEXTS["control"]}))
    if name == "mb-content":
        return Response(_reply({"role": "assistant", "content": TEXTS["mb"]}))
    if name in ("surrogate-args", "bad-args", "empty-args"):
        _, parameter = _text_parameter(body.get("tools") or [])
        arguments = {
            "surrogate-args": json.dumps({parameter: "\ud800"}),
            "bad-args": '{"' + parameter + '": "\\x41 \\ud800"',
            "empty-args": "",
        }[name]
        return Response(_call(body, arguments), media_type=json_type)
    return None


class _Cut(Response):
    """A response that declares ``length`` bytes, sends ``head`` and closes."""

    def __init__(self, head: bytes, length: int):
        super().__init__(head, media_type="application/json")
        self.headers["content-length"] = str(length)


class RawServer:
    """Hostile answers below HTTP (see the module docstring), on a loopback port in a daemon thread:
    ``http://127.0.0.1:{port}/reset/v1`` and ``.../drip-headers/v1``. Ready once constructed (the socket
    listens before the constructor returns).

    Args:
        drip_seconds: How long the headers of ``/drip-headers/`` take to arrive in all.
    """

    def __init__(self, drip_seconds: float = 8.0):
        self.drip_seconds = drip_seconds
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port: int = self.sock.getsockname()[1]
        #: requests by base path (``/reset/TAG``), as :meth:`url` built it
        self.requests: dict[str, int] = {}
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def url(self, kind: str, tag: str = "") -> str:
        """The base URL of ``kind`` (``reset`` or ``drip-headers``); a ``tag`` counts its requests apart."""
        return f"http://127.0.0.1:{self.port}/{kind}{'/' + tag if tag else ''}/v1"

    def count(self, kind: str, tag: str = "") -> int:
        return self.requests.get(f"/{kind}{'/' + tag if tag else ''}", 0)

    def close(self) -> None:
        self.sock.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                head += chunk
            header, _, body = head.partition(b"\r\n\r\n")
            path = header.split(b" ", 2)[1].decode()
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in header.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            while len(body) < length:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                body += chunk
            if path.endswith("/models"):
                conn.sendall(b'HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\n{"data": []}')
                return
            base = path.partition("/v1/")[0]
            with self._lock:
                self.requests[base] = self.requests.get(base, 0) + 1
            if path.startswith("/reset/"):
                # SO_LINGER with a zero timeout: close() sends RST instead of FIN
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
            reply = _reply({"role": "assistant", "content": "late but fine"})
            headers = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-pad: " + b"p" * 60 + b"\r\n"
            headers += b"content-length: " + str(len(reply)).encode() + b"\r\n\r\n"
            pause = self.drip_seconds / len(headers)
            for byte in headers:
                conn.sendall(bytes([byte]))
                time.sleep(pause)
            conn.sendall(reply)
        except OSError:  # the client gave up: what a timeout looks like from here
            pass
        finally:
            conn.close()


if __name__ == "__main__":
    from serving import serve  # run as a script: tests/ is on the path

    serve(create_app(), sys.argv[1])
