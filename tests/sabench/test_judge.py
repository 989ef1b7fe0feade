from __future__ import annotations

import gymnasium as gym
import pytest

from tooltrap.agents import RandomAgent
from tooltrap.envs.core import Toolset, mutating_calls, replay
from tooltrap.envs.sabench import BACKENDS, benchmark, packaged_tasks
from tooltrap.envs.sabench.selfcheck import play
from tooltrap.evaluate import run_episode

from ..conftest import act

READ_TOOLS = [s.name for s in Toolset(BACKENDS).specs.values() if s.kind == "read"]


def test_reads_never_change_the_state_beyond_bookkeeping(calendar_env):
    from tooltrap.envs.core import Executor

    for task in list(calendar_env.unwrapped.tasks)[:10]:
        executor = Executor(benchmark(), task)
        ids = [i for c in task.initial_state.collections.values() for i in c]
        for name in READ_TOOLS:
            params = executor.toolset[name].parameters["properties"]
            for entity_id in ids:
                args = {
                    k: entity_id for k in ("event_id", "message_id", "ticket_id", "thread_id") if k in params
                }
                before = executor.state.hash()
                record = executor.execute(name, args, step=0, index=0)
                if name != "email_read":
                    assert executor.state.hash() == before, name
                    assert not record.writes
                else:
                    assert all(w.fields == ("read",) for w in record.writes)
        calendar_env.reset(options={"task_id": task.id})
        calendar_env.step(act("email_search", query=""))
        _, _, _, _, info = calendar_env.step(act("respond", message="nothing to do"))
        assert info["verdict"]["n_writes"] == 0


def test_replay_reproduces_the_live_state_and_is_idempotent():
    env = gym.make("SABench-Calendar-v0").unwrapped
    agent = RandomAgent(p_terminal=0.05, seed=11)
    bench = benchmark()
    checked = 0
    for task in env.tasks:
        run_episode(env, agent, task.id, seed=1)
        calls = mutating_calls(env.trace)
        first, _ = replay(bench, task, calls)
        second, _ = replay(bench, task, calls)
        assert first.hash() == second.hash() == env.state.hash()
        checked += bool(calls)
    assert checked > 0


def test_failed_and_idempotent_calls_are_ignored(calendar_env):
    task = packaged_tasks("calendar").select(templates=["cal-cascade-dependent-cancel-occurrence"])[0]
    target = task.gold[0].arguments["event_id"]
    calls = [
        {"name": "calendar_cancel_event", "arguments": {"event_id": "nope"}},
        task.gold[0].model_dump(),
        {
            "name": "calendar_cancel_event",
            "arguments": {"event_id": target, "scope": "occurrence"},
        },  # already cancelled
        {"name": "respond", "arguments": {"message": "ok"}},
    ]
    verdict, _, _ = play(calendar_env.unwrapped, task.id, calls)
    assert verdict.goal and not verdict.cd
    assert verdict.n_invalid_calls == 1


def test_scope_expansion_record_per_entity(calendar_env):
    task = packaged_tasks("calendar").select(templates=["cal-cascade-dependent-cancel-occurrence"])[0]
    verdict, reward, info = play(calendar_env.unwrapped, task.id, task.intent_calls())
    assert verdict.goal and verdict.cd
    entities = [v.write.entity for v in verdict.violations]
    assert len(entities) == len(set(entities))
    assert any(e.startswith("series/") for e in entities)
    assert sum(e.startswith("events/") for e in entities) >= 2
    assert {v.rule for v in verdict.violations} == {"scope_expansion"}


@pytest.mark.parametrize("family", ["ambiguity", "cascade", "mis_targeting", "overreach"])
def test_trap_rules_by_family(family):
    """Mechanical trap definitions: ambiguity -> unresolved_ambiguity on every write, mis-targeting
    -> wrong_entity (or tool boundary) on the decoy."""
    env = gym.make("SABench-Calendar-v0").unwrapped
    tasks = env.tasks.select(trap_family=family)
    assert len(tasks)
    for task in tasks:
        for trap in task.traps:
            verdict, _, _ = play(env, task.id, trap.calls)
            if family == "ambiguity":
                assert verdict.ab_violation and {v.rule for v in verdict.violations} == {
                    "unresolved_ambiguity"
                }
            if family == "mis_targeting":
                assert "wrong_entity" in verdict.rule_counts or "tool_boundary" in verdict.rule_counts


def test_episodes_never_mutate_task_data():
    """Copy-on-write is shallow (values are replaced, never mutated in place): prove the task data
    survives every agent on every task untouched."""
    from tooltrap.agents import make_agent
    from tooltrap.envs.core import canonical_json

    env = gym.make("SABench-Calendar-v0").unwrapped
    before = {t.id: canonical_json(t.initial_state.model_dump()) for t in env.tasks}
    for name in ("gold", "act-first", "random"):
        agent = make_agent(name)
        for task in env.tasks:
            run_episode(env, agent, task.id, seed=2)
            for trap in task.traps:
                play(env, task.id, trap.calls)
    assert before == {t.id: canonical_json(t.initial_state.model_dump()) for t in env.tasks}
