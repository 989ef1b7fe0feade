"""What a hostile action costs, as a ratio to an ordinary step of the same env (issue 24).

Usage: python scripts/bench_hostile.py [ENV_ID ...] [--repeat 30]

For each env id (default: one per benchmark), the median CPU time of a step for each kind of hostile
action, divided by the median of ordinary steps (calls drawn as ``scripts/fuzz.py`` draws them, most of
them valid), and, as a control, a valid call of the same size as the largest hostile ones (a 30,000-
character string argument: what parsing and echoing an action of that size costs, whatever it holds).
Then the unknown-id step among 40 to 100,000 records (SABench's calendar inflated), as a ratio to the
40-record one, and did-you-mean alone among 100,000 ids (median, in ms: the target is under 1 ms).

Ratios, not times, are what to compare across machines; exit status 1 when a hostile step's median is
over ``scripts.fuzz.MAX_STEP_S`` or did-you-mean among 100,000 ids is over 1 ms.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

import tooltrap
from tooltrap.envs.core import did_you_mean

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scripts.fuzz import HUGE_INT, MAX_STEP_S, _call, _ids, _terminals  # noqa: E402

gym.register_envs(tooltrap)

DEFAULT_IDS = ("SABench-v0", "EpiSEM-v0", "SentryBench-v0", "AgentProp-v0")
CASCADE = "cal-cascade-dependent-cancel-occurrence-01"

Make = Callable[[random.Random, dict[str, Any], list[str]], str]


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _with(call: dict[str, Any], **arguments: Any) -> str:
    return _compact({"name": call["name"], "arguments": {**call["arguments"], **arguments}})


#: kind -> how to make one such action from a drawn call and the state's ids
HOSTILE: dict[str, Make] = {
    "unknown id": lambda rng, call, ids: _with(
        call, **{next((k for k in call["arguments"] if k.endswith("_id")), "id"): rng.choice(ids) + "x"}
    ),
    "2,000 unknown argument names": lambda rng, call, ids: _with(call, **{f"k{i}": 0 for i in range(2000)}),
    "array of 10,000 zeros": lambda rng, call, ids: _with(call, items=[0] * 10_000),
    "object of 2,000 keys": lambda rng, call, ids: _with(call, query={str(i): i for i in range(2000)}),
    "4,300-digit integer": lambda rng, call, ids: _with(call, count=HUGE_INT),
    "nesting 990 deep": lambda rng, call, ids: (
        '{"name": "' + call["name"] + '", "arguments": {"q": ' + "[" * 990 + "0" + "]" * 990 + "}}"
    ),
    "30,000 opening brackets": lambda rng, call, ids: "[" * 30_000,
    "unknown tool": lambda rng, call, ids: _compact({"name": call["name"] + "s", "arguments": {}}),
    "50 calls in one action": lambda rng, call, ids: _compact([call] * 50),
}
#: the control: a valid call as long as the largest hostile actions
CONTROL = "a valid 30,000-character argument"


def _median_cpu(env: gym.Env, actions: Sequence[str], reset_every: int = 4) -> float:
    times = []
    for i, action in enumerate(actions):
        if i % reset_every == 0:  # (five failed steps in a row end an episode)
            env.reset(seed=i)
        start = time.thread_time()
        _, _, terminated, truncated, _ = env.step(action)
        times.append(time.thread_time() - start)
        if terminated or truncated:
            env.reset(seed=i)
    return statistics.median(times)


def bench_env(env_id: str, repeat: int) -> list[tuple[str, float, float]]:
    """(kind, median seconds, ratio to the ordinary step) for ``env_id``."""
    rng = random.Random(0)
    env = gym.make(env_id)
    _, info = env.reset(seed=0)
    terminals = _terminals(info)
    tools = [t for t in info["tools"] if t["function"]["name"] not in terminals] or info["tools"]
    ids = _ids(env)
    ordinary = [json.dumps(_call(rng, tools, ids)) for _ in range(repeat * 4)]
    base = _median_cpu(env, ordinary)
    rows = [("ordinary step", base, 1.0)]
    for kind, make in HOSTILE.items():
        actions = [make(rng, _call(rng, tools, ids), ids) for _ in range(repeat)]
        median = _median_cpu(env, actions)
        rows.append((kind, median, median / base))
    control = [_with(_call(rng, tools, ids), note="x" * 30_000) for _ in range(repeat)]
    median = _median_cpu(env, control)
    rows.append((CONTROL, median, median / base))
    return rows


def bench_unknown_id(sizes: Sequence[int], repeat: int) -> list[tuple[int, float]]:
    """(records, median seconds) of a mistyped-id step in SABench's calendar with ``sizes`` events."""
    from tooltrap.envs.sabench import make_env, packaged_tasks

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            raw = json.loads(packaged_tasks("calendar").get(CASCADE).model_dump_json())
            events = raw["initial_state"]["collections"]["events"]
            first = next(iter(events.values()))
            for i in range(n - len(events)):
                events[f"bulk_{i}"] = {**first, "id": f"bulk_{i}", "series_id": None}
            path = Path(tmp) / f"calendar_{n}.json"
            path.write_text(json.dumps([raw]))
            env = make_env("calendar", tasks_file=path, state_format="tools_only")
            env.reset(options={"task_id": CASCADE})
            actions = [
                json.dumps({"name": "calendar_get_event", "arguments": {"event_id": f"bulk_{i % 30}x"}})
                for i in range(repeat)
            ]
            times = []
            for i, action in enumerate(actions):
                if i % 4 == 0:
                    env.reset(options={"task_id": CASCADE})
                start = time.thread_time()
                env.step(action)
                times.append(time.thread_time() - start)
            out.append((n, statistics.median(times)))
    return out


def bench_did_you_mean(n: int, repeat: int) -> float:
    """Median seconds of one did-you-mean among ``n`` ids, for mistyped and made-up words."""
    ids = {f"INV-{i * 2654435761 % 2**32:010d}": None for i in range(n)}
    keys = list(ids)
    rng = random.Random(1)
    words = [rng.choice(keys)[:-1] + "x" for _ in range(repeat)] + [f"made-up-{i}" for i in range(repeat)]
    times = []
    for word in words:
        start = time.thread_time()
        did_you_mean(word, ids)
        times.append(time.thread_time() - start)
    return statistics.median(times)


def main(argv: Sequence[str] | None = None) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("env_ids", nargs="*", default=list(DEFAULT_IDS))
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args(argv)
    failed = False
    for env_id in args.env_ids:
        print(f"{env_id}: median CPU per step, and as a ratio to an ordinary step")
        for kind, median, ratio in bench_env(env_id, args.repeat):
            print(f"  {kind:<36} {1000 * median:8.3f} ms  {ratio:7.1f}x")
            failed |= median > MAX_STEP_S
    sizes = (40, 400, 4_000, 40_000, 100_000)
    print("an unknown id among n records (SABench-Calendar, inflated): median, ratio to 40 records")
    rows = bench_unknown_id(sizes, args.repeat)
    for n, median in rows:
        print(f"  {n:>7,} records {1000 * median:8.3f} ms  {median / rows[0][1]:6.2f}x")
        failed |= median > MAX_STEP_S
    dym = bench_did_you_mean(100_000, args.repeat)
    print(f"did-you-mean among 100,000 ids: median {1000 * dym:.3f} ms (target: under 1 ms)")
    failed |= dym > 0.001
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
