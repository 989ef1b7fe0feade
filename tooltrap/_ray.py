"""Ray scale-out for evaluation (``tooltrap eval ... --backend ray``, the ``ray`` extra).

Episodes are spread over Ray actors, each holding one env and one copy of the agent, built inside the
actor: a model agent made from a spec (``openai:MODEL``, ``hf:DIR``, a baseline name) is rebuilt there
from that spec and its options (:attr:`~tooltrap.agents.registry.AgentRecipe`), so its HTTP client or
its weights never travel; any other agent travels as a pickled clone. The driver hands each actor one
episode at a time and gives every record to the same :class:`~tooltrap._schedulers.Sink` as the
in-process schedulers: ``episodes.jsonl`` holds the same records as a local run (in completion order:
sorted by task and grid point they are identical), resume works across backends (the backend is not part
of a run's identity), and an unreachable model stops the run after its first episodes as locally.

Where the episodes run: ``address=None`` starts (or joins, when ``RAY_ADDRESS`` is set) a local Ray
instance; ``"HOST:PORT"`` joins a cluster's head node (its GCS port, 6379 by default) and
``"ray://HOST:PORT"`` goes through the Ray Client (10001). The address is reached with a plain TCP
connection first: Ray itself retries an unreachable address for minutes, we fail in seconds naming it.
Every node needs tooltrap installed in the same version (the same image or virtualenv, or a
``runtime_env``), and a model server reachable from the nodes (pass a ``--base-url`` they can reach).
"""

from __future__ import annotations

import json
import os
import pickle
import socket
import sys
from collections.abc import Callable
from typing import Any

from tooltrap.envs.core import EnvUsageError, TooltrapError

from ._schedulers import Job, Sink

#: seconds to wait for a TCP connection to the cluster's address before saying it cannot be reached
CONNECT_TIMEOUT_S = 5.0


class RayUnavailableError(TooltrapError, RuntimeError):
    """Ray is not installed, or the cluster at the given address cannot be reached."""


def _import_ray() -> Any:
    try:
        import ray
    except ModuleNotFoundError:
        raise RayUnavailableError(
            "--backend ray needs Ray: pip install 'tooltrap[ray]' (on every node of the cluster too)."
        ) from None
    return ray


def _host_port(address: str) -> tuple[str, int]:
    """(host, port) of a Ray address: ``HOST:PORT``, ``ray://HOST:PORT`` (default ports 6379 and 10001)."""
    client = address.startswith("ray://")
    rest = address[len("ray://") :] if client else address
    host, colon, port = rest.rpartition(":")
    if not colon:
        host, port = rest, "10001" if client else "6379"
    if not host or not port.isdigit():
        raise EnvUsageError(
            f"--ray-address {address!r}: expected HOST:PORT (a head node's GCS port) or ray://HOST:PORT."
        )
    return host.strip("[]"), int(port)


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Raise :class:`RayUnavailableError` unless a TCP connection to ``address`` opens within ``timeout``."""
    host, port = _host_port(address)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return
    except OSError as err:
        raise RayUnavailableError(
            f"cannot reach the Ray cluster at {address} ({err.strerror or err}): start it (ray start --head) "
            "or fix --ray-address; nothing was run."
        ) from None


def connect(address: str | None) -> Any:
    """The ``ray`` module, connected: an instance this process already joined is used as it is (a test's
    ``ray.cluster_utils.Cluster``); else ``address`` (checked first) or a local instance."""
    ray = _import_ray()
    if ray.is_initialized():
        return ray
    if address not in (None, "auto"):
        check_reachable(address)
    elif address == "auto" and os.environ.get("RAY_ADDRESS"):
        check_reachable(os.environ["RAY_ADDRESS"])
    ray.init(address=address, log_to_driver=False, include_dashboard=False, configure_logging=False)
    return ray


def agent_factory(agent: Any) -> Callable[[], Any]:
    """How an actor gets its own agent: rebuilt from the spec it was made from, or a pickled clone.

    Raises:
        EnvUsageError: The agent was not made from a spec and cannot be pickled.
    """
    recipe = getattr(agent, "recipe", None)
    if recipe is not None:
        return recipe.build
    try:
        clone = agent.clone()
        pickle.dumps(clone)
    except Exception as err:
        raise EnvUsageError(
            f"--backend ray sends the agent to each actor: {type(agent).__name__} cannot be pickled ({err}). "
            "Make it with tooltrap.agents.make_agent (it is rebuilt in each actor) or make it picklable."
        ) from None
    return lambda: clone.clone()


class EpisodeActor:
    """One Ray actor: an env and an agent of its own, playing the episodes the driver hands it."""

    def __init__(self, make_env: Callable[[], Any], make_agent: Callable[[], Any]) -> None:
        self.env, self.agent = make_env(), make_agent()

    def play(self, task_id: str, seed: int, point: dict[str, Any]) -> dict[str, Any]:
        from ._episode import run_episode

        return run_episode(self.env, self.agent, task_id, seed, point)

    def close(self) -> None:
        self.env.close()


def _result(ray: Any, ref: Any) -> dict[str, Any]:
    """An actor's record; its error as the error it raised (not Ray's wrapper), a lost actor as ours."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as err:
        raise err.as_instanceof_cause() from None
    except ray.exceptions.RayActorError as err:
        raise RayUnavailableError(
            f"a Ray actor was lost ({type(err).__name__}): its node died or ran out of memory. The records "
            "so far are kept: rerun the same command to play the rest."
        ) from None


