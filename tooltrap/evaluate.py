"""Run a policy over a benchmark's tasks, streaming one JSON line per finished episode.

Results are appended (and flushed to disk) as each episode ends; running the same command again skips
the episodes already recorded, so an interrupted evaluation resumes where it stopped. With
``concurrency > 1`` several episodes run at once: batched generation for local models (one forward
pass serves every active episode), a thread pool of in-flight requests for HTTP agents.

A provider error or content-filter refusal ends the episode as a *system-level* outcome
(``system_outcome`` in the record); the report counts those apart from model behaviour.
"""

from __future__ import annotations

import fnmatch
import json
import os
import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import gymnasium as gym

from tooltrap.agents import Agent
from tooltrap.envs.core import EnvUsageError, TooltrapError

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
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if "=" in part:
            key, value = part.split("=", 1)
            hits = [t.id for t in tasks if str(t.label_dict().get(key)).lower() == value.lower()]
        else:
            hits = [
                t.id for t in tasks if fnmatch.fnmatch(t.id, part) or fnmatch.fnmatch(t.template_id, part)
            ]
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


def _record(
    env: gym.Env, total: float, final: dict[str, Any], seed: int, system_outcome: str | None
) -> dict[str, Any]:
    base = env.unwrapped
    task = base.task  # type: ignore[attr-defined]
    return {
        "task_id": task.id,
        "template_id": task.template_id,
        "domain": task.domain,
        **task.label_dict(),
        "seed": seed,
        "reward": total,
        "reward_components": final["reward_components"],
        "verdict": final["verdict"],
        "system_outcome": system_outcome,
        "trace": base.trace.to_dict(),  # type: ignore[attr-defined]
    }


class Episode:
    """One episode in progress: the env, the agent slot, the running reward."""

    def __init__(self, env: gym.Env, agent: Agent, task_id: str, seed: int):
        self.env, self.agent, self.seed = env, agent, seed
        self.observation, self.info = env.reset(seed=seed, options={"task_id": task_id})
        task = env.unwrapped.task  # type: ignore[attr-defined]
        agent.reset(self.observation, self.info, task=task if agent.privileged else None, seed=seed)
        self.total = 0.0
        self.record: dict[str, Any] | None = None

    def advance(self, action: str) -> bool:
        """Apply one action; return True when the episode has ended (``self.record`` is then set)."""
        self.observation, reward, terminated, truncated, self.info = self.env.step(action)
        raw = _raw(self.agent)
        if raw is not None:
            self.env.unwrapped.trace.steps[-1].raw = raw  # type: ignore[attr-defined]
        self.total += float(reward)
        if terminated or truncated:
            self.record = _record(self.env, self.total, self.info, self.seed, None)
            return True
        return False

    def fail(self, kind: str) -> None:
        """End the episode as a system-level outcome (provider error, content filter)."""
        final = self.env.unwrapped.abort(f"system:{kind}")  # type: ignore[attr-defined]
        self.total += final["reward"]
        self.record = _record(self.env, self.total, final, self.seed, kind)


def run_episode(env: gym.Env, agent: Agent, task_id: str, seed: int) -> dict[str, Any]:
    """Play one episode; return its JSON-ready record (verdict, reward and components, trace)."""
    from tooltrap.agents.llm import ProviderError

    episode = Episode(env, agent, task_id, seed)
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


def read_episodes(path: Path) -> list[dict[str, Any]]:
    """Records of an episodes.jsonl; a torn last line (crash mid-write) is dropped."""
    if not path.exists():
        return []
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


