"""A real OpenAI-compatible HTTP server for the tests, built on FastAPI + uvicorn, serving a local
transformers model (the tiny offline one), with micro-batched generation. Tool calls are rendered with the model's chat template and
parsed back from Hermes ``<tool_call>`` tags into OpenAI ``tool_calls``, as vLLM's hermes parser does.

Fault injection for the agent's error paths, chosen by the requested model name:
``flaky-<n>`` fails the first n requests with 503; ``filtered`` ends with finish_reason content_filter;
``notools`` rejects requests that carry ``tools`` with a 400, as servers without tool support do;
``broken`` answers 200 with invalid JSON; ``scripted`` answers with the JSON action in
``$SCRIPTED_ACTION`` (no model); ``say:<TEXT>`` answers with the literal content ``<TEXT>`` and
finish_reason stop (no model: deterministic judges).

Run: python tests/llm_server.py MODEL_DIR PORT
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
import uuid
from typing import Any

import uvicorn
from fastapi import FastAPI
from fastapi.responses import JSONResponse, PlainTextResponse

from tooltrap.agents.hf import TransformersModel, _for_template
from tooltrap.wrappers.formats import parse_hermes


class MicroBatcher:
    """Collects concurrent requests for a few milliseconds and serves them with one batched
    ``generate`` (as vLLM's continuous batching does, in miniature)."""

    def __init__(self, backend: TransformersModel, max_batch: int = 8, window_s: float = 0.005):
        self.backend, self.max_batch, self.window_s = backend, max_batch, window_s
        self.jobs: queue.Queue = queue.Queue()
        threading.Thread(target=self._run, daemon=True).start()

    def submit(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int, temperature: float
    ) -> str:
        done = threading.Event()
        job = {
            "messages": messages,
            "tools": tools,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "done": done,
        }
        self.jobs.put(job)
        done.wait()
        if "error" in job:
            raise job["error"]
        return job["text"]

    def _run(self) -> None:
        while True:
            batch = [self.jobs.get()]
            deadline = time.monotonic() + self.window_s
            while len(batch) < self.max_batch:
                try:
                    batch.append(self.jobs.get(timeout=max(0.0, deadline - time.monotonic())))
                except queue.Empty:
                    break
            groups: dict[tuple[int, float], list[dict[str, Any]]] = {}  # one generate per sampling setting
            for job in batch:
                groups.setdefault((job["max_tokens"], job["temperature"]), []).append(job)
            for (max_tokens, temperature), jobs in groups.items():
                try:
                    texts = self.backend.generate(
                        [j["messages"] for j in jobs],
                        [j["tools"] for j in jobs],
                        max_new_tokens=max_tokens,
                        temperature=temperature,
                    )
                    for job, text in zip(jobs, texts, strict=True):
                        job["text"] = text
                except Exception as exc:  # reported to every waiting request
                    for job in jobs:
                        job["error"] = exc
                for job in jobs:
                    job["done"].set()


def create_app(model_dir: str) -> FastAPI:
    app = FastAPI()
    batcher = MicroBatcher(TransformersModel(model_dir))
    counters: dict[str, int] = {}

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "tiny", "object": "model"}]}

    @app.post("/v1/chat/completions")
    def chat(body: dict[str, Any]):  # a sync handler: FastAPI runs it in its thread pool
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
        if name.startswith("say:"):
            return _completion(name, {"role": "assistant", "content": name[len("say:") :]}, "stop")
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
        text = batcher.submit(
            messages,
            body.get("tools") or [],
            int(body.get("max_tokens", 64)),
            float(body.get("temperature", 0.0)),
        )
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
