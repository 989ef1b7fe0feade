"""Evaluate a multi-agent env (``tooltrap.envs.multiagent``) with one policy per role, in a run folder.

The run folder is the single-agent one (:mod:`tooltrap.wrappers.eval.run`): ``episodes.jsonl`` appended
and flushed as each episode ends, ``run.json`` holding everything that defines the run (here the env,
**every role's policy**, the seed, env kwargs and task selection), ``summary.json`` with the per-role
metrics and their cluster-bootstrap intervals (:mod:`tooltrap.wrappers.eval.multiagent`, the env's report
registered under its name). A rerun of
the same command resumes (the finished episodes are kept, a torn last line is moved aside, episodes a
provider ended are retried); a rerun with another policy for any role is refused naming the
difference. Each episode is one task of the env's corpus (the grid point is always the default: a
multi-agent env's variants are its roles' choices).

A provider error of a model-backed role ends the episode as a system-level outcome
(``system_outcome``, and ``failed_role``): counted apart, retried on a rerun, charged to no role. As in
the single-agent runner, episodes are played one after another or ``concurrency`` at a time in worker
threads (each with its own env and its own copy of every role's policy; model roles share their
client), and a run whose first episodes all fail to reach a model role's server stops with
:class:`~tooltrap._schedulers.ProviderUnreachableError` naming the server.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tooltrap.envs.core import EnvUsageError, select_task_ids
from tooltrap.envs.multiagent import make as make_multiagent
from tooltrap.wrappers.eval.run import (
    EPISODES,
    RUN,
    check_out_dir,
    check_run_file,
    prepare_resume,
    record_key,
    scan_episodes,
    write_summary,
)

#: a role's policy as the runner takes it: (the spec the user gave, the policy object)
RolePolicy = tuple[str, Any]


class RolePolicies:
    """Every role's policy, as one "agent" of the episode schedulers: :meth:`clone` gives a worker thread
    its own copy of each (a model role's clone shares its client and concurrency limit)."""

    def __init__(self, policies: Mapping[str, RolePolicy]):
        self.policies = dict(policies)

    def clone(self) -> RolePolicies:
        return RolePolicies(
            {
                role: (spec, policy.clone() if hasattr(policy, "clone") else copy.deepcopy(policy))
                for role, (spec, policy) in self.policies.items()
            }
        )

    def endpoint(self) -> str | None:
        """Where the model roles are reached (their servers), or None when every role is scripted."""
        found: list[str] = []
        for _, policy in self.policies.values():
            describe = getattr(policy, "describe", None)
            described = describe() if callable(describe) else {}
            for key in getattr(policy, "transport_keys", ()):
                value = described.get(key)
                if value is not None and str(value) not in found:
                    found.append(str(value))
        return ", ".join(found) or None


def corpus(env: Any) -> Any:
    """The task collection a multi-agent env plays (the arena's pool before any payload is planted)."""
    main = getattr(env, "main", None)
    return (main if main is not None else env.inner).tasks


def _simulator_errors(log: Mapping[str, Any], user_role: str = "user") -> dict[str, list[dict[str, Any]]]:
    """Role -> its rejected actions: a dialogue logs the user's as a list, an arena by role."""
    errors = log.get("simulator_errors") or {}
    return {user_role: list(errors)} if isinstance(errors, list) else {k: list(v) for k, v in errors.items()}


def episode_record(
    env: Any,
    env_name: str,
    task_id: str,
    seed: int,
    roles: Mapping[str, str],
    rewards: Mapping[str, float],
    infos: Mapping[str, Mapping[str, Any]],
    system_outcome: str | None = None,
    failed_role: str | None = None,
) -> dict[str, Any]:
    """One line of episodes.jsonl: the task (as asked: the arena plays a planted copy, ``played_task_id``),
    each role's policy, reward and reward components, the assistant's verdict, how the episode ended,
    the simulator errors by role, the env's log and the assistant's trace."""
    first = infos.get("assistant", {})
    log = first.get("dialogue") or first.get("arena") or {}
    task = env.task
    trace = env.trace
    asked = corpus(env).get(task_id) if hasattr(corpus(env), "get") else None
    labelled = asked if asked is not None else task
    return {
        "task_id": task_id,
        "played_task_id": task.id,
        "template_id": labelled.template_id,
        "domain": labelled.domain,
        **labelled.label_dict(),
        # the report is the env's (per role), not the single-agent benchmark's
        "benchmark": env_name,
        "env": env_name,
        "variant": dict(trace.variant) if trace is not None else {},
        "point": {},
        "instruction": getattr(task, "instruction", ""),
        "seed": seed,
        "roles": dict(roles),
        "rewards": {role: float(r) for role, r in rewards.items()},
        "reward": float(rewards.get("assistant", 0.0)),
        "reward_components": {role: dict(i.get("reward_components") or {}) for role, i in infos.items()},
        "verdict": dict(first.get("verdict") or {}),
        "termination_reason": first.get("termination_reason"),
        "void": bool(first.get("void", False)),
        "simulator_errors": _simulator_errors(log),
        "log": dict(log),
        "system_outcome": system_outcome,
        "failed_role": failed_role,
        "trace": trace.to_dict() if trace is not None else None,
    }


def play(
    env: Any, env_name: str, policies: Mapping[str, RolePolicy], task_id: str, seed: int
) -> dict[str, Any]:
    """Play one episode of ``task_id``; its record. A provider error of a model-backed role ends it as a
    system-level outcome (the assistant's episode aborted so its trace is whole)."""
    from tooltrap.agents import PREFIXES
    from tooltrap.agents.llm import ProviderError
    from tooltrap.envs.multiagent.base import run_turns

    roles = {role: spec for role, (spec, _) in policies.items()}
    turns: dict[str, int] = dict.fromkeys(roles, 0)
    playing = {role: _Counted(policy, role, turns) for role, (_, policy) in policies.items()}
    try:
        rewards, infos = run_turns(env, playing, seed=seed, options={"task_id": task_id})
        system_outcome = failed = None
    except ProviderError as err:
        system_outcome, failed = err.kind, env.turn
        inner = env.inner
        if inner.trace is not None and not inner.done:
            inner.abort(f"system:{err.kind}")
        rewards = dict.fromkeys(env.possible_agents, 0.0)
        infos = {role: {"termination_reason": f"system:{err.kind}"} for role in env.possible_agents}
    record = episode_record(env, env_name, task_id, seed, roles, rewards, infos, system_outcome, failed)
    record["turns"] = turns
    # whether a model was asked at all: an episode whose model roles never got a turn (a gate asked
    # about nothing) says nothing about whether their server can be reached
    record["model_turns"] = sum(n for role, n in turns.items() if roles[role].startswith(PREFIXES))
    return record


class _Counted:
    """A role's policy as :func:`~tooltrap.envs.multiagent.base.run_turns` plays it, counting its turns."""

    def __init__(self, policy: Any, role: str, turns: dict[str, int]):
        self.policy, self.role, self.turns = policy, role, turns
        self.privileged = getattr(policy, "privileged", False)

    def reset(self, *args: Any, **kwargs: Any) -> None:
        if hasattr(self.policy, "reset"):
            self.policy.reset(*args, **kwargs)

    def act(self, observation: str, info: dict[str, Any]) -> Any:
        self.turns[self.role] += 1  # counted before it is asked: a turn whose request failed is a turn
        act = self.policy.act if hasattr(self.policy, "act") else self.policy
        return act(observation, info)


def evaluate_roles(
    env_name: str,
    policies: Mapping[str, RolePolicy],
    out_dir: str | Path,
    *,
    seed: int = 0,
    tasks: str | None = None,
    env_kwargs: dict[str, Any] | None = None,
    identities: Mapping[str, dict[str, Any]] | None = None,
    log: Callable[[str], None] | None = None,
    on_episode: Callable[[dict[str, Any]], None] | None = None,
    resamples: int | None = None,
    concurrency: int = 1,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Evaluate multi-agent env ``env_name`` with one policy per role over the selected tasks; append to
    ``out_dir/episodes.jsonl``, write ``summary.json`` (the env's per-role report), return the records of
    this selection.

    Args:
        env_name: A key of :data:`tooltrap.envs.multiagent.ENVS`.
        policies: Role -> (spec, policy), every role of the env.
        out_dir: The run folder (created; a rerun resumes).
        seed: Episode and bootstrap seed.
        tasks: Task selection (``tooltrap eval --tasks``).
        env_kwargs: The env's keyword arguments.
        identities: Role -> what identifies its policy in run.json (default ``{"name": spec}``).
        log: Hears about resuming and repairs.
        on_episode: Called with each new record.
        resamples: Bootstrap resamples of the summary (None: the report's default).
        concurrency: Episodes in flight (worker threads, each with its own env and policies).
        progress: Show a progress bar.

    Raises:
        RunMismatchError: ``out_dir`` holds another run (another env, a role's policy, seed ...).
        EnvUsageError: A role is missing or unknown, a bad env kwarg or task selection.
        ProviderUnreachableError: The first episodes could not reach a model role's server (their
            records are written, the summary of what was recorded too; a rerun retries them).
    """
    env = make_multiagent(env_name, **(env_kwargs or {}))
    roles = list(env.possible_agents)
    unknown, missing = sorted(set(policies) - set(roles)), [r for r in roles if r not in policies]
    if unknown or missing:
        raise EnvUsageError(
            f"{env_name} has the roles {', '.join(roles)}: "
            + (f"unknown {unknown} " if unknown else "")
            + (f"missing {missing}" if missing else "")
        )
    collection = corpus(env)
    wanted = select_task_ids(collection, tasks)
    out = Path(out_dir)
    check_out_dir(out)
    shown = {role: dict((identities or {}).get(role) or {"name": policies[role][0]}) for role in roles}
    identity = {
        "env_id": env_name,
        # the run's display name (reports' columns): every role's policy
        "agent": {"name": " ".join(f"{role}={policies[role][0]}" for role in roles)},
        "roles": shown,
        "seed": seed,
        "env_kwargs": env_kwargs or {},
        "tasks": tasks,
    }
    grows = {"tasks": lambda was, now: set(select_task_ids(collection, was)) <= set(wanted)}
    out.mkdir(parents=True, exist_ok=True)
    path = out / EPISODES
    found = scan_episodes(path)
    check_run_file(out / RUN, identity, env_name, has_records=bool(found.records), grows=grows)
    records = prepare_resume(path, found, log or (lambda message: None))
    done = {record_key(r)[0] for r in records}
    todo = [t for t in wanted if t not in done]
    if log is not None and len(todo) < len(wanted):
        log(f"resuming: {len(wanted) - len(todo)} of {len(wanted)} episodes done, {len(todo)} to run")
    from tooltrap._progress import Progress
    from tooltrap._schedulers import ProviderUnreachableError, Sink, sequential, threaded

    from ._registration import benchmark_report

    report = benchmark_report(env_name)
    roles_set = RolePolicies(policies)
    bar = (
        Progress(
            f"{identity['agent']['name']} on {env_name}",
            len(wanted),
            len(wanted) - len(todo),
            [r for r in records if r["task_id"] in set(wanted)],
            report.progress_outcomes,
        )
        if progress and todo
        else None
    )
    sink = Sink(path, records, on_episode, bar, endpoint=roles_set.endpoint())
    jobs = [(task_id, {}) for task_id in todo]

    def play_roles(env_: Any, roles_: RolePolicies, task_id: str, seed_: int, point: Any) -> dict[str, Any]:
        return play(env_, env_name, roles_.policies, task_id, seed_)

    first = [env]  # the env built above plays the first (or only) worker's episodes

    def make_env() -> Any:
        return first.pop() if first else make_multiagent(env_name, **(env_kwargs or {}))

    try:
        if concurrency > 1 and len(jobs) > 1:
            threaded(make_env, roles_set, jobs, seed, sink, concurrency, play=play_roles)
        else:
            sequential(make_env, roles_set, jobs, seed, sink, play=play_roles)
    except ProviderUnreachableError as stop:
        keep = set(wanted)
        stop.benchmark, stop.records = env_name, [r for r in records if r["task_id"] in keep]
        _summarize(out, report, stop.records, resamples, seed)
        raise
    finally:
        sink.close()
        if bar is not None:
            bar.stop()
        for unused in first:
            unused.close()
    keep = set(wanted)
    chosen = [r for r in records if r["task_id"] in keep]
    _summarize(out, report, chosen, resamples, seed)
    return chosen


def _summarize(
    out: Path, report: Any, records: list[dict[str, Any]], resamples: int | None, seed: int
) -> None:
    if records:
        from tooltrap.wrappers.eval.report import summary_of

        write_summary(out, summary_of(report, records, n_resamples=resamples, seed=seed))
