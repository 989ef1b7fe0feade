"""Benchmark env step, reset and oracle time against a floor measured in the same run.

The floor is the unavoidable cost of the text interface: ``json.loads`` of the same action plus
``json.dumps`` of the same observation payload. Usage: python scripts/bench_env.py [--repeat N]
Prints medians (µs) and ratios to the floor; targets: step < 50 µs and < 10x floor, reset < 1 ms,
oracle < 1 ms per episode.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

import gymnasium as gym

import tooltrap
from tooltrap.envs.core import ToolCall

gym.register_envs(tooltrap)


def median_us(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--env", default="SABench-Calendar-v0")
    args = parser.parse_args()
    env = gym.make(args.env).unwrapped
    task = env.tasks[0]
    write_call = task.gold[0]
    action = write_call.to_action()
    read_action = ToolCall(
        name="calendar_get_event", arguments={"event_id": task.candidates[0].partition("/")[2]}
    ).to_action()

    # a representative observation payload for the floor: the result of the read
    env.reset(options={"task_id": task.id})
    obs_payload = json.loads(env.step(read_action)[0])

    def floor() -> None:
        json.loads(read_action)
        json.dumps(obs_payload, ensure_ascii=False)

    def reset() -> None:
        env.reset(options={"task_id": task.id})

    def step_read() -> None:
        env._done = False  # keep stepping one live episode; the step cap is irrelevant here
        env.step(read_action)
        env.trace.steps.clear()

    def step_write() -> None:
        env.reset(options={"task_id": task.id})
        env.step(action)

    env.reset(options={"task_id": task.id})
    floor_us = median_us(floor, args.repeat)
    reset_us = median_us(reset, args.repeat)
    env.reset(options={"task_id": task.id})
    read_us = median_us(step_read, args.repeat)
    write_us = median_us(step_write, args.repeat) - reset_us

    # oracle: judge a full gold episode of every task
    traces = []
    for t in env.tasks:
        env.reset(options={"task_id": t.id})
        for call in t.gold:
            _, _, terminated, truncated, _ = env.step(call.to_action())
        traces.append((t, env.trace))
    bench = env.benchmark

    def judge_all() -> None:
        for t, trace in traces:
            bench.judge(t, trace)

    oracle_us = median_us(judge_all, max(5, args.repeat // 100)) / len(traces)

    rows = [
        ("floor (json.loads action + json.dumps observation)", floor_us, 50.0),
        ("reset", reset_us, 1000.0),
        ("step (read call)", read_us, 50.0),
        ("step (write call)", write_us, 50.0),
        ("oracle (per episode, gold traces)", oracle_us, 1000.0),
    ]
    print(f"{args.env}: {len(env.tasks)} tasks, {args.repeat} repeats (median)")
    for name, us, target in rows:
        ratio = us / floor_us
        print(f"  {name:52s} {us:9.1f} µs  {ratio:6.1f}x floor  target < {target:.0f} µs")
    print(
        json.dumps(
            {
                "floor_us": floor_us,
                "reset_us": reset_us,
                "step_read_us": read_us,
                "step_write_us": write_us,
                "oracle_us": oracle_us,
            }
        )
    )


if __name__ == "__main__":
    main()
