"""How the episodes of an evaluation are played: one after another, in worker threads (in-flight HTTP
requests), or in lock-step batches (one generate call serves every active episode of a local model).
Every finished record goes to one :class:`Sink`, which also stops a run whose model cannot be reached.

An interruption (Ctrl-C) in the caller's thread ends the run at once: the records written so far stay
whole (each is written under the sink's lock, and the sink is closed under it), and an episode a worker
thread finishes afterwards is dropped, to be played by the rerun.
"""

from __future__ import annotations

import queue
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

from tooltrap.agents import Agent
from tooltrap.envs.core import TooltrapError
from tooltrap.wrappers.eval.run import EpisodeLog

from ._episode import Episode, Point, run_episode
from ._progress import Progress

#: one episode to play: (task id, grid point)
Job = tuple[str, Point]
#: how one episode is played: (env, the agent's clone, task id, seed, grid point) -> its record
Play = Callable[[Any, Any, str, int, Point], dict[str, Any]]


#: system outcomes that say the request never got an answer from the model's server
UNREACHED = frozenset({"connection", "timeout", "provider_down"})
#: this many episodes in a row that never reached the model, with none reached before, stop the run
UNREACHABLE_AFTER = 3


class ProviderUnreachableError(TooltrapError, RuntimeError):
    """The first episodes of an evaluation could not reach the model (connection errors, timeouts)
    and none did: the run stops instead of failing every remaining episode. Their records are written
    and a rerun retries them. ``endpoint``: where the agent was reaching (None when it does not say);
    ``kinds``: the failures by kind."""

    def __init__(self, endpoint: str | None, kinds: Counter[str]) -> None:
        self.endpoint, self.kinds = endpoint, dict(kinds)
        #: set by the runner: the benchmark and the records of the run so far (its summary's)
        self.benchmark: str = ""
        self.records: list[dict[str, Any]] = []
        where = f"the model server at {endpoint}" if endpoint else "the model"
        failed = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
        slow = " or allow it more time (--agent-arg timeout=SECONDS)" if "timeout" in kinds else ""
        super().__init__(
            f"cannot reach {where}: the first {sum(kinds.values())} episodes failed before any reply "
            f"({failed}). Start the server or fix the address (--base-url){slow}, then rerun the same "
            "command: those episodes are retried."
        )


class Sink:
    """Where finished records go, one at a time: appended to episodes.jsonl, to the records of the run,
    to the progress bar and to the caller's ``on_episode``.

    It also watches whether the model is reachable: when the first ``unreachable_after`` records of
    this run all failed before any reply (:data:`UNREACHED`), it raises
    :class:`ProviderUnreachableError` naming ``endpoint``: a dead or mistyped server stops the run
    after a few episodes, not after thousands of failed ones.
    """

    def __init__(
        self,
        path: Path,
        records: list[dict[str, Any]],
        on_episode: Callable[[dict[str, Any]], None] | None,
        bar: Progress | None,
        *,
        endpoint: str | None = None,
        unreachable_after: int = UNREACHABLE_AFTER,
    ) -> None:
        self.log = EpisodeLog(path)
        self.records, self.on_episode, self.bar = records, on_episode, bar
        self.lock = threading.Lock()
        self.closed = False
        self.endpoint, self.unreachable_after = endpoint, unreachable_after
        self.reached = False
        self.unreached: Counter[str] = Counter()

    def __call__(self, record: dict[str, Any]) -> None:
        with self.lock:
            if self.closed:  # finished after the run was interrupted or stopped: the rerun plays it
                return
            self.log.append(record)
            self.records.append(record)
            if self.bar is not None:
                self.bar.advance(record)
            if self.on_episode is not None:
                self.on_episode(record)
            self._watch(record)

    def _watch(self, record: dict[str, Any]) -> None:
        if self.reached or record.get("model_turns") == 0:  # no model was asked: no news of its server
            return
        kind = record.get("system_outcome")
        if kind not in UNREACHED:
            self.reached = True  # an answer came (even a refusal or an error status): the model is there
            return
        self.unreached[kind] += 1
        if self.unreached.total() >= self.unreachable_after:
            raise ProviderUnreachableError(self.endpoint, self.unreached)

    def close(self) -> None:
        with self.lock:
            if not self.closed:
                self.closed = True
                self.log.close()


def sequential(
    make_env: Callable[[], Any],
    agent: Any,
    todo: list[Job],
    seed: int,
    sink: Sink,
    play: Play = run_episode,
) -> None:
    """One episode after another on one env. ``play`` plays an episode (default: one agent on a
    Gymnasium env; the multi-agent runner passes its own, with ``agent`` every role's policies)."""
    env = make_env()
    try:
        for task_id, point in todo:
            sink(play(env, agent, task_id, seed, point))
    finally:
        env.close()


def threaded(
    make_env: Callable[[], Any],
    agent: Any,
    todo: list[Job],
    seed: int,
    sink: Sink,
    workers: int,
    play: Play = run_episode,
) -> None:
    """In-flight requests: each worker thread owns an env and an agent clone (``agent.clone()``), and
    plays its episodes with ``play`` (as :func:`sequential`).

    A worker that fails stops the others after their current episode, and its error is raised here.
    An interruption of the caller's thread (Ctrl-C) raises at once: the workers are daemon threads that
    stop taking episodes, and nothing waits for a request in flight (the process may exit)."""
    jobs: queue.Queue[Job] = queue.Queue()
    for job in todo:
        jobs.put(job)
    stop = threading.Event()
    errors: list[BaseException] = []

    def work() -> None:
        env: Any = None
        try:
            env, mine = make_env(), agent.clone()
            while not stop.is_set():
                try:
                    task_id, point = jobs.get_nowait()
                except queue.Empty:
                    return
                sink(play(env, mine, task_id, seed, point))
        except BaseException as exc:  # raised in the caller's thread, after the others stopped
            errors.append(exc)
            stop.set()
        finally:
            if env is not None:
                env.close()

    threads = [
        threading.Thread(target=work, name=f"tooltrap-episodes-{i}", daemon=True)
        for i in range(min(workers, len(todo)))
    ]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            # a join with a timeout, in a loop: a Ctrl-C the kernel hands to a worker thread only sets
            # Python's flag, and a main thread blocked in an untimed join would never look at it
            while thread.is_alive():
                thread.join(0.1)
    except BaseException:
        stop.set()
        raise
    if errors:
        raise errors[0]


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
