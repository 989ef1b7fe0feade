"""A real OpenAI-compatible HTTP server for the tests, built on FastAPI + uvicorn, serving a local
transformers model (the tiny offline one). Tool calls are rendered with the model's chat template and
parsed back from Hermes ``<tool_call>`` tags into OpenAI ``tool_calls``, as vLLM's hermes parser does.

Fault injection for the agent's error paths, chosen by the requested model name:
``flaky-<n>`` fails the first n requests with 503; ``filtered`` ends with finish_reason content_filter;
``notools`` rejects requests that carry ``tools`` with a 400, as servers without tool support do;
``broken`` answers 200 with invalid JSON; ``scripted`` answers with the JSON action in
``$SCRIPTED_ACTION`` (no model).

Run: python tests/llm_server.py MODEL_DIR PORT
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from tooltrap.agents.hf import TransformersModel, _for_template
from tooltrap.wrappers.formats import parse_hermes


def create_app(model_dir: str) -> FastAPI:
    app = FastAPI()
    backend = TransformersModel(model_dir)
    lock = threading.Lock()  # one generate at a time on the CPU model
    counters: dict[str, int] = {}

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "tiny", "object": "model"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        body = await request.json()
        name = body.get("model", "tiny")
        counters[name] = counters.get(name, 0) + 1
        if name.startswith("flaky-") and counters[name] <= int(name.split("-")[1]):
            return JSONResponse({"error": {"message": "overloaded"}}, status_code=503)
        if name == "notools" and body.get("tools"):
            return JSONResponse(
                {"error": {"message": "tools are not supported by this model"}}, status_code=400
            )
        if name == "broken":
            return PlainTextResponse("{not json", status_code=200)
        if name == "filtered":
            message = {"role": "assistant", "content": ""}
            return _completion(name, message, "content_filter")
        if name == "scripted":
            call = json.loads(os.environ["SCRIPTED_ACTION"])
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_0",
                        "type": "function",
                        "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                    }
                ],
            }
            return _completion(name, message, "tool_calls")
        messages = [_for_template(m) for m in body["messages"]]
        with lock:
            text = backend.generate(
                [messages],
                [body.get("tools") or []],
                max_new_tokens=int(body.get("max_tokens", 64)),
                temperature=float(body.get("temperature", 0.0)),
            )[0]
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
    uvicorn.run(create_app(sys.argv[1]), host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
