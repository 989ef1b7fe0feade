"""A hostile OpenAI-compatible server for the tests (FastAPI + uvicorn, no model): the requested model name
picks how it misbehaves.

``deep`` a 100,000-deep JSON reply; ``bignum`` a 5,000-digit number in the reply; ``bigargs`` a
5,000-digit number inside the tool-call arguments string; ``content-number`` / ``content-list`` content
as a number / a list of numbers; ``calls-number`` ``tool_calls: 5``; ``message-list`` the message as a
list; ``huge`` a reply of 1 GB, streamed lazily; ``drip`` a valid reply one byte every 50 ms;
``silent`` accepts and answers a valid call only after 30 s (far past any test's timeout: a client that
waited it out would score a model outcome, not a timeout); ``ok`` a valid ``respond`` call.

Run: python tests/hostile_server.py PORT  (or ``fd:N``, a listening socket: tests/serving.py)
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse


def _reply(message: Any) -> bytes:
    return json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).encode()


RESPOND = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "c0", "type": "function", "function": {"name": "respond", "arguments": '{"message": "done"}'}}
    ],
}


def create_app() -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        body = await request.json()
        name = body.get("model", "")
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


if __name__ == "__main__":
    from serving import serve  # run as a script: tests/ is on the path

    serve(create_app(), sys.argv[1])
