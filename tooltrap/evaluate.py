"""Run a policy over a benchmark's tasks, streaming one JSON line per finished episode.

Results are appended (and flushed to disk) as each episode ends; running the same command again skips
the episodes already recorded, so an interrupted evaluation resumes where it stopped. With
``concurrency > 1`` several episodes run at once: batched generation for local models (one forward
pass serves every active episode), a thread pool of in-flight requests for HTTP agents.

Each episode is one (task, variant) point of a grid: ``variants`` lists the variant values to play
every selected task with (default: the env's default variant only). A record carries its ``variant``
(the grid point as asked; the resolved variant is in its trace) and a rerun skips the (task id,
variant) pairs already recorded.

A provider error or content-filter refusal ends the episode as a *system-level* outcome
(``system_outcome`` in the record); the report counts those apart from model behaviour.
"""

from __future__ import annotations

import fnmatch
import json
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from tooltrap.agents import Agent
from tooltrap.envs.core import (
    EnvUsageError,
    TooltrapError,
    UnknownNameError,
    UnknownOptionError,
    abort_episode,
    variant_key,
)

EPISODES = "episodes.jsonl"
RUN = "run.json"


class RunMismatchError(TooltrapError, ValueError):
    """The output folder holds a run with a different env, agent or seed."""


def select_task_ids(tasks: Iterable[Any], spec: str | None) -> list[str]:
    """Task ids matching ``spec``: comma-separated globs on task or template id, or ``label=value``."""
    tasks = list(tasks)
    if not spec:
        return [t.id for t in tasks]
    chosen: list[str] = []
    labels: dict[str, set[str]] = {}
    for t in tasks:
        for key, value in t.label_dict().items():
            labels.setdefault(key, set()).add(str(value).lower())
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if "=" in part:
            key, value = part.split("=", 1)
            if key not in labels:
                raise UnknownNameError("task label", key, labels)
            if value.lower() not in labels[key]:
                raise UnknownNameError(f"value of {key}", value, sorted(labels[key]))
            hits = [t.id for t in tasks if str(t.label_dict().get(key)).lower() == value.lower()]
        else:
            hits = [
                t.id for t in tasks if fnmatch.fnmatch(t.id, part) or fnmatch.fnmatch(t.template_id, part)
            ]
            if not hits:
                names = sorted({t.template_id for t in tasks} | {t.id for t in tasks})
                raise UnknownNameError("task or template", part, names)
        chosen.extend(h for h in hits if h not in chosen)
    if not chosen:
        raise EnvUsageError(f"--tasks {spec!r} matched no task.")
    order = {t.id: i for i, t in enumerate(tasks)}
    return sorted(chosen, key=order.__getitem__)


def _raw(agent: Agent) -> str | None:
    raw = getattr(agent, "last_raw", None)
    if raw is None or isinstance(raw, str):
        return raw
    return json.dumps(raw, ensure_ascii=False)


#: one point of an evaluation grid: variant key -> value
Point = dict[str, Any]


def record_key(record: dict[str, Any]) -> tuple[str, str]:
    """The resume key of an episode record: (task id, canonical JSON of its grid point)."""
    return record["task_id"], variant_key(record.get("variant") or {})


def _record(
    env: gym.Env, total: float, final: dict[str, Any], seed: int, system_outcome: str | None, point: Point
) -> dict[str, Any]:
    base = env.unwrapped
    task = base.task  # type: ignore[attr-defined]
    return {
        "task_id": task.id,
        "template_id": task.template_id,
        "domain": task.domain,
        **task.label_dict(),
        "benchmark": base.benchmark.name,  # type: ignore[attr-defined]
        "variant": dict(point),
        "instruction": task.instruction,
        "seed": seed,
        "reward": total,
        "reward_components": final["reward_components"],
        "verdict": final["verdict"],
        "system_outcome": system_outcome,
        "trace": base.trace.to_dict(),  # type: ignore[attr-defined]
    }


