"""Evaluation throughput on Ray actors against the in-process threads, with a model that takes time.

A loopback OpenAI-compatible server (tests/llm_server.py) answers every request after ``--latency-ms``
(default 50 ms, a model's latency; two requests per episode: a tool call, then the answer). The same
episodes are played in-process with ``--concurrency`` 1, 2, 4 and 8 and with ``--backend ray`` on as many
actors (a simulated 3-node cluster, ``ray.cluster_utils.Cluster``, unless ``--ray-address`` names a real
one): first on new actors (their start-up, an import of tooltrap and a corpus load each, included), then
again on the actors kept from that run (as a protocol's later rounds, or a long run, see them). The table
gives seconds, episodes/s, the speed-up over one worker and the ratio of Ray to the threads at each width,
all measured in this run. Every run's records are checked to be
the same (mean reward printed).

Usage: python scripts/bench_ray.py [--episodes 48] [--latency-ms 50] [--widths 1,2,4,8] [--ray-address ADDR]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests/ (the loopback model server and its helpers)

ENV = "SABench-Calendar-v0"


def _play(
    agent, tasks: list[str], out: Path, backend: str, width: int, address: str | None
) -> tuple[float, list]:
    from tooltrap.evaluate import evaluate

    t0 = time.perf_counter()
    records = evaluate(
        ENV,
        agent,
        out,
        tasks=",".join(tasks),
        concurrency=width,
        backend=backend,
        ray_address=address,
        resamples=100,
    )
    return time.perf_counter() - t0, records


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--episodes", type=int, default=48)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--widths", default="1,2,4,8", help="actors / threads (comma-separated)")
    parser.add_argument(
        "--ray-address", default=None, help="a real cluster (default: a simulated 3-node one)"
    )
    args = parser.parse_args(argv)
    widths = [int(w) for w in args.widths.split(",")]

    import gymnasium as gym
    import ray

    import tooltrap  # noqa: F401
    from tests.conftest import start_server, stop_server
    from tests.llm_server import hermes_call, scripted_model
    from tooltrap.agents import make_agent

    probe = gym.make(ENV)
    ids = probe.unwrapped.tasks.ids
    tasks = [ids[i % len(ids)] for i in range(min(args.episodes, len(ids)))]
    proc, url = start_server(ROOT / "tests" / "llm_server.py")
    cluster = None
    try:
        if args.ray_address is None:
            from ray.cluster_utils import Cluster

            cluster = Cluster(
                initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False}
            )
            for _ in range(2):
                cluster.add_node(num_cpus=1)
            cluster.wait_for_nodes()
            ray.init(address=cluster.address, log_to_driver=False, include_dashboard=False)
        model = f"slow-{args.latency_ms}+" + scripted_model(hermes_call("calendar_list_events"), "Done.")
        agent = make_agent(f"openai:{model}", base_url=url, max_concurrency=max(widths))
        work = Path(tempfile.mkdtemp(prefix="tooltrap-bench-ray-"))
        from tooltrap._ray import shutdown_actors

        _play(agent, tasks[:2], work / "warm", "ray", 2, args.ray_address)  # the nodes' caches, imports
        shutdown_actors()
        rows, outcomes = [], set()
        for width in widths:
            seconds = {}
            # in-process threads; Ray with new actors (their start-up included), then with the same actors
            # kept from that run (as a protocol's later rounds get them)
            for label, backend in (("threads", "local"), ("cold", "ray"), ("warm", "ray")):
                elapsed, records = _play(
                    agent, tasks, work / f"{label}-{width}", backend, width, args.ray_address
                )
                seconds[label] = elapsed
                outcomes.add(
                    json.dumps(sorted((r["task_id"], r["reward"], r["system_outcome"]) for r in records))
                )
                mean = sum(r["reward"] for r in records) / len(records)
            shutdown_actors()
            rows.append((width, seconds["threads"], seconds["cold"], seconds["warm"], mean))
    finally:
        stop_server(proc)
        if cluster is not None:
            ray.shutdown()
            cluster.shutdown()
    n = len(tasks)
    where = "a simulated 3-node cluster" if args.ray_address is None else f"the cluster at {args.ray_address}"
    print(f"{n} episodes of {ENV}, 2 model calls each at {args.latency_ms} ms; Ray actors on {where}")
    print(
        "| width | threads: s (ep/s, speed-up) | Ray, new actors: s (ep/s) | Ray, kept actors: s (ep/s, speed-up) "
        "| Ray kept / threads | mean reward |"
    )
    print("|---|---|---|---|---|---|")
    base_threads, base_warm = rows[0][1], rows[0][3]
    for width, threads, cold, warm, mean in rows:
        print(
            f"| {width} | {threads:.2f} ({n / threads:.1f}, {base_threads / threads:.1f}x) | {cold:.2f} "
            f"({n / cold:.1f}) | {warm:.2f} ({n / warm:.1f}, {base_warm / warm:.1f}x) | {warm / threads:.2f} "
            f"| {mean:+.3f} |"
        )
    if len(outcomes) != 1:
        print("error: the backends' records differ", file=sys.stderr)
        return 1
    print("every run's records are the same")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
