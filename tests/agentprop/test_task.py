"""AgentProp-Bench tasks: the counts the issue names, generated deterministically, packaged current;
every gold answer passes the deterministic checker; each injection type applied to gold's first call
changes what the gold trajectory observes (or is reported not applicable)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tooltrap.envs.agentprop import inject
from tooltrap.envs.agentprop.authoring.generate import generate, render_tasks
from tooltrap.envs.agentprop.judge import check_answer
from tooltrap.envs.agentprop.task import Fact, packaged_tasks
from tooltrap.envs.agentprop.tools.simulators import BACKENDS
from tooltrap.envs.core import Benchmark, Executor, Toolset


class _Sim(Benchmark):
    backends = BACKENDS


@pytest.fixture(scope="module")
def tasks():
    return packaged_tasks()


def test_counts_and_difficulties(tasks):
    counts = Counter(t.domain for t in tasks)
    assert counts == {"weather": 674, "calendar": 667, "medical": 559, "knowledge": 100, "retail": 300}
    assert sum(counts[d] for d in ("weather", "calendar", "medical", "knowledge")) == 2000
    assert all(t.held_out == (t.domain == "retail") for t in tasks)
    calls = {t.difficulty: set() for t in tasks}
    for t in tasks:
        calls[t.difficulty].add(len(t.gold) - 1)
    assert calls["easy"] == {1} and calls["medium"] == {2} and min(calls["hard"]) >= 3
    assert len({t.instruction for t in tasks}) == len(tasks)  # no task repeats another
    levels = Counter((t.domain, t.difficulty) for t in tasks)
    for domain in ("weather", "calendar", "medical", "retail"):  # knowledge has no three-tool template
        assert min(levels[(domain, level)] for level in ("easy", "medium", "hard")) >= 80, domain


def test_generation_is_deterministic_and_packaged_current(tasks):
    again = generate(seed=0)
    assert render_tasks(again) == render_tasks(list(tasks))
    from pathlib import Path

    packaged = Path(__file__).parents[2] / "envs" / "agentprop" / "data" / "tasks.json"
    assert packaged.read_text(encoding="utf-8") == render_tasks(again), "run scripts/build.py agentprop"
    assert render_tasks(generate(seed=1)) != render_tasks(again)


def test_gold_answers_pass_and_wrong_ones_fail(tasks):
    for t in tasks:
        assert check_answer(t.reference_text, t.reference), t.id
        assert check_answer(t.gold[-1].arguments["answer"], t.reference), t.id
    assert not check_answer("", [Fact(kind="text", value="sunny")])
    assert not check_answer("It is 21 degrees.", [Fact(kind="number", value=12)])
    assert check_answer(
        "About 12.0 C, sunny", [Fact(kind="number", value=12), Fact(kind="text", value="Sunny")]
    )


def _observe(task, calls):
    executor = Executor(_Sim(), task, state=task.make_state())
    out = []
    for i, (name, arguments) in enumerate(calls):
        record = executor.execute(name, arguments, step=i, index=i)
        out.append(json.dumps(record.result if record.ok else record.error, sort_keys=True))
    return out


def test_each_injection_changes_what_gold_observes_or_is_not_applicable(tasks):
    toolset = Toolset(BACKENDS)
    outcome = Counter()
    for t in tasks[::7]:
        first = t.gold[0]
        schema = toolset[first.name].schema["function"]["parameters"]
        gold_seen = _observe(t, [(c.name, c.arguments) for c in t.gold[:-1]])
        for kind in ("type_mismatch", "out_of_range", "missing_required", "semantic_wrong"):
            injected = inject(kind, first.arguments, schema)
            if not injected.applicable:
                outcome[(kind, "not applicable")] += 1
                continue
            seen = _observe(
                t, [(first.name, injected.arguments)] + [(c.name, c.arguments) for c in t.gold[1:-1]]
            )
            assert seen[0] != gold_seen[0], (t.id, kind)  # the first observation differs
            outcome[(kind, "changed")] += 1
    assert outcome[("semantic_wrong", "changed")] and outcome[("missing_required", "changed")]
    assert outcome[("type_mismatch", "changed")] and outcome[("out_of_range", "changed")]
    assert (
        outcome[("missing_required", "not applicable")] == 0
        and outcome[("semantic_wrong", "not applicable")] == 0
    )


def test_reference_values_vary_within_each_template():
    """Issue 21: skipping the look-up must not pay. No reference value (a count, a severity, an id, a
    temperature) is shared by more than 60% of a template's tasks (templates of 8 or more tasks); the
    write outcome a delete task reports ("deleted") is judged from the state, not looked up."""
    from collections import Counter, defaultdict

    by_template: dict[str, list] = defaultdict(list)
    for task in packaged_tasks():
        by_template[task.template_id].append(task)
    constant = {}
    for template, tasks in by_template.items():
        if len(tasks) < 8:
            continue
        for position in range(max(len(t.reference) for t in tasks)):
            values = [str(t.reference[position].value) for t in tasks if len(t.reference) > position]
            value, n = Counter(values).most_common(1)[0]
            if value != "deleted" and len(values) >= 8 and n / len(values) > 0.6:
                constant[f"{template}[{position}]"] = f"{value}: {n}/{len(values)}"
    assert constant == {}


def test_every_requested_write_is_what_the_user_or_a_read_named(tasks):
    """Each argument value of a gold write (the requested write the judge checks field by field) comes
    from the request or from what an earlier gold call returned: an honest agent that writes exactly
    what was asked can meet the goal (a c_create gold once invited an attendee no request named)."""
    import gymnasium as gym

    import tooltrap

    gym.register_envs(tooltrap)
    envs = {"core": gym.make("AgentProp-v0"), "retail": gym.make("AgentProp-Retail-v0")}
    writes = {"create_event", "delete_event", "schedule_appointment", "place_order"}
    checked = Counter()
    for t in tasks:
        if not writes & {c.name for c in t.gold}:
            continue
        env = envs["retail" if t.domain == "retail" else "core"]
        env.reset(seed=0, options={"task_id": t.id})
        seen = t.instruction
        for call in t.gold[:-1]:
            if call.name in writes:
                for name, value in call.arguments.items():
                    for v in value if isinstance(value, list) else [value]:
                        # an enum value may be asked in words ("a follow-up" for follow_up)
                        said = {
                            str(v).lower(),
                            str(v).lower().replace("_", "-"),
                            str(v).lower().replace("_", " "),
                        }
                        assert any(x in seen.lower() for x in said), (
                            f"{t.id}: {call.name}.{name}={v!r} is in no request or result"
                        )
                checked[t.template_id] += 1
            seen += env.step(call.to_action())[0]
    assert checked["calendar:c_create"] == 222
