"""What holds after the user's answer, derived for every ambiguous task and every candidate; the user's
reply checks; the scripted baselines' ordering."""

from __future__ import annotations

import pytest

from tooltrap.envs.core import EnvUsageError
from tooltrap.envs.core.values import Fact
from tooltrap.envs.multiagent import sabench_dialogue_v0
from tooltrap.envs.multiagent.base import run_dialogue
from tooltrap.envs.multiagent.sabench.baselines import ASSISTANTS, make_assistant
from tooltrap.envs.multiagent.sabench.clarified import (
    _confined,
    _run,
    clarification,
    default_target,
    facts_of,
)
from tooltrap.envs.multiagent.sabench.metrics import dialogue_metrics
from tooltrap.envs.multiagent.sabench.users import (
    SABenchUserScript,
    ScriptedUser,
    leaked,
    named,
    scripted_answer,
)
from tooltrap.envs.sabench import packaged_tasks

AMBIGUOUS = [t for t in packaged_tasks("all") if t.labels.ambiguous]
PAIRS = [(t, c) for t in AMBIGUOUS for c in t.candidates]


def test_the_corpus_has_45_ambiguous_tasks():
    assert len(AMBIGUOUS) == 45 and all(len(t.candidates) >= 2 for t in AMBIGUOUS)


def test_every_ambiguous_task_and_candidate_gets_a_confined_request():
    for task, target in PAIRS:
        found = clarification(task, target)
        assert found.target == target and found.calls and found.authorized_writes and found.goal
        writes = _run(task, found.calls)
        assert writes is not None and _confined(writes, target), (task.id, target)
        # the careful calls write on the target itself or create a record about it
        ids = {target, target.partition("/")[2]}
        assert any(ids & {w.record.entity, *map(str, w.value.values())} for w in writes), (task.id, target)


def test_narrowing_changes_only_what_reaches_past_the_target():
    task = next(t for t in AMBIGUOUS if t.template_id == "cal-ambiguity-dependent-two-series")
    target = task.candidates[0]
    (cancel,) = clarification(task, target).calls
    assert cancel.arguments == {"event_id": target.partition("/")[2], "scope": "occurrence"}
    task = next(t for t in AMBIGUOUS if t.template_id == "tk-ambiguity-dependent-parent-child")
    parent = next(
        c for c in task.candidates if not task.initial_state.collections["tickets"][c[8:]]["parent_id"]
    )
    (close,) = clarification(task, parent).calls
    assert close.arguments["close_children"] is False and "notify_requester" not in close.arguments


def test_the_default_target_is_stable_and_spread_over_the_candidates():
    targets = [default_target(t) for t in AMBIGUOUS]
    assert targets == [default_target(t) for t in AMBIGUOUS]
    assert sum(t == task.candidates[0] for t, task in zip(targets, AMBIGUOUS, strict=True)) not in (0, 45)


def test_clear_tasks_have_nothing_to_clarify():
    clear = next(t for t in packaged_tasks("all") if not t.labels.ambiguous)
    with pytest.raises(EnvUsageError, match="not ambiguous"):
        clarification(clear)


def test_prose_is_checked_by_the_facts_it_states():
    assert facts_of("Good news: the fix is live in release 7.4.3. Please let us know.") == [
        Fact(kind="identifier", value="7.4.3")
    ]
    assert facts_of("Moved TKT-5117 to Friday, March 6 at 15:30.") == [
        Fact(kind="identifier", value="TKT-5117"),
        Fact.of("Friday, March 6"),
        Fact.of("15:30"),
    ]
    assert facts_of("Yes, go ahead.") == []


def test_the_scripted_answer_names_exactly_the_intended_target():
    for task, target in PAIRS:
        answer = scripted_answer(task, target)
        assert named(task, answer) == [target], (task.id, answer)
        assert leaked(answer) is None
        script = SABenchUserScript()
        variant = type("V", (), {"intended": target})()
        assert script.check_reply(task, variant, "Which one?", answer) is None
        other = next(c for c in task.candidates if c != target)
        kind, _ = script.check_reply(task, variant, "Which one?", scripted_answer(task, other))
        assert kind == "off_script"


def test_plain_words_do_not_name_a_candidate_and_tool_words_leak():
    task = next(t for t in AMBIGUOUS if t.template_id == "cal-ambiguity-independent-two-matches")
    assert named(task, "The one I mean is the one in the meeting, please.") == []
    assert leaked("Please reply_all to them") == "the tool vocabulary 'reply_all'"
    assert leaked("Reply to all of them") is None


@pytest.fixture(scope="module")
def baseline_runs():
    env = sabench_dialogue_v0.parallel_env()
    runs = {}
    for name in ASSISTANTS:
        runs[name] = [
            run_dialogue(
                env, {"assistant": make_assistant(name), "user": ScriptedUser()}, options={"task_index": i}
            )
            for i in range(len(env.inner.tasks))
        ]
    return runs


def test_scripted_baselines_over_the_corpus(baseline_runs):
    mean = {n: sum(e["rewards"]["assistant"] for e in eps) / len(eps) for n, eps in baseline_runs.items()}
    assert mean["gold"] > mean["clarify-then-act"] > mean["act-first"]
    gold = dialogue_metrics(baseline_runs["gold"])
    assert gold["goal"] == gold["goal_after_clarification"] == 1.0 and gold["cd"] == 0.0
    assert gold["questions_ambiguous"] == 1.0 and gold["questions_clear"] == 0.0
    act = dialogue_metrics(baseline_runs["act-first"])
    assert act["writes_before_answer"] == 1.0 and act["goal_after_clarification"] == 0.0
    ask = dialogue_metrics(baseline_runs["clarify-then-act"])
    assert ask["unnecessary_questions"] == 1.0 and ask["goal_after_clarification"] == 1.0
    for eps in baseline_runs.values():
        assert all(e["termination_reason"] == "assistant_stop" and not e["simulator_errors"] for e in eps)


def test_a_user_who_gives_up(baseline_runs):
    env = sabench_dialogue_v0.parallel_env(ambiguous=True)
    end = run_dialogue(env, {"assistant": make_assistant("gold"), "user": ScriptedUser(stop_after=0)}, seed=1)
    assert end["termination_reason"] == "user_stop" and end["verdict"]["clarification_proxy"]
    assert end["rewards"] == {"assistant": 1.0, "user": 1.0}
