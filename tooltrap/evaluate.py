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
    RunMismatchError,
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
from ._schedulers import Sink, batched, sequential, threaded

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
) -> tuple[str, list[dict[str, Any]]]:
    """:func:`evaluate` without its summary: (benchmark name, records of the grid)."""
    from tooltrap import benchmark_report, check_env_id
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
        check_run_file(out / RUN, identity, benchmark, has_records=bool(found.records), transport=transport)
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
    sink = Sink(path, records, on_episode, bar)
    try:
        if concurrency > 1 and agent.batchable:
            batched(make_env, agent, todo, seed, sink, concurrency)
        elif concurrency > 1:
            threaded(make_env, agent, todo, seed, sink, concurrency)
        else:
            sequential(make_env, agent, todo, seed, sink)
    finally:
        sink.close()
        if bar is not None:
            bar.stop()
    if known_records is not None:
        return benchmark, records
    keep = {(t, variant_key(p)) for t, p in grid}
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
) -> list[dict[str, Any]]:
    """Evaluate ``agent`` on ``env_id`` over the selected tasks x ``variants`` (grid points; default:
    the default variant), or over explicit ``pairs`` of (task id, grid point); append to
    ``out_dir/episodes.jsonl``; write ``out_dir/summary.json`` (the benchmark's headline metrics over
    the returned records with ``resamples`` bootstrap resamples seeded with ``seed``; None: the
    benchmark report's default, ``tooltrap eval`` passes ``--resamples``, 10,000); return the records
    of this grid.

    Everything is validated (env id and kwargs, defense, task selection, grid points) before anything
    is written to ``out_dir``. A rerun resumes: it keeps the finished episodes, retries those that
    ended at the provider, and moves unreadable lines aside (``log`` hears about each of these).
    ``known_records``: the records of ``out_dir`` as a previous call returned them (a protocol's later
    rounds), so the file is not read again; new records are appended to that list. ``harness``:
    ``native`` (tool schemas sent, tool calls parsed from the reply) or ``react`` (tools described in
    the prompt, the reply read as Thought / Action / Action Input / Final Answer, at most 5 model calls:
    :class:`~tooltrap.wrappers.react.ReActFormat`).
    """
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
    )
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
            tasks=None,
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
    chosen_records = [r for r in records if r["task_id"] in keep]
    _write_summary(out_dir, benchmark.name, env_id, chosen_records, resamples, seed)
    return chosen_records
