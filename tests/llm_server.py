"""A real OpenAI-compatible HTTP server for the tests, built on FastAPI + uvicorn, that answers as a model
would without running one: the requested model name scripts the reply, so every test gets the
completion it needs deterministically, in milliseconds, even on a loaded machine. Tool calls travel the
way vLLM's hermes parser sends them: the completion's Hermes ``<tool_call>`` tags are parsed into
OpenAI ``tool_calls`` when the request carries ``tools``, and stay plain content otherwise. Given
MODEL_DIR it also serves a local transformers model, micro-batched, for any other model name
(scripts/bench_throughput.py); without one such requests get a 500.

Replies, chosen by the requested model name:
``emit:<C1>||<C2>||...`` the assistant's n-th turn of the conversation (counted by the assistant messages
in the request) is completion Cn, the last one repeating; ``say:<TEXT>`` the literal content ``<TEXT>``
with finish_reason stop, never parsed (judges); ``filtered`` finish_reason content_filter; ``broken``
200 with invalid JSON.
Faults, a prefix before ``+`` and the reply (``flaky-2+emit:...``): ``flaky-<n>`` fails the first n
requests with 503; ``notools`` rejects requests that carry ``tools`` with a 400, as servers without tool
support do; ``slow-<ms>`` answers after ``ms`` milliseconds (a model's latency, for throughput scripts). A fault alone fails the same way, then answers from the model.

Run: python tests/llm_server.py [MODEL_DIR] PORT  (or ``fd:N``, a listening socket: tests/serving.py)
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from tooltrap.wrappers.formats import parse_hermes

if TYPE_CHECKING:  # the tests import the helpers below without the server's dependencies
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    from tooltrap.agents.hf import TransformersModel

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


def create_app(model_dir: str | None = None) -> FastAPI:
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse, PlainTextResponse

    app = FastAPI()
    batcher = None
    if (
        model_dir is not None
    ):  # torch and transformers load only for a model: the scripted replies need neither
        from tooltrap.agents.hf import TransformersModel

        batcher = MicroBatcher(TransformersModel(model_dir))
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
        if fault.startswith("slow-"):
            time.sleep(int(fault.split("-")[1]) / 1000)  # a sync handler: one pool thread waits, not the loop
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
        if reply == "broken":
            return PlainTextResponse("{not json", status_code=200)
        if reply.startswith("emit:"):
            script = reply[len("emit:") :].split(TURN_SEPARATOR)
            turn = sum(m.get("role") == "assistant" for m in body["messages"])
            text = script[min(turn, len(script) - 1)]
        elif batcher is not None:
            from tooltrap.agents.hf import _for_template

            text = batcher.submit(
                [_for_template(m) for m in body["messages"]],
                body.get("tools") or [],
                int(body.get("max_tokens", 64)),
                float(body.get("temperature", 0.0)),
            )
        else:
            return JSONResponse({"error": {"message": f"no model is loaded for {name!r}"}}, status_code=500)
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
    from serving import serve  # run as a script: tests/ is on the path

    *model, where = sys.argv[1:]  # [MODEL_DIR] PORT|fd:N
    serve(create_app(*model), where)
