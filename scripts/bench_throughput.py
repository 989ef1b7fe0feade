"""Evaluation throughput (episodes/s) with the tiny offline model at concurrency 1 and 8.

Local transformers agent: concurrency batches the generations of the active episodes into one
``generate`` call. OpenAI-compatible agent: concurrency keeps several requests in flight against a
loopback server (tests/llm_server.py, which runs one generation at a time: a vLLM server would batch
them, so this measures the client side only).

Usage: python scripts/bench_throughput.py [--tasks N] [--model DIR] [--no-http]
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from tooltrap.agents import make_agent
from tooltrap.evaluate import evaluate

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

ENV_KWARGS = {"state_format": "tools_only", "toolset": "target"}


def _serve(model: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = Path(__file__).resolve().parents[1] / "tests" / "llm_server.py"
    proc = subprocess.Popen(
        [sys.executable, str(server), str(model), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


def _rate(env_id: str, agent, tasks: str, concurrency: int, work: Path) -> float:
    out = (
        work
        / f"{agent.describe()['name'].replace('/', '_').replace(':', '_')}-{concurrency}-{time.monotonic_ns()}"
    )
    t0 = time.perf_counter()
    records = evaluate(env_id, agent, out, tasks=tasks, env_kwargs=ENV_KWARGS, concurrency=concurrency)
    return len(records) / (time.perf_counter() - t0)


def main() -> None:
    parser = script_parser(__doc__)
    parser.add_argument("--env", default="SABench-Calendar-v0")
    parser.add_argument(
        "--tasks", default="cal-cascade-*,cal-mis-targeting-*", help="task filter (default: 35 tasks)"
    )
    parser.add_argument("--model", default=None, help="checkpoint (default: build the tiny model)")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--no-http", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tooltrap-throughput-"))
    model = Path(args.model) if args.model else None
    if model is None:
        from tooltrap.training.tiny import build_tiny_model

        model = build_tiny_model(work / "tiny")
    results = {}
    agent = make_agent(f"hf:{model}", max_new_tokens=args.max_new_tokens)
    _rate(args.env, agent, "cal-cascade-dependent-*", 1, work)  # warm caches
    for c in (1, 8):
        results[f"hf_c{c}"] = _rate(args.env, agent, args.tasks, c, work)
    if not args.no_http:
        proc, url = _serve(model)
        try:
            http = make_agent("openai:tiny", base_url=url, max_tokens=args.max_new_tokens, max_concurrency=8)
            for c in (1, 8):
                results[f"http_c{c}"] = _rate(args.env, http, args.tasks, c, work)
        finally:
            proc.terminate()
    print(f"{args.env}, tasks {args.tasks!r}, tiny model, max_new_tokens={args.max_new_tokens}")
    print(
        f"  local transformers, batched: {results['hf_c1']:.2f} ep/s at concurrency 1, {results['hf_c8']:.2f} at 8 ({results['hf_c8'] / results['hf_c1']:.2f}x)"
    )
    if "http_c1" in results:
        print(
            f"  OpenAI-compatible over HTTP: {results['http_c1']:.2f} ep/s at concurrency 1, {results['http_c8']:.2f} at 8 ({results['http_c8'] / results['http_c1']:.2f}x)"
        )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