class Episode:
    """One episode in progress: the env, the agent slot, the running reward."""

    def __init__(self, env: gym.Env, agent: Agent, task_id: str, seed: int, point: Point | None = None):
        self.env, self.agent, self.seed, self.point = env, agent, seed, dict(point or {})
        self.observation, self.info = env.reset(seed=seed, options={**self.point, "task_id": task_id})
        task = env.unwrapped.task  # type: ignore[attr-defined]
        agent.reset(self.observation, self.info, task=task if agent.privileged else None, seed=seed)
        self.total = 0.0
        self.record: dict[str, Any] | None = None

    def advance(self, action: str) -> bool:
        """Apply one action; return True when the episode has ended (``self.record`` is then set)."""
        steps = self.env.unwrapped.trace.steps  # type: ignore[attr-defined]
        before = len(steps)
        self.observation, reward, terminated, truncated, self.info = self.env.step(action)
        raw = _raw(self.agent)
        # only a step this action added, and only when no format wrapper recorded its raw text already
        # (a prompted format may answer a reply without stepping the env: a nudge adds no step)
        if raw is not None and len(steps) > before and steps[-1].raw is None:
            steps[-1].raw, steps[-1].format = raw, getattr(self.agent, "last_format", None)
        self.total += float(reward)
        if terminated or truncated:
            self.record = _record(self.env, self.total, self.info, self.seed, None, self.point)
            return True
        return False

    def fail(self, kind: str) -> None:
        """End the episode as a system-level outcome (provider error, content filter)."""
        final = abort_episode(self.env, f"system:{kind}")
        self.total += final["reward"]
        self.record = _record(self.env, self.total, final, self.seed, kind, self.point)


def run_episode(
    env: gym.Env, agent: Agent, task_id: str, seed: int, point: Point | None = None
) -> dict[str, Any]:
    """Play one episode of ``task_id`` (as grid point ``point``); return its JSON-ready record
    (verdict, reward and components, trace)."""
    from tooltrap.agents.llm import ProviderError

    episode = Episode(env, agent, task_id, seed, point)
    while True:
        try:
            action = agent.act(episode.observation, episode.info)
        except ProviderError as err:
            episode.fail(err.kind)
            break
        if episode.advance(action):
            break
    assert episode.record is not None
    return episode.record


