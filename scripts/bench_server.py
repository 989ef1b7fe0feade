"""Load and leak check of ``tooltrap serve``: start a real server process on loopback, measure the
sessions per second and step latency at 1, 8 and 64 concurrent clients, then open and close many
sessions and fail when the server's memory grows.

1. load: for 1, 8 and 64 concurrent clients (``--concurrency``), each plays whole episodes over its own
   WebSocket session (connect, reset, the gold calls of a task, close), for ``--load-sessions`` episodes
   per level; prints a table of sessions/s and p50/p99 step latency (send to reply, client side);
2. leak: ``--sessions`` sessions (default 10,000), each connect, reset, one step, close, 8 at a time,
   printing the server's RSS after warm-up, in the middle and at the end; exits 1 if the RSS grew by more
   than ``--rss-bound-mib`` (default 32 MiB) after warm-up.

    python scripts/bench_server.py                      # SABench-Calendar-v0, the defaults
    python scripts/bench_server.py EpiSEM-Finance-v0 --sessions 2000 --load-sessions 100

Times are this machine's, under whatever else it runs: compare levels, not absolute numbers.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

CONCURRENCY = (1, 8, 64)
#: the leak phase's sessions in flight, and how many sessions warm the server up before the first RSS
LEAK_CONCURRENCY, WARMUP = 8, 200


@contextmanager
def served(env_id: str, max_sessions: int):
    """A ``tooltrap serve`` process on a loopback socket bound here; yields (base URL, pid)."""
    with socket.socket() as sock, tempfile.TemporaryFile() as errors:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1024)
        port = sock.getsockname()[1]
        args = [sys.executable, "-m", "tooltrap", "serve", env_id, "--max-sessions", str(max_sessions)]
        proc = subprocess.Popen(
            [*args, "--fd", str(sock.fileno())],
            pass_fds=[sock.fileno()],
            stdout=subprocess.PIPE,
            stderr=errors,
            cwd=tempfile.gettempdir(),
        )
        if not proc.stdout.readline().startswith(b"serving "):
            proc.kill()
            proc.wait()
            errors.seek(0)
            sys.exit(f"tooltrap serve exited: {errors.read().decode(errors='replace')[-2000:]}")
        try:
            yield f"ws://127.0.0.1:{port}/ws", proc.pid
        finally:
            proc.kill()
            proc.wait()


def rss_mib(pid: int) -> float:
    """A process's resident set size, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def episodes(env_id: str, n: int) -> list[tuple[dict, list[str]]]:
    """Up to ``n`` (reset data, gold action texts) pairs, computed in process, cycled by the clients."""
    import gymnasium as gym

    import tooltrap

    gym.register_envs(tooltrap)
    env = gym.make(env_id)
    out = []
    for task_id in list(env.unwrapped.tasks.ids)[:n]:
        env.reset(seed=0, options={"task_id": task_id})
        gold = env.unwrapped.task.gold_for(env.unwrapped.episode_variant)
        out.append(({"seed": 0, "task_id": task_id}, [call.to_action() for call in gold]))
    env.close()
    return out


async def play(url: str, reset: dict, actions: list[str], latencies: list[float] | None) -> None:
    from websockets.asyncio.client import connect

    async with connect(url, max_size=None) as ws:
        messages = [
            {"type": "reset", "data": reset},
            *({"type": "step", "data": {"text": a}} for a in actions),
        ]
        for message in messages:
            start = time.perf_counter()
            await ws.send(json.dumps(message))
            reply = json.loads(await ws.recv())
            if latencies is not None and message["type"] == "step":
                latencies.append(time.perf_counter() - start)
            if reply["type"] == "error":
                raise RuntimeError(f"server error: {reply['data']}")
            if reply["data"].get("done"):
                break
        await ws.send(json.dumps({"type": "close"}))


async def run_level(
    url: str, work: list[tuple[dict, list[str]]], clients: int, total: int
) -> tuple[float, list[float]]:
    """``total`` episodes by ``clients`` concurrent clients: (sessions/s, step latencies)."""
    latencies: list[float] = []
    counter = iter(range(total))

    async def client() -> None:
        for i in counter:
            reset, actions = work[i % len(work)]
            await play(url, reset, actions, latencies)

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return total / (time.perf_counter() - start), latencies


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


async def leak_check(
    url: str, pid: int, work: list[tuple[dict, list[str]]], sessions: int
) -> list[tuple[str, int, float]]:
    """Short sessions (reset, one step) ``LEAK_CONCURRENCY`` at a time: the RSS after warm-up, in the
    middle, at the end."""
    marks = {WARMUP: "after warm-up", WARMUP + sessions // 2: "middle", WARMUP + sessions: "end"}
    readings: list[tuple[str, int, float]] = []
    done = 0
    counter = iter(range(WARMUP + sessions))

    async def client() -> None:
        nonlocal done
        for i in counter:
            reset, actions = work[i % len(work)]
            await play(url, reset, actions[:1], None)
            done += 1

    async def watch() -> None:
        pending = sorted(marks)
        while pending:
            if done >= pending[0]:
                readings.append((marks[pending[0]], done, rss_mib(pid)))
                pending.pop(0)
            else:
                await asyncio.sleep(0.01)

    await asyncio.gather(watch(), *(client() for _ in range(LEAK_CONCURRENCY)))
    return readings


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("env_id", nargs="?", default="SABench-Calendar-v0")
    parser.add_argument(
        "--sessions", type=int, default=10_000, help="sessions of the RSS check (default 10000)"
    )
    parser.add_argument(
        "--load-sessions", type=int, default=256, help="episodes per concurrency level (default 256)"
    )
    parser.add_argument(
        "--concurrency", default=",".join(map(str, CONCURRENCY)), help="client counts (default 1,8,64)"
    )
    parser.add_argument("--rss-bound-mib", type=float, default=32.0, help="allowed RSS growth after warm-up")
    args = parser.parse_args(argv)
    levels = [int(c) for c in args.concurrency.split(",")]
    work = episodes(args.env_id, 64)
    with served(args.env_id, max_sessions=max(levels) + LEAK_CONCURRENCY) as (url, pid):
        print(f"{args.env_id}: {len(work)} gold episodes cycled; server pid {pid}, {os.cpu_count()} CPUs")
        print(
            f"{'clients':>8} {'sessions':>9} {'sessions/s':>11} {'steps':>7} {'p50 step ms':>12} {'p99 step ms':>12}"
        )
        for clients in levels:
            rate, latencies = asyncio.run(run_level(url, work, clients, args.load_sessions))
            p50, p99 = (1000 * percentile(latencies, q) for q in (50, 99))
            print(
                f"{clients:>8} {args.load_sessions:>9} {rate:>11.1f} {len(latencies):>7} {p50:>12.2f} {p99:>12.2f}"
            )
        readings = asyncio.run(leak_check(url, pid, work, args.sessions))
    print(f"RSS over {args.sessions} sessions (reset + one step each, {LEAK_CONCURRENCY} at a time):")
    for label, count, rss in readings:
        print(f"  {label:>14}: {count:>6} sessions  {rss:8.1f} MiB")
    growth = readings[-1][2] - readings[0][2]
    verdict = "ok" if growth <= args.rss_bound_mib else "LEAK?"
    print(f"  growth after warm-up: {growth:+.1f} MiB (bound {args.rss_bound_mib:g} MiB): {verdict}")
    return 0 if growth <= args.rss_bound_mib else 1


if __name__ == "__main__":
    raise SystemExit(main())
