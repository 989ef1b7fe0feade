"""Run a policy over a benchmark's tasks, streaming one JSON line per finished episode.

Results are appended (and flushed to disk) as each episode ends; running the same command again skips
the episodes already recorded, so an interrupted evaluation resumes where it stopped.
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Callable, Iterable
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


def run_episode(env: gym.Env, agent: Agent, task_id: str, seed: int) -> dict[str, Any]:
    """Play one episode; return its JSON-ready record (verdict, reward and components, trace)."""
    base = env.unwrapped
    observation, info = env.reset(seed=seed, options={"task_id": task_id})
    task = base.task  # type: ignore[attr-defined]
    agent.reset(observation, info, task=task if agent.privileged else None, seed=seed)
    total = 0.0
    while True:
        action = agent.act(observation, info)
        observation, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        if terminated or truncated:
            break
    labels = task.label_dict()
    return {
        "task_id": task.id,
        "template_id": task.template_id,
        "domain": task.domain,
        **labels,
        "seed": seed,
        "reward": total,
        "reward_components": info["reward_components"],
        "verdict": info["verdict"],
        "trace": base.trace.to_dict(),  # type: ignore[attr-defined]
    }


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


def evaluate(
    env_id: str,
    agent: Agent,
    out_dir: str | Path,
    *,
    seed: int = 0,
    tasks: str | None = None,
    env_kwargs: dict[str, Any] | None = None,
    mitigation: str | None = None,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Evaluate ``agent`` on ``env_id``; append to ``out_dir/episodes.jsonl``; return all records."""
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
    from tooltrap.wrappers.defenses import apply_mitigation

    env = apply_mitigation(gym.make(env_id, **(env_kwargs or {})), mitigation)
    wanted = select_task_ids(env.unwrapped.tasks, tasks)  # type: ignore[attr-defined]
    path = out / EPISODES
    _repair(path)
    records = read_episodes(path)
    done = {r["task_id"] for r in records}
    todo = [t for t in wanted if t not in done]
    bar = None
    if progress and todo:
        from rich.progress import Progress

        bar = Progress(transient=True)
        bar.start()
        job = bar.add_task(f"{agent.name} on {env_id}", total=len(wanted), completed=len(wanted) - len(todo))
    try:
        with path.open("a", encoding="utf-8") as fh:
            for task_id in todo:
                record = run_episode(env, agent, task_id, seed)
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
                records.append(record)
                if on_episode is not None:
                    on_episode(record)
                if bar is not None:
                    bar.advance(job)
    finally:
        if bar is not None:
            bar.stop()
        env.close()
    keep = set(wanted)
    return [r for r in records if r["task_id"] in keep]