def _repair(path: Path) -> None:
    """Cut a torn last line so new records start on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


class _Sink:
    """Appends records to episodes.jsonl durably, one writer at a time."""

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

    def __call__(self, record: dict[str, Any]) -> None:
        with self.lock:
            self.fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            self.fh.flush()
            os.fsync(self.fh.fileno())
            self.records.append(record)
            if self.bar is not None:
                self.bar[0].advance(self.bar[1])
            if self.on_episode is not None:
                self.on_episode(record)

    def close(self) -> None:
        self.fh.close()


def _sequential(
    make_env: Callable[[], gym.Env], agent: Agent, todo: list[str], seed: int, sink: _Sink
) -> None:
    env = make_env()
    try:
        for task_id in todo:
            sink(run_episode(env, agent, task_id, seed))
    finally:
        env.close()


def _threaded(
    make_env: Callable[[], gym.Env], agent: Agent, todo: list[str], seed: int, sink: _Sink, workers: int
) -> None:
    """In-flight requests: each worker thread owns an env and an agent clone."""
    jobs: queue.Queue[str] = queue.Queue()
    for task_id in todo:
        jobs.put(task_id)
    stop = threading.Event()  # one worker failing stops the others after their current episode

    def work() -> None:
        env, mine = make_env(), agent.clone()
        try:
            while not stop.is_set():
                try:
                    task_id = jobs.get_nowait()
                except queue.Empty:
                    return
                sink(run_episode(env, mine, task_id, seed))
        except BaseException:
            stop.set()
            raise
        finally:
            env.close()

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for future in [pool.submit(work) for _ in range(min(workers, len(todo)))]:
            future.result()


def _batched(
    make_env: Callable[[], gym.Env], agent: Agent, todo: list[str], seed: int, sink: _Sink, slots: int
) -> None:
    """Lock-step batching for local models: every active episode's next turn in one generate call."""
    from tooltrap.agents.llm import ProviderError

    pending = list(reversed(todo))
    envs = [make_env() for _ in range(min(slots, len(todo)))]
    active: list[Episode] = []
    try:
        for env in envs:
            if pending:
                active.append(Episode(env, agent.clone(), pending.pop(), seed))
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
                    still.append(Episode(e.env, agent.clone(), pending.pop(), seed))
            active = still
    finally:
        for env in envs:
            env.close()


def evaluate(
    env_id: str,
    agent: Agent,
    out_dir: str | Path,
    *,
    seed: int = 0,
    tasks: str | None = None,
    env_kwargs: dict[str, Any] | None = None,
    mitigation: str | None = None,
    concurrency: int = 1,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Evaluate ``agent`` on ``env_id``; append to ``out_dir/episodes.jsonl``; return all records."""
    from tooltrap.wrappers.defenses import apply_mitigation

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    identity = {
        "env_id": env_id,
        "agent": agent.describe(),
        "seed": seed,
        "env_kwargs": env_kwargs or {},
        "mitigation": mitigation or "none",
    }
    run_file = out / RUN
    if run_file.exists():
        previous = json.loads(run_file.read_text(encoding="utf-8"))
        if {k: previous.get(k, "none" if k == "mitigation" else None) for k in identity} != identity:
            raise RunMismatchError(
                f"{out} holds a run of {previous.get('agent')} on {previous.get('env_id')} (seed "
                f"{previous.get('seed')}); use another --out to evaluate {identity['agent']} on {env_id}."
            )
    else:
        run_file.write_text(json.dumps(identity, indent=1) + "\n", encoding="utf-8")

    def make_env() -> gym.Env:
        return apply_mitigation(gym.make(env_id, **(env_kwargs or {})), mitigation)

    probe = gym.make(env_id, **(env_kwargs or {}))
    wanted = select_task_ids(probe.unwrapped.tasks, tasks)  # type: ignore[attr-defined]
    probe.close()
    path = out / EPISODES
    _repair(path)
    records = read_episodes(path)
    done = {r["task_id"] for r in records}
    todo = [t for t in wanted if t not in done]
    bar = None
    if progress and todo:
        from rich.progress import Progress

        progress_bar = Progress(transient=True)
        progress_bar.start()
        bar = (
            progress_bar,
            progress_bar.add_task(
                f"{agent.describe()['name']} on {env_id}",
                total=len(wanted),
                completed=len(wanted) - len(todo),
            ),
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
            bar[0].stop()
    keep = set(wanted)
    return [r for r in records if r["task_id"] in keep]