#: actors kept for the next call in this process, by what they hold (env settings, agent recipe): a
#: protocol's rounds, or a script's runs, reuse them instead of starting new ones each time
_POOLS: dict[str, list[Any]] = {}


def shutdown_actors() -> None:
    """Kill the actors kept for later calls (they also end with the Ray session or the process)."""
    ray = sys.modules.get("ray")
    for workers in _POOLS.values():
        for worker in workers:
            if ray is not None and ray.is_initialized():
                ray.kill(worker)
    _POOLS.clear()


def pool_key(settings: dict[str, Any], agent: Any) -> str | None:
    """What a kept actor must hold to serve a call: the env's settings and the agent's recipe (None:
    an agent without a recipe travels as a pickle, and its actors are not kept)."""
    recipe = getattr(agent, "recipe", None)
    if recipe is None:
        return None
    try:
        return json.dumps(
            {"env": settings, "agent": [recipe.spec, recipe.benchmark, recipe.options]}, sort_keys=True
        )
    except TypeError:  # an option that is not JSON (a Python object): not kept
        return None


def ray_actors(
    make_env: Callable[[], Any],
    agent: Any,
    todo: list[Job],
    seed: int,
    sink: Sink,
    actors: int,
    address: str | None = None,
    key: str | None = None,
) -> None:
    """Play ``todo`` on ``actors`` Ray actors (at most one per episode), each episode's record to ``sink``
    as it comes back. With ``key`` (:func:`pool_key`) the actors are kept for the next call with the same
    key; an error in an actor, the sink's stop (an unreachable model) or an interruption (Ctrl-C) kills
    them, and is raised here."""
    if not todo:
        return
    ray = connect(address)
    if key is not None:  # actors live in one Ray session: a later session (another cluster) starts anew
        key = f"{ray.get_runtime_context().get_job_id()}|{key}"
    wanted = min(actors, len(todo))
    kept = _POOLS.pop(key, []) if key is not None else []
    if len(kept) < wanted:
        remote = ray.remote(EpisodeActor)
        build_agent = agent_factory(agent)
        kept += [remote.remote(make_env, build_agent) for _ in range(wanted - len(kept))]
    workers, spare = kept[:wanted], kept[wanted:]
    pending = list(reversed(todo))
    in_flight: dict[Any, Any] = {}
    finished = False
    try:
        for worker in workers:
            task_id, point = pending.pop()
            in_flight[worker.play.remote(task_id, seed, point)] = worker
            if not pending:
                break
        while in_flight:
            # a timeout, in a loop: a Ctrl-C reaches Python between two waits
            done, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.5)
            for ref in done:
                worker = in_flight.pop(ref)
                sink(_result(ray, ref))
                if pending:
                    task_id, point = pending.pop()
                    in_flight[worker.play.remote(task_id, seed, point)] = worker
        finished = True
    finally:
        if finished and key is not None:
            _POOLS[key] = workers + spare  # idle, each between two episodes: safe to hand the next call
        else:
            for worker in workers + spare:
                ray.kill(worker)
