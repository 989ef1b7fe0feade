"""Benchmark env reset, step and oracle time against a floor measured in the same run.

The floor is the unavoidable cost of the text interface for the same step: ``json.loads`` of the
action plus ``json.dumps`` of the observation payload. Every figure is a median over the corpus (each
task contributes its own read call, its gold write call and its gold episode).

Usage: python scripts/bench_env.py [--repeat N] [--env ENV_ID]
Targets (issue #2): step < 50 µs and < 10x floor; reset < 1 ms; oracle < 1 ms per episode.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable

import gymnasium as gym

import tooltrap
from tooltrap.envs.core import ToolCall

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

gym.register_envs(tooltrap)

#: a read call on each task's first candidate, by the candidate's collection
READS = {
    "events": ("calendar_get_event", "event_id"),
    "messages": ("email_read", "message_id"),
    "tickets": ("ticket_get", "ticket_id"),
}


def timed_us(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - t0) / 1000)
    return samples


def main() -> None:
    parser = script_parser(__doc__)
    parser.add_argument("--repeat", type=int, default=200, help="repetitions per task")
    parser.add_argument("--env", default="SABench-v0")
    args = parser.parse_args()
    env = gym.make(args.env).unwrapped
    bench = env.benchmark
    rows: dict[str, list[float]] = {
        k: [] for k in ("floor_read", "floor_write", "reset", "step_read", "step_write", "oracle")
    }

    for task in env.tasks:
        collection, _, target = task.candidates[0].partition("/")
        tool, argument = READS[collection]
        read = ToolCall(name=tool, arguments={argument: target}).to_action()
        writes = [c for c in task.gold if bench.toolset(task)[c.name].mutates]
        options = {"task_id": task.id}

        def reset(options=options) -> None:
            env.reset(options=options)

        rows["reset"] += timed_us(reset, args.repeat)
        env.reset(options=options)

        def step_read(read=read) -> None:
            env._done = False  # one live episode, stepped repeatedly: the step cap is irrelevant here
            env.step(read)
            env.trace.steps.clear()

        rows["step_read"] += timed_us(step_read, args.repeat)
        env.reset(options=options)
        payload = json.loads(env.step(read)[0])

        def floor_read(read=read, payload=payload) -> None:
            json.loads(read)
            json.dumps(payload, ensure_ascii=False)

        rows["floor_read"] += timed_us(floor_read, args.repeat)
        if writes:
            action = writes[0].to_action()
            env.reset(options=options)
            write_payload = json.loads(env.step(action)[0])
            reset_median = statistics.median(timed_us(reset, args.repeat))

            def step_write(action=action, options=options) -> None:
                env.reset(options=options)
                env.step(action)

            rows["step_write"] += [t - reset_median for t in timed_us(step_write, args.repeat)]

            def floor_write(action=action, payload=write_payload) -> None:
                json.loads(action)
                json.dumps(payload, ensure_ascii=False)

            rows["floor_write"] += timed_us(floor_write, args.repeat)
        env.reset(options=options)
        for call in task.gold:
            env.step(call.to_action())
        trace = env.trace
        rows["oracle"] += timed_us(
            lambda task=task, trace=trace: bench.judge(task, trace), max(3, args.repeat // 20)
        )

    med = {k: statistics.median(v) for k, v in rows.items()}
    floor = (med["floor_read"] + med["floor_write"]) / 2
    print(f"{args.env}: {len(env.tasks)} tasks x {args.repeat} repeats, medians")
    lines = [
        ("floor: json.loads(action) + json.dumps(observation)", floor, None),
        ("reset", med["reset"], 1000),
        ("step, read call (get the task's first candidate)", med["step_read"], 50),
        ("step, write call (first gold write of each task)", med["step_write"], 50),
        ("oracle, per gold episode (replay + authorization)", med["oracle"], 1000),
    ]
    for name, us, target in lines:
        goal = f"target < {target} µs" if target else ""
        print(f"  {name:52s} {us:8.1f} µs {us / floor:6.1f}x floor  {goal}")
    print(json.dumps({k: round(v, 2) for k, v in med.items()}))


if __name__ == "__main__":
    main()
