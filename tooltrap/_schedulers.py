"""How the episodes of an evaluation are played: one after another, in worker threads (in-flight HTTP
requests), or in lock-step batches (one generate call serves every active episode of a local model).
Every finished record goes to one :class:`Sink`."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import gymnasium as gym

from tooltrap.agents import Agent
from tooltrap.wrappers.eval.run import EpisodeLog

from ._episode import Episode, Point, run_episode
from ._progress import Progress

#: one episode to play: (task id, grid point)
Job = tuple[str, Point]


class Sink:
    """Where finished records go, one at a time: appended to episodes.jsonl, to the records of the run,
    to the progress bar and to the caller's ``on_episode``."""

    def __init__(
        self,
        path: Path,
        records: list[dict[str, Any]],
        on_episode: Callable[[dict[str, Any]], None] | None,
        bar: Progress | None,
    ) -> None:
        self.log = EpisodeLog(path)
        self.records, self.on_episode, self.bar = records, on_episode, bar
        self.lock = threading.Lock()

    def __call__(self, record: dict[str, Any]) -> None:
        with self.lock:
            self.log.append(record)
            self.records.append(record)
            if self.bar is not None:
                self.bar.advance(record)
            if self.on_episode is not None:
                self.on_episode(record)

    def close(self) -> None:
        self.log.close()


def sequential(make_env: Callable[[], gym.Env], agent: Agent, todo: list[Job], seed: int, sink: Sink) -> None:
    env = make_env()
    try:
        for task_id, point in todo:
            sink(run_episode(env, agent, task_id, seed, point))
    finally:
        env.close()


def threaded(
    make_env: Callable[[], gym.Env], agent: Agent, todo: list[Job], seed: int, sink: Sink, workers: int
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


def batched(
    make_env: Callable[[], gym.Env], agent: Agent, todo: list[Job], seed: int, sink: Sink, slots: int
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
