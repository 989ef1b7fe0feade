"""Run a policy over a benchmark's tasks, streaming one JSON line per finished episode.

Results are appended (and flushed to disk) as each episode ends; running the same command again skips
the episodes already recorded, so an interrupted evaluation resumes where it stopped. With
``concurrency > 1`` several episodes run at once: batched generation for local models (one forward
pass serves every active episode), a thread pool of in-flight requests for HTTP agents.

Each episode is one (task, variant) point of a grid: ``variants`` lists the variant values to play
every selected task with (default: the env's default variant only). A record carries its ``point``
(the grid point as asked) and its ``variant`` (the variant the episode was played with, every default
filled in: the trace's), and a rerun skips the (task id, point) pairs already recorded.

A provider error or content-filter refusal ends the episode as a *system-level* outcome
(``system_outcome`` in the record); the report counts those apart from model behaviour. When the first
episodes of a call cannot reach the model at all (connection errors, timeouts), the call stops with
:class:`ProviderUnreachableError` naming the endpoint instead of failing every remaining episode.

This module is the runner: it validates, schedules (``_schedulers``), shows progress (``_progress``)
and leaves every file of the run folder (episodes.jsonl, run.json, summary.json) to
:mod:`tooltrap.wrappers.eval.run`, whose readers it re-exports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import gymnasium as gym

from tooltrap.agents import Agent
from tooltrap.envs.core import (
    EnvUsageError,
    UnknownNameError,
    UnknownOptionError,
    select_task_ids,
    variant_key,
)
from tooltrap.wrappers.eval.run import (
    EPISODES,
    RUN,
    SUMMARY,
    EpisodeFile,
    RunFolderError,
    RunMismatchError,
    check_out_dir,
    check_run_file,
    json_line,
    latest_records,
    prepare_resume,
    read_episodes,
    record_key,
    scan_episodes,
    write_summary,
)

from ._episode import Episode, Point, run_episode
from ._progress import Progress
from ._schedulers import ProviderUnreachableError, Sink, batched, sequential, threaded

#: what users import from here; the run folder's format lives in tooltrap.wrappers.eval.run
__all__ = [
    "EPISODES",
    "HARNESSES",
    "RUN",
    "SUMMARY",
    "Episode",
    "EpisodeFile",
    "Point",
    "ProtocolPlanner",
    "ProviderUnreachableError",
    "RunFolderError",
    "RunMismatchError",
    "check_points",
    "evaluate",
    "evaluate_protocol",
    "json_line",
    "latest_records",
    "read_episodes",
    "record_key",
    "run_episode",
    "scan_episodes",
    "select_task_ids",
]


class ProtocolPlanner(Protocol):
    """An adaptive evaluation protocol (a benchmark's ``protocols``: name -> planner class, built with
    ``planner(seed=...)``): each round, the (task id, grid point) pairs to run next given the ledger
    of verdicts so far; an empty round ends the protocol."""

    def next_round(
        self, tasks: Sequence[Any], ledger: dict[tuple[str, str], Any]
    ) -> list[tuple[str, Point]]: ...


def _react(env: gym.Env) -> gym.Env:
    from tooltrap.wrappers.react import ReActFormat

    return ReActFormat(env)


#: how a model's turn is presented and read: native tool calling, or the prompted ReAct format
HARNESSES: dict[str, Callable[[gym.Env], gym.Env]] = {"native": lambda env: env, "react": _react}
#: where the episodes run: this process, or Ray actors (tooltrap._ray)
BACKENDS: tuple[str, ...] = ("local", "ray")


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


def _check_harness(agent: Agent, harness: str) -> None:
    """A prompted harness hands the agent prose to answer in prose: a scripted policy, which writes
    JSON calls from the tool schemas, would play 0-step episodes scored as if they were its own."""
    if harness not in HARNESSES:
        raise UnknownOptionError(harness, HARNESSES, what="harness")
    if harness != "native" and not getattr(agent, "writes_text", False):
        name = agent.describe().get("name", type(agent).__name__)
        raise EnvUsageError(
            f"--harness {harness} prompts a model in text; {name} is a scripted policy that writes JSON "
            "tool calls and cannot play it. Use --harness native, or a model agent (openai:MODEL, hf:PATH)."
        )


def _endpoint(agent: Agent) -> str | None:
    """Where a model agent is reached (its transport settings, e.g. the server URL), or None."""
    described = agent.describe()
    keys = getattr(agent, "transport_keys", ())
    parts = [str(described[k]) for k in keys if described.get(k) is not None]
    return ", ".join(parts) or None


def _run_grid(
    env_id: str,
    agent: Agent,
    out_dir: str | Path,
    *,
    seed: int,
    tasks: str | None,
    variants: Sequence[Point] | None,
    env_kwargs: dict[str, Any] | None,
    mitigation: str | None,
    concurrency: int,
    on_episode: Callable[[dict[str, Any]], None] | None,
    progress: bool,
    log: Callable[[str], None] | None,
    pairs: Sequence[tuple[str, Point]] | None,
    known_records: list[dict[str, Any]] | None,
    harness: str,
    protocol: str | None = None,
    backend: str = "local",
    ray_address: str | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """:func:`evaluate` without its summary: (benchmark name, records of the grid). With ``pairs``
    (a protocol's round) the work is those pairs; ``tasks`` and ``protocol`` still define the run."""
    from tooltrap import benchmark_report, check_env_id
    from tooltrap.wrappers.defenses import apply_defense

    check_env_id(env_id)
    _check_harness(agent, harness)
    if concurrency < 1:
        raise EnvUsageError(f"concurrency must be at least 1, got {concurrency}.")
    if backend not in BACKENDS:
        raise UnknownNameError("backend", backend, BACKENDS)
    if ray_address is not None and backend != "ray":
        raise EnvUsageError("ray_address (--ray-address) is for backend='ray' (--backend ray)")
    if backend == "ray":  # Ray, the cluster and the agent's way to the actors, before anything is written
        from ._ray import agent_factory, connect

        connect(ray_address)
        agent_factory(agent)

    def make_env() -> gym.Env:
        return HARNESSES[harness](apply_defense(gym.make(env_id, **(env_kwargs or {})), mitigation))

    probe = make_env()
    collection = probe.unwrapped.tasks  # type: ignore[attr-defined]
    wanted = select_task_ids(collection, tasks)
    if pairs is not None:
        known = set(collection.ids)
        unknown = sorted({t for t, _ in pairs} - known)
        if unknown:
            raise UnknownNameError("task", unknown[0], sorted(known))
        check_points(probe, [p for _, p in pairs])
    points = check_points(probe, variants or [{}])
    benchmark = probe.unwrapped.benchmark.name  # type: ignore[attr-defined]
    probe.close()

    out = Path(out_dir)
    check_out_dir(out)
    # everything that defines the run: a rerun must ask for the same (or a wider task selection or
    # grid, whose new episodes it adds); a protocol chooses its grid points itself
    identity = {
        "env_id": env_id,
        "agent": agent.describe(),
        "seed": seed,
        "env_kwargs": env_kwargs or {},
        "mitigation": mitigation or "none",
        "harness": harness,
        "protocol": protocol,
        "tasks": tasks,
        "variants": None if protocol else points,
    }
    grows = {
        "tasks": lambda was, now: set(select_task_ids(collection, was)) <= set(wanted),
        "variants": lambda was, now: {variant_key(p) for p in was} <= {variant_key(p) for p in now},
    }
    path = out / EPISODES
    transport = tuple(getattr(agent, "transport_keys", ()))
    if known_records is None:
        out.mkdir(parents=True, exist_ok=True)
        found = scan_episodes(path)
        check_run_file(
            out / RUN,
            identity,
            benchmark,
            has_records=bool(found.records),
            transport=transport,
            grows=grows,
        )
        records = prepare_resume(path, found, log or (lambda message: None))
    else:
        records = known_records
    done = {record_key(r) for r in records}
    grid = list(pairs) if pairs is not None else [(task_id, point) for task_id in wanted for point in points]
    todo = [(t, p) for t, p in grid if (t, variant_key(p)) not in done]
    if log is not None and len(todo) < len(grid):
        log(f"resuming: {len(grid) - len(todo)} of {len(grid)} episodes done, {len(todo)} to run")
    bar = (
        Progress(
            f"{agent.describe()['name']} on {env_id}",
            len(grid),
            len(grid) - len(todo),
            records,
            benchmark_report(benchmark, env_id).progress_outcomes,
        )
        if progress and todo
        else None
    )
    sink = Sink(path, records, on_episode, bar, endpoint=_endpoint(agent))
    keep = {(t, variant_key(p)) for t, p in grid}
    try:
        if backend == "ray":
            from ._ray import pool_key, ray_actors

            settings = {
                "env_id": env_id,
                "env_kwargs": env_kwargs or {},
                "mitigation": mitigation,
                "harness": harness,
            }
            key = pool_key(settings, agent)
            ray_actors(make_env, agent, todo, seed, sink, concurrency, ray_address, key)
        elif concurrency > 1 and agent.batchable:
            batched(make_env, agent, todo, seed, sink, concurrency)
        elif concurrency > 1:
            threaded(make_env, agent, todo, seed, sink, concurrency)
        else:
            sequential(make_env, agent, todo, seed, sink)
    except ProviderUnreachableError as stop:  # the caller writes the summary of what was recorded
        stop.benchmark = benchmark
        stop.records = records if known_records is not None else [r for r in records if record_key(r) in keep]
        raise
    finally:
        sink.close()
        if bar is not None:
            bar.stop()
    if known_records is not None:
        return benchmark, records
    return benchmark, [r for r in records if record_key(r) in keep]


def _write_summary(
    out_dir: str | Path,
    benchmark: str,
    env_id: str,
    records: list[dict[str, Any]],
    resamples: int | None,
    seed: int,
) -> None:
    """summary.json of the records an evaluation returns (none written when it ran no episode)."""
    from tooltrap import benchmark_report
    from tooltrap.wrappers.eval.report import summary_of

    if records:
        report = benchmark_report(benchmark, env_id)
        write_summary(out_dir, summary_of(report, records, n_resamples=resamples, seed=seed))


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
    resamples: int | None = None,
    backend: str = "local",
    ray_address: str | None = None,
) -> list[dict[str, Any]]:
    """Evaluate ``agent`` on ``env_id`` over the selected tasks x ``variants`` (grid points; default:
    the default variant), or over explicit ``pairs`` of (task id, grid point); append to
    ``out_dir/episodes.jsonl``; write ``out_dir/summary.json`` (the benchmark's headline metrics over
    the returned records with ``resamples`` bootstrap resamples seeded with ``seed``; None: the
    benchmark report's default, ``tooltrap eval`` passes ``--resamples``, 10,000); return the records
    of this grid.

    Everything is validated (env id and kwargs, defense, harness, task selection, grid points,
    ``out_dir`` itself) before anything is written to ``out_dir``. A rerun resumes: it keeps the
    finished episodes, retries those that ended at the provider, and moves unreadable lines aside
    (``log`` hears about each of these). ``out_dir/run.json`` records everything that defines the run;
    a call that asks for another run there raises :class:`RunMismatchError` naming the difference (a
    wider task selection or grid is the same run grown: only its new episodes are played).
    ``known_records``: the records of ``out_dir`` as a previous call returned them (a protocol's later
    rounds), so the file is not read again; new records are appended to that list. ``harness``:
    ``native`` (tool schemas sent, tool calls parsed from the reply) or ``react`` (tools described in
    the prompt, the reply read as Thought / Action / Action Input / Final Answer, at most 5 model calls:
    :class:`~tooltrap.wrappers.react.ReActFormat`; a model agent only). ``backend``: ``local`` (this
    process: threads or batched generation, ``concurrency`` episodes at once) or ``ray`` (``concurrency``
    Ray actors, each with its own env and agent, on the cluster at ``ray_address`` or a local instance:
    :mod:`tooltrap._ray`); the records are the same either way, and a run resumes on either.

    Raises:
        ProviderUnreachableError: The first episodes of this call could not reach the model (connection
            errors, timeouts) and none did; their records and the summary are written, a rerun retries
            them.
        RunFolderError: ``out_dir`` is a file or a report folder, or holds another run
            (:class:`RunMismatchError`).
    """
    try:
        benchmark, records = _run_grid(
            env_id,
            agent,
            out_dir,
            seed=seed,
            tasks=tasks,
            variants=variants,
            env_kwargs=env_kwargs,
            mitigation=mitigation,
            concurrency=concurrency,
            on_episode=on_episode,
            progress=progress,
            log=log,
            pairs=pairs,
            known_records=known_records,
            harness=harness,
            backend=backend,
            ray_address=ray_address,
        )
    except ProviderUnreachableError as stop:
        _write_summary(out_dir, stop.benchmark, env_id, stop.records, resamples, seed)
        raise
    _write_summary(out_dir, benchmark, env_id, records, resamples, seed)
    return records


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
    resamples: int | None = None,
    backend: str = "local",
    ray_address: str | None = None,
) -> list[dict[str, Any]]:
    """Run a benchmark's adaptive protocol (its ``protocols``: name -> :class:`ProtocolPlanner` class):
    round by round, its planner picks the next (task, grid point) pairs from the ledger so far, and
    :func:`evaluate` runs them (same ledger, same resume rules). Stops when the planner has nothing
    left, or when a whole round ended at the provider (rerun the command to retry those episodes).
    Writes summary.json over, and returns, every record of the protocol."""
    from tooltrap import check_env_id

    check_env_id(env_id)
    probe = gym.make(env_id, **(env_kwargs or {}))
    base = probe.unwrapped
    benchmark = base.benchmark  # type: ignore[attr-defined]
    # a benchmark-owned hook: only benchmarks with an adaptive protocol declare one
    protocols: dict[str, Callable[..., ProtocolPlanner]] = getattr(benchmark, "protocols", {})
    if protocol not in protocols:
        raise UnknownNameError(f"protocol of {benchmark.name}", protocol, sorted(protocols))
    planner = protocols[protocol](seed=seed)
    wanted = set(select_task_ids(base.tasks, tasks))  # type: ignore[attr-defined]
    chosen = [t for t in base.tasks if t.id in wanted]  # type: ignore[attr-defined]
    probe.close()

    def run(pairs: list[tuple[str, Point]], known: list[dict[str, Any]] | None) -> None:
        _run_grid(
            env_id,
            agent,
            out_dir,
            seed=seed,
            tasks=tasks,
            variants=None,
            env_kwargs=env_kwargs,
            mitigation=mitigation,
            concurrency=concurrency,
            on_episode=None,
            progress=progress and bool(pairs),
            log=log,
            pairs=pairs,
            known_records=known,
            harness=harness,
            protocol=protocol,
            backend=backend,
            ray_address=ray_address,
        )

    # check the run, repair the ledger, then read it once: later rounds append to the same list
    run([], None)
    records: list[dict[str, Any]] = scan_episodes(Path(out_dir) / EPISODES).records
    ledger = {record_key(r): r["verdict"] for r in records}
    keep = {t.id for t in chosen}
    rounds = 0
    while True:
        todo = planner.next_round(chosen, ledger)
        if not todo:
            break
        rounds += 1
        before = len(records)
        try:
            run(todo, records)
        except ProviderUnreachableError:
            _write_summary(
                out_dir, benchmark.name, env_id, [r for r in records if r["task_id"] in keep], resamples, seed
            )
            raise
        batch = records[before:]
        ledger.update((record_key(r), r["verdict"]) for r in batch)
        if batch and all(r.get("system_outcome") for r in batch):
            if log is not None:
                log(f"round {rounds}: every episode ended at the provider; rerun to retry")
            break
    if log is not None:
        log(f"{protocol}: {len(ledger)} rollouts in the ledger after {rounds} rounds")
    chosen_records = [r for r in records if r["task_id"] in keep]
    _write_summary(out_dir, benchmark.name, env_id, chosen_records, resamples, seed)
    return chosen_records