def json_line(record: dict[str, Any]) -> str:
    """One JSONL line. Text a model wrote may hold lone surrogates, which UTF-8 cannot store: such a
    record is written with ASCII escapes instead (the same JSON value, read back identically)."""
    line = json.dumps(record, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(record, ensure_ascii=True)
    return line + "\n"


@dataclass
class EpisodeFile:
    """What an episodes.jsonl holds: the readable records, the unreadable lines (line number, text)
    and whether the last line was torn (a crash mid-write)."""

    records: list[dict[str, Any]]
    bad_lines: list[tuple[int, str]]
    torn_tail: bool


def scan_episodes(path: Path) -> EpisodeFile:
    """Read an episodes.jsonl, keeping apart what cannot be read."""
    if not path.exists():
        return EpisodeFile([], [], False)
    data = path.read_bytes()
    torn = bool(data) and not data.endswith(b"\n")
    records, bad = [], []
    lines = data.split(b"\n")
    if torn:
        lines = lines[:-1]
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            bad.append((number, raw.decode("utf-8", "replace")))
            continue
        if isinstance(record, dict) and "task_id" in record:
            records.append(record)
        else:
            bad.append((number, raw.decode("utf-8", "replace")))
    return EpisodeFile(records, bad, torn)


def latest_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per (task id, variant): the last one written (a retried episode supersedes its
    earlier system-level failure), in the order of their first appearance."""
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    for record in records:
        key = record_key(record)
        by_key.pop(key, None)
        by_key[key] = record
    return list(by_key.values())


def read_episodes(path: str | Path) -> list[dict[str, Any]]:
    """The records of an episodes.jsonl, one per (task id, variant) (the latest); unreadable lines
    are skipped (``tooltrap eval`` moves them aside when it resumes)."""
    return latest_records(scan_episodes(Path(path)).records)


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` so that a crash leaves either the old file or the new one, never a torn one."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def prepare_resume(path: Path, found: EpisodeFile, log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Make episodes.jsonl (``found``: as :func:`scan_episodes` read it) safe to append to and return the
    records a rerun keeps.

    Unreadable lines are moved to ``episodes.rejected.jsonl`` (and their episodes run again); episodes
    that ended at the provider (system-level outcomes) are dropped so that they are retried; where a
    (task, variant) was written twice, the latest record stays. The file is rewritten atomically, and
    only when something changes.
    """
    latest = latest_records(found.records)
    kept = [r for r in latest if not r.get("system_outcome")]
    retried = len(latest) - len(kept)
    if found.bad_lines:
        rejected = path.with_name("episodes.rejected.jsonl")
        with rejected.open("a", encoding="utf-8") as fh:
            for number, text in found.bad_lines:
                fh.write(json_line({"line": number, "text": text[:10_000]}))
        log(
            f"moved {len(found.bad_lines)} unreadable line(s) of {path} to {rejected}; their episodes run again"
        )
    if retried:
        log(f"retrying {retried} episode(s) that ended at the provider (system-level outcomes)")
    if found.bad_lines or found.torn_tail or len(kept) != len(found.records):
        _write_atomic(path, "".join(json_line(r) for r in kept))
    return kept


def _react(env: gym.Env) -> gym.Env:
    from tooltrap.wrappers.react import ReActFormat

    return ReActFormat(env)


#: how a model's turn is presented and read: native tool calling, or the prompted ReAct format
HARNESSES: dict[str, Callable[[gym.Env], gym.Env]] = {"native": lambda env: env, "react": _react}


class _Sink:
    """Appends records to episodes.jsonl durably, one writer at a time.

    Each line is flushed to the operating system at once, so a crashed evaluation loses nothing; the
    file is fsynced at most every :attr:`SYNC_EVERY` seconds (and on close), so a machine crash loses
    at most that much, which the rerun replays (a torn last line is moved aside). Syncing every line
    would cost milliseconds per episode: most of a scripted baseline's time.
    """

    SYNC_EVERY = 0.5

    def __init__(
        self,
        path: Path,
        records: list[dict[str, Any]],
        on_episode: Callable[[dict[str, Any]], None] | None,
        bar: Any,
    ):
        self.fh = path.open("a", encoding="utf-8")
        self.records, self.on_episode, self.bar = records, on_episode, bar
        self.lock = threading.Lock()
        self.synced = time.monotonic()

    def __call__(self, record: dict[str, Any]) -> None:
        with self.lock:
            self.fh.write(json_line(record))
            self.fh.flush()
            if time.monotonic() - self.synced >= self.SYNC_EVERY:
                os.fsync(self.fh.fileno())
                self.synced = time.monotonic()
            self.records.append(record)
            if self.bar is not None:
                self.bar.advance(record)
            if self.on_episode is not None:
                self.on_episode(record)

    def close(self) -> None:
        self.fh.flush()
        os.fsync(self.fh.fileno())
        self.fh.close()


Job = tuple[str, Point]


def _sequential(
    make_env: Callable[[], gym.Env], agent: Agent, todo: list[Job], seed: int, sink: _Sink
) -> None:
    env = make_env()
    try:
        for task_id, point in todo:
            sink(run_episode(env, agent, task_id, seed, point))
    finally:
        env.close()


def _threaded(
    make_env: Callable[[], gym.Env], agent: Agent, todo: list[Job], seed: int, sink: _Sink, workers: int
) -> None:
    """In-flight requests: each worker thread owns an env and an agent clone."""
    jobs: queue.Queue[Job] = queue.Queue()
    for job in todo:
        jobs.put(job)
    stop = threading.Event()  # one worker failing stops the others after their current episode

    def work() -> None:
        env, mine = make_env(), agent.clone()
        try:
            while not stop.is_set():
                try:
                    task_id, point = jobs.get_nowait()
                except queue.Empty:
                    return
                sink(run_episode(env, mine, task_id, seed, point))
        except BaseException:
            stop.set()
            raise
        finally:
            env.close()

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for future in [pool.submit(work) for _ in range(min(workers, len(todo)))]:
            future.result()


def _batched(
    make_env: Callable[[], gym.Env], agent: Agent, todo: list[Job], seed: int, sink: _Sink, slots: int
) -> None:
    """Lock-step batching for local models: every active episode's next turn in one generate call."""
    from tooltrap.agents.llm import ProviderError

    pending = list(reversed(todo))
    envs = [make_env() for _ in range(min(slots, len(todo)))]
    active: list[Episode] = []
    try:
        for env in envs:
            if pending:
                task_id, point = pending.pop()
                active.append(Episode(env, agent.clone(), task_id, seed, point))
        while active:
            requests = [e.agent.prepare(e.observation, e.info) for e in active]  # type: ignore[attr-defined]
            try:
                outputs = agent.generate(requests)  # type: ignore[attr-defined]
            except ProviderError as err:
                outputs = None
                for e in active:
                    e.fail(err.kind)
            still: list[Episode] = []
            for i, e in enumerate(active):
                done = e.record is not None or e.advance(e.agent.finish(outputs[i]))  # type: ignore[attr-defined, index]
                if not done:
                    still.append(e)
                    continue
                assert e.record is not None
                sink(e.record)
                if pending:
                    task_id, point = pending.pop()
                    still.append(Episode(e.env, agent.clone(), task_id, seed, point))
            active = still
    finally:
        for env in envs:
            env.close()


def _check_run_file(
    run_file: Path,
    identity: dict[str, Any],
    benchmark: str,
    *,
    has_records: bool,
    transport: tuple[str, ...] = (),
) -> None:
    """Refuse to mix runs: an existing run.json must describe the same run (the message names the
    settings that differ). An unreadable run.json (a crash while it was written) is rewritten when the
    folder holds no episodes yet."""
    previous: dict[str, Any] | None = None
    if run_file.exists():
        try:
            previous = json.loads(run_file.read_text(encoding="utf-8"))
            if not isinstance(previous, dict):
                raise ValueError("not an object")
        except (ValueError, UnicodeDecodeError) as exc:
            if has_records:
                raise RunMismatchError(
                    f"{run_file} is unreadable ({exc}) but the folder holds episodes: delete {run_file} "
                    "to resume them with the current settings, or use another --out."
                ) from None
            previous = None
    if previous is None:
        _write_atomic(run_file, json.dumps({**identity, "benchmark": benchmark}, indent=1) + "\n")
        return
    was = {k: previous.get(k, "none" if k == "mitigation" else None) for k in identity}

    def same(key: str) -> bool:
        if key == "agent" and isinstance(was[key], dict):  # how the agent is reached may change
            drop = set(transport)
            return {k: v for k, v in was[key].items() if k not in drop} == {
                k: v for k, v in identity[key].items() if k not in drop
            }
        return was[key] == identity[key]

    differ = [k for k in identity if not same(k)]
    if differ:
        details = "; ".join(f"{k}: {was[k]!r} there, {identity[k]!r} now" for k in differ)
        raise RunMismatchError(
            f"{run_file.parent} holds another run ({details}); use another --out, or the same settings to resume."
        )
    if was["agent"] != identity["agent"]:  # the same agent reached another way: record the new way
        _write_atomic(run_file, json.dumps({**previous, "agent": identity["agent"]}, indent=1) + "\n")


class _Progress:
    """The progress bar: N/M, elapsed, ETA, and the running rates of the benchmark's headline outcomes
    (model-level episodes only; system-level outcomes counted apart)."""

    def __init__(
        self,
        title: str,
        total: int,
        completed: int,
        records: list[dict[str, Any]],
        benchmark: str,
    ):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        from tooltrap.wrappers.eval.report import report_for

        self.outcomes = report_for(benchmark).progress_outcomes
        self.counts = dict.fromkeys(self.outcomes, 0)
        self.n = self.system = 0
        for record in records:
            self._count(record)
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[rates]}"),
            transient=True,
        )
        self.bar.start()
        self.task = self.bar.add_task(title, total=total, completed=completed, rates=self._rates())

    def _count(self, record: dict[str, Any]) -> None:
        if record.get("system_outcome"):
            self.system += 1
            return
        self.n += 1
        verdict = record.get("verdict", {})
        for outcome in self.outcomes:
            self.counts[outcome] += bool(verdict.get(outcome))

    def _rates(self) -> str:
        parts = [f"{o} {100 * c / self.n:.0f}%" for o, c in self.counts.items()] if self.n else []
        if self.system:
            parts.append(f"system {self.system}")
        return " ".join(parts)

    def advance(self, record: dict[str, Any]) -> None:
        self._count(record)
        self.bar.update(self.task, advance=1, rates=self._rates())

    def stop(self) -> None:
        self.bar.stop()


