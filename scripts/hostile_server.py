"""The hostile-server table (issue 24): every way a model server can misbehave, against every benchmark.

For each benchmark (two tasks each) and each reply kind, runs the command a user runs,
``tooltrap eval ENV --agent openai:KIND --base-url http://127.0.0.1:PORT/v1 --out DIR``, against the
loopback hostile server of the tests (``tests/hostile_server.py``: FastAPI for the HTTP-level kinds, its
``RawServer`` for a reset connection and headers that drip in), then reruns the same command with the
same agent behind a healthy address (``.../healthy/v1``), and prints one table: reply kind x benchmark ->

* **recorded as**: ``model`` (every episode a model outcome: the reply reached the env, as whatever call
  or text it was), ``system (KIND)`` (every episode a system outcome, with the provider error's kind),
  ``mixed``, or ``CRASH rc=N`` / ``HANG`` (the command failed, or outlived its wall limit);
* **within the timeout**: ``y`` when the run's wall time stayed within ``10 s + attempts x (timeout +
  0.5 s)``, where attempts are the requests the server saw (or, where no server counts them, the most
  the agent's retries allow): no request outlived the agent's ``timeout`` by more than the slack;
* **retried on rerun**: ``y`` when the rerun turned every system outcome into a model outcome without
  duplicating a record; ``n/a`` when there was none to retry (every episode finished: a rerun keeps
  them, as ``tests/eval`` checks); ``n`` otherwise.

Every run's records are also checked: one per episode, each line UTF-8 and JSON that encodes back
(``records`` in ``--json``).

Usage: python scripts/hostile_server.py [--kinds K1,K2] [--benchmarks sabench,episem,sentry,agentprop]
           [--timeout 2] [--jobs 4] [--json PATH] [--keep DIR]

Needs the ``dev`` and ``llm`` extras (fastapi, uvicorn, httpx). A few minutes on 2 cores. Exit status 1
when any run crashed or hung, or wrote a record that does not read back.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

try:
    from _help import script_parser
except ImportError:  # imported as a module of scripts (the tests)
    from scripts._help import script_parser

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the test servers live in tests/: reused, not copied

from tests.conftest import start_server, stop_server  # noqa: E402
from tests.hostile_server import RawServer  # noqa: E402

#: benchmark -> (env id, the tasks played: two each)
BENCHMARKS: dict[str, tuple[str, int]] = {
    "sabench": ("SABench-Calendar-v0", 2),
    "episem": ("EpiSEM-v0", 2),
    "sentry": ("SentryBench-v0", 2),
    "agentprop": ("AgentProp-v0", 2),
}

#: reply kind -> what a correct run records (the table checks it: a cell that differs is flagged "!")
KINDS: dict[str, str] = {
    # the server fails: system outcomes
    "refused": "system",  # nothing listens on the port
    "reset": "system",  # the connection is reset once the request is read
    "cut": "system",  # the body stops half-way and the connection closes
    "not-json": "system",
    "wrong-shape": "system",
    "empty-choices": "system",
    "message-list": "system",
    "content-number": "system",
    "calls-number": "system",
    "deep": "system",
    "bignum": "system",
    "storm-500": "system",
    "storm-503": "system",
    "storm-429": "system",
    "http-400": "system",
    "filtered": "system",
    "huge": "system",  # 1 GB, streamed
    "drip": "system",  # a valid body, one byte every 50 ms
    "drip-headers": "system",  # the headers, one byte every 100 ms
    "silent": "system",  # never answers
    # the model says something odd: the env gets it (an invalid call, an answer)
    "surrogate-content": "model",
    "surrogate-bytes": "model",
    "surrogate-args": "model",
    "bad-args": "model",
    "empty-args": "model",
    "bigargs": "model",
    "content-list": "model",
    "control-content": "model",
    "mb-content": "model",
}
RAW_KINDS = ("reset", "drip-headers")
WALL_LIMIT_S = 240  # a run still going after this is a hang
BASE_S = 10.0  # start-up, the env, the summary: what a run costs besides waiting for the server
SLACK_S = 0.5  # per attempt, over the agent's timeout


@dataclass
class Run:
    kind: str
    benchmark: str
    rc: int | None = None  # None: killed at the wall limit
    wall_s: float = 0.0
    attempts: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)  # "model" or the system kind -> episodes
    records_ok: bool = True
    records: str = ""
    rerun: str = "n/a"  # nothing to retry: every episode finished as a model outcome
    tail: str = ""

    @property
    def recorded_as(self) -> str:
        if self.rc is None:
            return "HANG"
        if self.rc not in (0, 3):
            return f"CRASH rc={self.rc}"
        system = sorted(k for k in self.outcomes if k != "model")
        if not system:
            return "model"
        if "model" in self.outcomes:
            return "mixed (" + ", ".join(system) + ")"
        return "system (" + ", ".join(system) + ")"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _task_ids(env_id: str, n: int) -> str:
    import gymnasium as gym

    import tooltrap

    gym.register_envs(tooltrap)
    env = gym.make(env_id)
    try:
        return ",".join(env.unwrapped.tasks.ids[:n])  # type: ignore[attr-defined]
    finally:
        env.close()


def _read_records(path: Path, expected: int) -> tuple[dict[str, int], bool, str]:
    """Outcomes of the latest record per episode, whether every line reads back and encodes, and a
    short note (``2/2``, or what is wrong)."""
    from tooltrap.wrappers.eval.run import latest_records

    if not path.exists():
        return {}, expected == 0, "no file"
    records, ok = [], True
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        try:
            record = json.loads(line.decode("utf-8"))
            json.dumps(record, ensure_ascii=False).encode("utf-8")
            records.append(record)
        except (ValueError, UnicodeError):
            ok = False
    latest = latest_records(records)
    outcomes: dict[str, int] = {}
    for record in latest:
        key = record.get("system_outcome") or "model"
        outcomes[key] = outcomes.get(key, 0) + 1
    ok = ok and len(latest) == expected
    return outcomes, ok, f"{len(latest)}/{expected}" + ("" if ok else " !")


def _command(env_id: str, model: str, url: str, out: Path, tasks: str, timeout: float) -> list[str]:
    return [
        *(sys.executable, "-m", "tooltrap", "eval", env_id),
        *("--agent", f"openai:{model}", "--base-url", url, "--out", str(out), "--tasks", tasks),
        *("--agent-arg", f"timeout={timeout}", "--agent-arg", "max_retries=1", "--agent-arg", "backoff=0.05"),
        *("--resamples", "100", "--quiet"),
    ]


def _launch(argv: list[str]) -> tuple[int | None, float, str]:
    start = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=WALL_LIMIT_S, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start, ""
    tail = (done.stderr.strip().splitlines() or [""])[-1]
    return done.returncode, time.monotonic() - start, tail


def _counts(url: str) -> dict[str, int]:
    import httpx

    return httpx.get(f"{url}/counts", timeout=60).json()


def _play(run: Run, env_id: str, tasks: str, n_tasks: int, urls: dict[str, str], raw: RawServer,
          out: Path, timeout: float) -> Run:  # fmt: skip
    tag = f"{run.kind}#{run.benchmark}"
    if run.kind == "refused":
        url = f"http://127.0.0.1:{_closed_port()}/v1"
    elif run.kind in RAW_KINDS:
        url = raw.url(run.kind, run.benchmark)
    else:
        url = urls["hostile"]
    model = tag  # the model name: the reply kind, tagged so the server counts this run apart
    run.rc, run.wall_s, run.tail = _launch(_command(env_id, model, url, out, tasks, timeout))
    if run.kind == "refused":  # no server counts: the most the agent's retries allow
        run.attempts = 2 * n_tasks
    elif run.kind in RAW_KINDS:
        run.attempts = raw.count(run.kind, run.benchmark)
    else:
        run.attempts = _counts(urls["hostile"]).get(model, 0)
    run.outcomes, run.records_ok, run.records = _read_records(out / "episodes.jsonl", n_tasks)
    # a rerun has something to retry only where the provider ended episodes (finished ones are kept:
    # tests/eval covers that, and a rerun of each would double the script's time)
    if run.rc not in (0, 3) or not any(k != "model" for k in run.outcomes):
        return _done(run)
    rc, _, _ = _launch(_command(env_id, model, urls["healthy"], out, tasks, timeout))
    outcomes, ok, note = _read_records(out / "episodes.jsonl", n_tasks)
    asked = _counts(urls["hostile"]).get(f"healthy:{model}", 0)
    retried = sum(n for k, n in run.outcomes.items() if k != "model")
    if rc not in (0, 3) or not ok:
        run.rerun = f"n (rc={rc}, records {note})"
    else:  # every system outcome, and only those, asked again and now the model's
        run.rerun = "y" if set(outcomes) == {"model"} and asked >= retried else "n"
    return _done(run)


def _done(run: Run) -> Run:
    print(
        f"  {run.kind} on {run.benchmark}: {run.recorded_as}, {run.wall_s:.1f} s, {run.attempts} attempts, "
        f"rerun {run.rerun}",
        file=sys.stderr,
        flush=True,
    )
    return run


def _within(run: Run, timeout: float) -> str:
    if run.rc is None:
        return "n"
    return "y" if run.wall_s <= BASE_S + max(run.attempts, 1) * (timeout + SLACK_S) else "n"


def _table(runs: list[Run], benchmarks: list[str], timeout: float) -> list[str]:
    by = {(r.kind, r.benchmark): r for r in runs}
    kinds = [k for k in KINDS if any((k, b) in by for b in benchmarks)]
    lines = [
        "| reply kind | " + " | ".join(f"{b} ({BENCHMARKS[b][0]})" for b in benchmarks) + " |",
        "|---|" + "---|" * len(benchmarks),
    ]
    for kind in kinds:
        cells = []
        for benchmark in benchmarks:
            run = by.get((kind, benchmark))
            if run is None:
                cells.append("")
                continue
            recorded = run.recorded_as
            flag = "" if recorded.startswith(KINDS[kind]) and run.records_ok else " !"
            cells.append(f"{recorded}{flag} · {_within(run, timeout)} · {run.rerun}")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str]) -> int:
    parser = script_parser(__doc__)
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated reply kinds (default: all)")
    parser.add_argument("--benchmarks", default=",".join(BENCHMARKS))
    parser.add_argument("--timeout", type=float, default=2.0, help="the agent's timeout, seconds")
    parser.add_argument("--jobs", type=int, default=4, help="runs at once (most of them wait on the server)")
    parser.add_argument("--json", type=Path, default=None, help="write every run's details here")
    parser.add_argument("--keep", type=Path, default=None, help="keep the run folders here")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    benchmarks = [b for b in args.benchmarks.split(",") if b]
    unknown = [k for k in kinds if k not in KINDS] + [b for b in benchmarks if b not in BENCHMARKS]
    if unknown:
        print(
            f"unknown: {', '.join(unknown)}; kinds: {', '.join(KINDS)}; benchmarks: {', '.join(BENCHMARKS)}"
        )
        return 2

    started = time.monotonic()
    # (start_server sends the server's log to a file: a pipe nobody reads would fill and block it)
    server, hostile = start_server(ROOT / "tests" / "hostile_server.py")
    raw = RawServer(drip_seconds=8.0)
    urls = {"hostile": hostile, "healthy": hostile.removesuffix("/v1") + "/healthy/v1"}
    folder = args.keep or Path(tempfile.mkdtemp(prefix="hostile-"))
    try:
        plan = {b: (BENCHMARKS[b][0], _task_ids(*BENCHMARKS[b]), BENCHMARKS[b][1]) for b in benchmarks}
        jobs = [Run(kind, b) for b in benchmarks for kind in kinds]
        # the slow ones first, so they overlap the many quick ones
        jobs.sort(key=lambda r: r.kind not in ("drip-headers", "drip", "silent", "huge"))
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [
                pool.submit(
                    _play,
                    run,
                    plan[run.benchmark][0],
                    plan[run.benchmark][1],
                    plan[run.benchmark][2],
                    urls,
                    raw,
                    folder / f"{run.benchmark}-{run.kind}",
                    args.timeout,
                )  # fmt: skip
                for run in jobs
            ]
            runs = [f.result() for f in futures]
    finally:
        stop_server(server)
        raw.close()
    print(
        f"Hostile-server table: {len(benchmarks)} benchmarks x {len(kinds)} reply kinds, 2 tasks each, "
        f"agent timeout {args.timeout:g} s, 1 retry. Cell: recorded as · within the timeout · retried on rerun"
    )
    print("('!' marks a cell that differs from what a correct run records, or records that do not read back)")
    print()
    for line in _table(runs, benchmarks, args.timeout):
        print(line)
    bad = [r for r in runs if r.rc is None or r.rc not in (0, 3) or not r.records_ok]
    wrong = [r for r in runs if not r.recorded_as.startswith(KINDS[r.kind])]
    late = [r for r in runs if _within(r, args.timeout) == "n"]
    print()
    print(
        f"{len(runs)} runs in {time.monotonic() - started:.0f} s: {len(bad)} crashed, hung or wrote bad records; "
        f"{len(wrong)} recorded otherwise than expected; {len(late)} outlived the timeout"
    )
    for run in (
        bad + [r for r in wrong if r not in bad] + [r for r in late if r not in bad and r not in wrong]
    ):
        print(
            f"  {run.kind} on {run.benchmark}: {run.recorded_as}, {run.wall_s:.1f} s for {run.attempts} "
            f"attempts, records {run.records}, rerun {run.rerun}"
            + (f"; stderr: {run.tail}" if run.tail else "")
        )
    if args.json is not None:
        details = [
            {**run.__dict__, "recorded_as": run.recorded_as, "within": _within(run, args.timeout)}
            for run in runs
        ]
        args.json.write_text(json.dumps(details, indent=1) + "\n", encoding="utf-8")
    if args.keep is None:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
