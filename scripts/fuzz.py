"""Fuzz a tooltrap env with mixed actions: valid calls, lists of calls, and their mutations (truncated
JSON, numbers past Python's digit limit, deep nesting, lone surrogates, wrong types, unknown tools and
keys, oversized strings and lists, prose, non-strings).

Prints actions/s, uncaught exceptions by type, state changes after failed calls (a step whose every
call failed must leave the state byte-identical), the slowest step, and the growth of peak memory.
Exit status 1 when there was any uncaught exception or any such state change, a step slower than
MAX_STEP_S, or peak memory grown by MAX_RSS_GROWTH_MB or more (CI runs the 100,000-action version once;
tests/engine/test_fuzz.py runs a sample).

Usage: python scripts/fuzz.py [--actions 100000] [--workers 2] [--seed 0] [--env SABench-v0]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
import traceback
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import gymnasium as gym

import tooltrap

gym.register_envs(tooltrap)

MAX_STEP_S = 1.0  # a hostile action must not stall the env (deep nesting, huge numbers, 30k-char strings)
MAX_RSS_GROWTH_MB = 200  # nor leak: 100k steps over one env per worker

WORDS = ("ok", "please", "status", "Ünïcödé ✓", "", " ", "a" * 300, "\u202e\u0000", "🙂" * 10, "null")


def _ids(env: Any) -> list[str]:
    return [i for c in env.unwrapped.state.collections() for i in env.unwrapped.state.collection(c)] or [
        "x_1"
    ]


def _value(rng: random.Random, name: str, schema: dict[str, Any], ids: list[str]) -> Any:
    if "enum" in schema and rng.random() < 0.9:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice(kind)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "integer":
        return rng.choice((1, 2, 5, 20, 0, -1, 10**6))
    if kind == "number":
        return rng.choice((0.5, 1.0, -3.2, 1e308))
    if kind == "array":
        n = rng.choice((0, 1, 2, 3, 60))
        return [_value(rng, name, schema.get("items", {"type": "string"}), ids) for _ in range(n)]
    if name.endswith("_id") or name == "target":
        return rng.choice(ids)
    if name in ("to", "cc", "emails", "attendees"):
        return f"{rng.choice(('ana', 'bo', 'x'))}@{rng.choice(('example.com', 'client.io'))}"
    if "date" in name:
        return rng.choice(("2026-03-02", "2026-13-40", "tomorrow"))
    if name in ("start", "end"):
        return rng.choice(("09:00", "25:61", "noon"))
    return rng.choice(WORDS)


def _call(rng: random.Random, tools: list[dict[str, Any]], ids: list[str]) -> dict[str, Any]:
    fn = rng.choice(tools)["function"]
    props = fn["parameters"].get("properties", {})
    required = set(fn["parameters"].get("required", []))
    arguments = {n: _value(rng, n, s, ids) for n, s in props.items() if n in required or rng.random() < 0.4}
    return {"name": fn["name"], "arguments": arguments}


def _mutate(rng: random.Random, call: dict[str, Any]) -> Any:
    text = json.dumps(call, ensure_ascii=False)
    pick = rng.randrange(16)
    if pick == 0:
        return text[: rng.randrange(len(text))]
    if pick == 1:
        digits = "9" * rng.choice((20, 4301, 5000))
        return '{"name": "' + call["name"] + '", "arguments": {"limit": ' + digits + "}}"
    if pick == 2:
        return "[" * rng.choice((50, 1000, 30_000)) + text
    if pick == 3:
        return json.dumps({**call, "arguments": {k: "\ud800" + str(v) for k, v in call["arguments"].items()}})
    if pick == 4:
        return json.dumps({**call, "extra": 1})
    if pick == 5:
        return json.dumps({**call, "name": call["name"][:-1]})
    if pick == 6:
        return json.dumps({**call, "arguments": json.dumps(call["arguments"])})
    if pick == 7:
        return json.dumps({**call, "arguments": rng.choice(([1, 2], "not json {", 5, None))})
    if pick == 8:
        return json.dumps(
            {
                k: (v if k != "arguments" else {a: rng.choice((1, [], {}, None)) for a in v})
                for k, v in call.items()
            }
        )
    if pick == 9:
        return json.dumps([call] * rng.choice((0, 9, 50)))
    if pick == 10:
        return "I think I should " + text
    if pick == 11:
        return rng.choice((None, 5, b"bytes", ["list"], {"name": "x"}))
    if pick == 12:
        return json.dumps({"name": call["name"], "arguments": {k: "x" * 30_000 for k in call["arguments"]}})
    if pick == 13:
        return text.replace('"', "'")
    if pick == 14:
        return json.dumps({"name": 5, "arguments": {}})
    return text + rng.choice(("}", "]", ",", "\x00"))


def _terminals(info: dict[str, Any]) -> set[str]:
    return set(
        info.get("terminal_tools") or {n for n, k in info.get("tool_kinds", {}).items() if k == "terminal"}
    )


def _worker(job: tuple[int, int, str]) -> dict[str, Any]:
    n, seed, env_id = job
    rng = random.Random(seed)
    env = gym.make(env_id)
    base = env.unwrapped
    rss_start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    exceptions: Counter[str] = Counter()
    samples: dict[str, str] = {}
    state_changes = 0
    slowest = (0.0, "")
    steps = 0
    _, info = env.reset(seed=seed)
    tools, ids = info["tools"], _ids(env)
    terminals = _terminals(info)
    start = time.perf_counter()
    for _ in range(n):
        call = _call(rng, [t for t in tools if t["function"]["name"] not in terminals] or tools, ids)
        roll = rng.random()
        if roll < 0.03:
            action: Any = json.dumps(
                _call(rng, [t for t in tools if t["function"]["name"] in terminals], ids)
            )
        elif roll < 0.40:
            action = json.dumps(call, ensure_ascii=False)
        elif roll < 0.50:
            action = json.dumps([_call(rng, tools, ids) for _ in range(rng.randint(1, 8))])
        else:
            action = _mutate(rng, call)
        t0 = time.perf_counter()
        try:
            before = base.state.hash()
            t0 = time.perf_counter()
            _, _, terminated, truncated, info = env.step(action)
            elapsed = time.perf_counter() - t0
            after = base.state.hash()
        except Exception as exc:  # an uncaught exception (in a step or a state hash) is what it looks for
            kind = type(exc).__name__
            exceptions[kind] += 1
            samples.setdefault(kind, f"{str(action)[:200]!r}\n{traceback.format_exc()[-1500:]}")
            _, info = env.reset(seed=rng.randrange(10**6))
            tools, ids, terminals = info["tools"], _ids(env), _terminals(info)
            continue
        steps += 1
        if elapsed > slowest[0]:
            slowest = (elapsed, str(action)[:120])
        step = base.trace.steps[-1]
        if (step.error is not None or all(not c.ok for c in step.calls)) and after != before:
            state_changes += 1
        if terminated or truncated:
            _, info = env.reset(seed=rng.randrange(10**6))
            tools, ids, terminals = info["tools"], _ids(env), _terminals(info)
    seconds = time.perf_counter() - start
    rss_end = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "actions": n,
        "steps": steps,
        "seconds": seconds,
        "exceptions": dict(exceptions),
        "samples": samples,
        "state_changes_after_failed_calls": state_changes,
        "slowest_step_s": slowest[0],
        "slowest_action": slowest[1],
        "rss_growth_mb": (rss_end - rss_start) / 1024,
    }


def run_fuzz(actions: int, workers: int = 2, seed: int = 0, env_id: str = "SABench-v0") -> dict[str, Any]:
    """Run ``actions`` fuzzed actions over ``workers`` processes; the merged figures."""
    shares = [actions // workers + (1 if i < actions % workers else 0) for i in range(workers)]
    jobs = [(share, seed * 1000 + i, env_id) for i, share in enumerate(shares)]
    start = time.perf_counter()
    if workers == 1:
        parts = [_worker(jobs[0])]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(_worker, jobs))
    wall = time.perf_counter() - start
    exceptions: Counter[str] = Counter()
    samples: dict[str, str] = {}
    for p in parts:
        exceptions.update(p["exceptions"])
        samples.update(p["samples"])
    slowest = max(parts, key=lambda p: p["slowest_step_s"])
    return {
        "env": env_id,
        "actions": actions,
        "workers": workers,
        "wall_s": wall,
        "actions_per_s": actions / wall,
        "exceptions": dict(exceptions),
        "exception_samples": samples,
        "state_changes_after_failed_calls": sum(p["state_changes_after_failed_calls"] for p in parts),
        "slowest_step_s": slowest["slowest_step_s"],
        "slowest_action": slowest["slowest_action"],
        "rss_growth_mb": max(p["rss_growth_mb"] for p in parts),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--actions", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--env", default="SABench-v0")
    args = parser.parse_args()
    out = run_fuzz(args.actions, args.workers, args.seed, args.env)
    print(
        f"{out['env']}: {out['actions']:,} actions on {out['workers']} workers in {out['wall_s']:.1f} s "
        f"({out['actions_per_s']:,.0f} actions/s)"
    )
    print(f"  uncaught exceptions: {sum(out['exceptions'].values())} {out['exceptions'] or ''}")
    print(f"  state changes after failed calls: {out['state_changes_after_failed_calls']}")
    print(f"  slowest step: {1000 * out['slowest_step_s']:.1f} ms ({out['slowest_action'][:80]!r})")
    print(f"  peak memory growth: {out['rss_growth_mb']:.0f} MB")
    for kind, sample in out["exception_samples"].items():
        print(f"--- {kind}\n{sample}")
    print(json.dumps({k: v for k, v in out.items() if k != "exception_samples"}))
    failed = (
        out["exceptions"]
        or out["state_changes_after_failed_calls"]
        or out["slowest_step_s"] >= MAX_STEP_S
        or out["rss_growth_mb"] >= MAX_RSS_GROWTH_MB
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