def check_points(env: gym.Env, points: Sequence[Point]) -> list[Point]:
    """Validate grid points against the env's variant model (typed errors name the key); returns them
    as plain dicts, duplicates dropped."""
    from tooltrap.envs.core import parse_variant

    base = env.unwrapped
    model = base.benchmark.variant_model  # type: ignore[attr-defined]
    out: list[Point] = []
    seen: set[str] = set()
    for point in points:
        if point and not model.model_fields:
            raise EnvUsageError(
                f"{base.benchmark.name} has no episode variants: --variant {sorted(point)} does not apply."  # type: ignore[attr-defined]
            )
        parse_variant(model, point, base=base.default_variant)  # type: ignore[attr-defined]
        key = variant_key(point)
        if key not in seen:
            seen.add(key)
            out.append(dict(point))
    return out


def evaluate(
    env_id: str,
    agent: Agent,
    out_dir: str | Path,
    *,
    seed: int = 0,
    tasks: str | None = None,
    variants: Sequence[Point] | None = None,
    env_kwargs: dict[str, Any] | None = None,
    mitigation: str | None = None,
    concurrency: int = 1,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    progress: bool = False,
    log: Callable[[str], None] | None = None,
    pairs: Sequence[tuple[str, Point]] | None = None,
    known_records: list[dict[str, Any]] | None = None,
    harness: str = "native",
) -> list[dict[str, Any]]:
    """Evaluate ``agent`` on ``env_id`` over the selected tasks x ``variants`` (grid points; default:
    the default variant), or over explicit ``pairs`` of (task id, grid point); append to
    ``out_dir/episodes.jsonl``; return the records of this grid.

    Everything is validated (env id and kwargs, defense, task selection, grid points) before anything
    is written to ``out_dir``. A rerun resumes: it keeps the finished episodes, retries those that
    ended at the provider, and moves unreadable lines aside (``log`` hears about each of these).
    ``known_records``: the records of ``out_dir`` as a previous call returned them (a protocol's later
    rounds), so the file is not read again; new records are appended to that list. ``harness``:
    ``native`` (tool schemas sent, tool calls parsed from the reply) or ``react`` (tools described in
    the prompt, the reply read as Thought / Action / Action Input / Final Answer, at most 5 model calls:
    :class:`~tooltrap.wrappers.react.ReActFormat`).
    """
    from tooltrap import check_env_id
    from tooltrap.wrappers.defenses import apply_defense

    check_env_id(env_id)

    def make_env() -> gym.Env:
        return HARNESSES[harness](apply_defense(gym.make(env_id, **(env_kwargs or {})), mitigation))

    if harness not in HARNESSES:
        raise UnknownOptionError(harness, HARNESSES, what="harness")
    probe = make_env()
    wanted = select_task_ids(probe.unwrapped.tasks, tasks)  # type: ignore[attr-defined]
    if pairs is not None:
        known = set(probe.unwrapped.tasks.ids)  # type: ignore[attr-defined]
        unknown = sorted({t for t, _ in pairs} - known)
        if unknown:
            raise UnknownNameError("task", unknown[0], sorted(known))
        check_points(probe, [p for _, p in pairs])
    points = check_points(probe, variants or [{}])
    benchmark = probe.unwrapped.benchmark.name  # type: ignore[attr-defined]
    probe.close()

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    identity = {
        "env_id": env_id,
        "agent": agent.describe(),
        "seed": seed,
        "env_kwargs": env_kwargs or {},
        "mitigation": mitigation or "none",
        **({"harness": harness} if harness != "native" else {}),
    }
    path = out / EPISODES
    transport = tuple(getattr(agent, "transport_keys", ()))
    if known_records is None:
        found = scan_episodes(path)
        _check_run_file(out / RUN, identity, benchmark, has_records=bool(found.records), transport=transport)
        records = prepare_resume(path, found, log or (lambda message: None))
    else:
        records = known_records
    done = {record_key(r) for r in records}
    grid = list(pairs) if pairs is not None else [(task_id, point) for task_id in wanted for point in points]
    todo = [(t, p) for t, p in grid if (t, variant_key(p)) not in done]
    if log is not None and len(todo) < len(grid):
        log(f"resuming: {len(grid) - len(todo)} of {len(grid)} episodes done, {len(todo)} to run")
    bar = (
        _Progress(
            f"{agent.describe()['name']} on {env_id}", len(grid), len(grid) - len(todo), records, benchmark
        )
        if progress and todo
        else None
    )
    sink = _Sink(path, records, on_episode, bar)
    try:
        if concurrency > 1 and agent.batchable:
            _batched(make_env, agent, todo, seed, sink, concurrency)
        elif concurrency > 1:
            _threaded(make_env, agent, todo, seed, sink, concurrency)
        else:
            _sequential(make_env, agent, todo, seed, sink)
    finally:
        sink.close()
        if bar is not None:
            bar.stop()
    if known_records is not None:
        return records
    keep = {(t, variant_key(p)) for t, p in grid}
    return [r for r in records if record_key(r) in keep]


