"""A real OpenAI-compatible HTTP server for the tests, built on FastAPI + uvicorn, that answers as a model
would without running one: the requested model name scripts the reply, so every test gets the
completion it needs deterministically, in milliseconds, even on a loaded machine. Tool calls travel the
way vLLM's hermes parser sends them: the scripted completion's Hermes ``<tool_call>`` tags are parsed
into OpenAI ``tool_calls`` when the request carries ``tools``, and stay plain content otherwise.

Replies, chosen by the requested model name:
``emit:<C1>||<C2>||...`` the assistant's n-th turn of the conversation (counted by the assistant messages
in the request) is completion Cn, the last one repeating; ``say:<TEXT>`` the literal content ``<TEXT>``
with finish_reason stop, never parsed (judges); ``filtered`` finish_reason content_filter; ``broken``
200 with invalid JSON.
Faults, a prefix before ``+`` and the reply (``flaky-2+emit:...``): ``flaky-<n>`` fails the first n
requests with 503; ``notools`` rejects requests that carry ``tools`` with a 400, as servers without tool
support do. A fault without a reply fails the same way and answers ``broken`` after.

Run: python tests/llm_server.py PORT
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from typing import TYPE_CHECKING, Any

from tooltrap.wrappers.formats import parse_hermes

if TYPE_CHECKING:  # the tests import the helpers below without the server's dependencies
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

TURN_SEPARATOR = "||"


def scripted_model(*completions: str) -> str:
    """The model name that makes the server complete the n-th assistant turn with ``completions[n]``
    (the last one repeating)."""
    if any(TURN_SEPARATOR in c for c in completions):
        raise ValueError(f"a completion may not contain {TURN_SEPARATOR!r}: it separates the turns")
    return "emit:" + TURN_SEPARATOR.join(completions)


def hermes_call(name: str, **arguments: Any) -> str:
    """A completion holding one call in Hermes tags, as a Qwen-style model writes it."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def create_app() -> FastAPI:
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse, PlainTextResponse

    app = FastAPI()
    counters: dict[str, int] = {}

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "tiny", "object": "model"}]}

    @app.post("/v1/chat/completions")
    def chat(body: dict[str, Any]):  # a sync handler: FastAPI runs it in its thread pool
        name = body.get("model", "tiny")
        counters[name] = counters.get(name, 0) + 1
        fault, plus, reply = name.partition("+")
        if not plus:
            fault, reply = name, name
        if fault.startswith("flaky-") and counters[name] <= int(fault.split("-")[1]):
            return JSONResponse({"error": {"message": "overloaded"}}, status_code=503)
        if fault == "notools" and body.get("tools"):
            return JSONResponse(
                {"error": {"message": "tools are not supported by this model"}}, status_code=400
            )
        if reply == "filtered":
            return _completion(name, {"role": "assistant", "content": ""}, "content_filter")
        if reply.startswith("say:"):
            return _completion(name, {"role": "assistant", "content": reply[len("say:") :]}, "stop")
        if not reply.startswith("emit:"):  # "broken", and a fault with nothing scripted after it
            return PlainTextResponse("{not json", status_code=200)
        script = reply[len("emit:") :].split(TURN_SEPARATOR)
        turn = sum(m.get("role") == "assistant" for m in body["messages"])
        text = script[min(turn, len(script) - 1)]
        calls = parse_hermes(text) if body.get("tools") else []
        if calls:
            tool_calls = [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                }
                for i, c in enumerate(calls)
            ]
            return _completion(
                name, {"role": "assistant", "content": None, "tool_calls": tool_calls}, "tool_calls"
            )
        return _completion(name, {"role": "assistant", "content": text}, "stop")

    return app


def _completion(model: str, message: dict[str, Any], finish_reason: str) -> JSONResponse:
    from fastapi.responses import JSONResponse

    return JSONResponse(
        {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        }
    )


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(create_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