def evaluate_protocol(
    env_id: str,
    agent: Agent,
    out_dir: str | Path,
    protocol: str,
    *,
    seed: int = 0,
    tasks: str | None = None,
    env_kwargs: dict[str, Any] | None = None,
    mitigation: str | None = None,
    concurrency: int = 1,
    progress: bool = False,
    log: Callable[[str], None] | None = None,
    harness: str = "native",
) -> list[dict[str, Any]]:
    """Run a benchmark's adaptive protocol (``Benchmark.protocols``): round by round, its planner picks
    the next (task, grid point) pairs from the ledger so far, and :func:`evaluate` runs them (same
    ledger, same resume rules). Stops when the planner has nothing left, or when a whole round ended at
    the provider (rerun the command to retry those episodes). Returns every record of the protocol."""
    import importlib

    from tooltrap import check_env_id

    check_env_id(env_id)
    probe = gym.make(env_id, **(env_kwargs or {}))
    base = probe.unwrapped
    benchmark = base.benchmark  # type: ignore[attr-defined]
    protocols = benchmark.protocols
    if protocol not in protocols:
        raise UnknownNameError(f"protocol of {benchmark.name}", protocol, sorted(protocols))
    module, _, attribute = protocols[protocol].partition(":")
    planner = getattr(importlib.import_module(module), attribute)(seed=seed)
    wanted = set(select_task_ids(base.tasks, tasks))  # type: ignore[attr-defined]
    chosen = [t for t in base.tasks if t.id in wanted]  # type: ignore[attr-defined]
    probe.close()

    def run(pairs: list[tuple[str, Point]], known: list[dict[str, Any]] | None) -> None:
        evaluate(
            env_id,
            agent,
            out_dir,
            seed=seed,
            env_kwargs=env_kwargs,
            mitigation=mitigation,
            concurrency=concurrency,
            progress=progress and bool(pairs),
            log=log,
            pairs=pairs,
            known_records=known,
            harness=harness,
        )

    # check the run, repair the ledger, then read it once: later rounds append to the same list
    run([], None)
    records: list[dict[str, Any]] = scan_episodes(Path(out_dir) / EPISODES).records
    ledger = {record_key(r): r["verdict"] for r in records}
    rounds = 0
    while True:
        todo = planner.next_round(chosen, ledger)
        if not todo:
            break
        rounds += 1
        before = len(records)
        run(todo, records)
        batch = records[before:]
        ledger.update((record_key(r), r["verdict"]) for r in batch)
        if batch and all(r.get("system_outcome") for r in batch):
            if log is not None:
                log(f"round {rounds}: every episode ended at the provider; rerun to retry")
            break
    if log is not None:
        log(f"{protocol}: {len(ledger)} rollouts in the ledger after {rounds} rounds")
    keep = {t.id for t in chosen}
    return [r for r in records if r["task_id"] in keep]
