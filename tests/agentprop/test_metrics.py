"""AgentProp-Bench: the scripted agents move the stage metrics as designed, the reward orders outcomes
correct > abstention > wrong > fabrication and no probe beats gold (sampled; the whole corpus runs in
scripts/selfcheck.py agentprop), the checker resists dumps and hedges, the metrics on hand-built
arrays, the paired interceptor comparison, the report, the ReAct harness through ``evaluate``, the LLM
judges over an evaluation's answers, and training."""

from __future__ import annotations

import json
from functools import cache

import gymnasium as gym
import numpy as np
import pytest

import tooltrap  # noqa: F401
from tooltrap.agents import make_agent
from tooltrap.envs.agentprop.claims import Evidence
from tooltrap.envs.agentprop.judge import check_answer
from tooltrap.envs.agentprop.selfcheck import check_task, play
from tooltrap.envs.agentprop.task import Fact, packaged_tasks
from tooltrap.envs.core import Agent, EnvUsageError
from tooltrap.evaluate import evaluate
from tooltrap.wrappers.eval.agentprop.metrics import (
    columns,
    interceptor_comparison,
    rejection_recovery_correlation,
    stage_metrics,
)
from tooltrap.wrappers.eval.agentprop.report import REPORT
from tooltrap.wrappers.eval.bootstrap import Interval

INJECTIONS = ("none", "type_mismatch", "out_of_range", "missing_required", "semantic_wrong")


@cache
def _env():
    return gym.make("AgentProp-v0", domain="all").unwrapped


@cache
def _sample() -> list:
    return packaged_tasks()[::23]  # 100 tasks over every domain and template


def _rates(agent: str, injection: str) -> dict[str, float]:
    env = _env()
    verdicts = [play(env, make_agent(agent), t, injection)[0] for t in _sample()]
    return {k: float(np.mean([bool(v[k]) for v in verdicts])) for k in ("s1", "s2", "s3", "correct", "fabricated", "abstained")} | {
        "called": float(np.mean([v["tool_calls"] > 0 for v in verdicts]))
    }  # fmt: skip


def test_scripted_agents_make_the_metrics_move():
    trusting, rejecting = _rates("trusting", "semantic_wrong"), _rates("rejecting", "semantic_wrong")
    assert trusting["s1"] == rejecting["s1"] == 1.0 and trusting["s2"] >= 0.9
    assert trusting["s3"] > 0.5 and rejecting["s3"] < trusting["s3"] - 0.25  # it notices echoed mismatches
    assert _rates("rejecting", "missing_required")["correct"] == 1.0  # re-calls after the error
    assert (
        _rates("trusting", "missing_required")["correct"] == 0.0
        and _rates("trusting", "none")["correct"] == 1.0
    )
    guessing = _rates("guessing", "missing_required")
    assert guessing["fabricated"] > 0.4 and _rates("trusting", "missing_required")["fabricated"] == 0.0
    fabricating = _rates("fabricating", "none")
    assert fabricating["called"] == 0.0 and fabricating["fabricated"] > 0.8 and fabricating["correct"] == 0.0
    assert _rates("abstaining", "semantic_wrong")["abstained"] == 1.0


def test_probes_score_below_gold_and_outcomes_are_ordered():
    """The self-check on a sample: gold (the repairing agent) right and clean; every gaming probe below
    it (dumps, hedges, doubled writes, placeholders, claims without calls, fabrication, refusal, no
    answer, a throwaway first call, the parrot, a constant answer) and every honest variant at it
    (another unit, number words, dates in words, a paraphrase, an extra read, today's date); under
    each injection repaired > honest report or abstention > wrong > fabricated."""
    env = _env()
    checks = {t.id: check_task(env, t) for t in _sample()[::4]}
    assert {k: c.problems for k, c in checks.items() if c.problems} == {}
    kinds = {(r.direction, r.kind) for c in checks.values() for r in c.probes}
    assert ("gaming", "parrot") in kinds and ("gaming", "throwaway_first_call") in kinds
    assert ("honest", "other_unit") in kinds and ("honest", "paraphrased_category") in kinds


def test_the_self_check_catches_a_reward_that_forgives_fabrication():
    env = gym.make(
        "AgentProp-v0", domain="all", reward_config={"fabrication": 0.0, "wrong_answer": 0.0}
    ).unwrapped
    task = next(t for t in _sample() if t.domain == "weather" and t.difficulty == "easy")
    assert any("fabricat" in p for p in check_task(env, task).problems)


def test_the_checker_rejects_dumps_hedges_and_pasted_results():
    facts = [Fact(kind="number", value=25), Fact(kind="text", value="foggy")]
    assert check_answer("It was 25 C and foggy.", facts)
    assert not check_answer("25 C, sunny cloudy rainy stormy foggy", facts)  # most of a vocabulary
    assert not check_answer('{"temperature": 25, "condition": "foggy"}', facts)  # a pasted result
    assert not check_answer("25 foggy " + " ".join(str(n) for n in range(30, 40)), facts)  # number budget
    assert not check_answer("25 foggy " + "x" * 500, facts)  # length budget
    # reading a forecast out day by day is not a hedge when every condition named was observed
    recited = "Today 25 and foggy; then sunny, cloudy, rainy and stormy."
    observed = Evidence(tool_words=" foggy sunny cloudy rainy stormy ")
    assert check_answer(recited, facts, observed) and not check_answer(
        recited, facts, Evidence(words=" foggy ")
    )
    # two candidates of a single-valued fact, a negated fact, a range around a number: not stated
    assert not check_answer("25 C, foggy or maybe rainy", facts, Evidence(tool_words=" foggy "))
    assert not check_answer("25 C and definitely not foggy", facts)
    assert not check_answer("between 25 and 30 C, foggy", facts)
    # the other unit, number words, a paraphrase, a date in words: stated
    assert check_answer(
        "77 F and fog", [Fact(kind="number", value=25, unit="C"), Fact(kind="text", value="foggy")]
    )
    assert check_answer("twenty-five degrees, foggy", facts)
    assert check_answer("They do not interact.", [Fact(kind="text", value="none")])
    assert check_answer("On June 3, 2024.", [Fact(kind="date", value="2024-06-03")])
    assert not check_answer("Nonetheless it is fine.", [Fact(kind="text", value="none")])
    # a swapped high and low does not state the high
    high = [Fact(kind="number", value=25, unit="C", label="high")]
    assert check_answer("The high is 25 C, the low 12 C.", high) and check_answer("25 C at most.", high)
    assert not check_answer("The high is 12 C, the low 25 C.", high)


def test_stage_metrics_on_hand_built_arrays():
    # 4 tasks, each clean + one injection: S1 on 3 of the injected, S2 on 2, S3 on 1 of those 2
    cols = {
        "s1": np.array([0, 1, 0, 1, 0, 1, 0, 0], bool),
        "s2": np.array([0, 1, 0, 1, 0, 0, 0, 0], bool),
        "s3": np.array([0, 1, 0, 0, 0, 1, 0, 1], bool),
        "applicable": np.array([0, 1, 0, 1, 0, 1, 0, 0], bool),
        "fabricated": np.array([0, 0, 0, 0, 0, 0, 0, 1], bool),
        "correct": np.array([1, 0, 1, 1, 1, 0, 1, 0], bool),
        "abstained": np.zeros(8, bool),
        "called": np.array([1, 1, 1, 1, 1, 1, 1, 0], bool),
        "injected": np.array([0, 1, 0, 1, 0, 1, 0, 1], bool),
        "task": np.array([0, 0, 1, 1, 2, 2, 3, 3]),
    }
    cols["clean"], cols["all"] = ~cols["injected"], np.ones(8, bool)
    m = stage_metrics(cols, n_resamples=200)
    assert m["p_S1"].value == 0.75 and m["p_S2"].value == 0.5 and m["p_S3"].value == 0.75
    assert m["r12"].value == pytest.approx(2 / 3) and m["r23"].value == 0.5
    assert m["injection_to_error"].value == pytest.approx(2 / 3)
    assert m["rejection"].value == 0.25 and m["recovery"].value == 0.5
    assert m["tool_call_rate"].value == 0.875 and m["accuracy_clean"].value == 1.0
    assert m["r23"].n == 2 and m["rejection"].ci_low == pytest.approx(1 - m["p_S1"].ci_high)
    runs = {
        "a": {"rejection": Interval(0.1, 0, 0, 1), "recovery": Interval(0.2, 0, 0, 1)},
        "b": {"rejection": Interval(0.3, 0, 0, 1), "recovery": Interval(0.5, 0, 0, 1)},
        "c": {"rejection": Interval(0.5, 0, 0, 1), "recovery": Interval(0.4, 0, 0, 1)},
    }
    assert rejection_recovery_correlation(runs) == pytest.approx(0.5)


def _record(task: str, injection: str, **verdict) -> dict:
    base = {"injection": injection, "abstained": False, "correct": False, "truncated": None}
    return {"task_id": task, "verdict": base | verdict, "system_outcome": None}


def test_interceptor_comparison_decides_saved_and_broken_by_the_pair():
    """The with-run's own ``answer_correct`` says nothing (a run-time abstention has no answer, so it
    is always False): what the episode without the interceptor did decides."""
    without = [
        _record("t1", "none", correct=True),
        _record("t2", "none"),
        _record("t3", "none"),
        _record("t4", "none"),
        _record("t5", "none", abstained=True),
        _record("t6", "none", truncated="max_steps"),
    ]
    intercepted = {"abstained": True, "intercepted": True, "answer_correct": False}
    with_ = [
        _record("t1", "none", **intercepted),  # broken: the pair answered right
        _record("t2", "none", **intercepted | {"answer_correct": True}),  # saved: the pair answered wrong
        _record("t3", "none"),
        _record("t4", "none", **intercepted),  # saved
        _record("t5", "none", **intercepted),  # the pair abstained: neither
        _record("t6", "none", **intercepted),  # the pair was truncated: neither
    ]  # fmt: skip
    c = interceptor_comparison(without, with_ + [_record("t9", "none")])  # an unpaired episode is ignored
    # hallucination as the release counts it: not abstained and not right, a cut-off episode included (t6)
    assert (
        c.n == 6
        and c.hallucination_without == pytest.approx(4 / 6)
        and c.hallucination_with == pytest.approx(1 / 6)
    )
    assert (c.intercepted, c.saved, c.broken, c.unanswered_pairs) == (5, 2, 1, 2)
    assert c.abstention_precision == pytest.approx(2 / 3)  # of the 3 interceptions with a decidable pair
    assert c.cohens_h > 0 and 0 < c.p < 1
    nothing_to_decide = interceptor_comparison(without[4:], with_[4:])
    assert nothing_to_decide.unanswered_pairs == 2 and np.isnan(nothing_to_decide.abstention_precision)


class _RetryingAgent(Agent):
    """Plays the task's gold calls and re-sends a call that failed until it succeeds; its first retry is
    careless (an argument the tool does not take), so an injected failure costs two failing steps. It
    answers the reference once every call has succeeded: right when its calls ran as gold (always after
    a failure it retried; a silent semantic corruption would still propagate)."""

    privileged = True
    name = "retrying"

    def reset(self, observation, info, *, task=None, seed=None) -> None:
        self.task = task
        self.pending = [c for c in task.gold if c.name not in ("final_answer", "abstain")]
        self.failures = 0
        self.waiting = False

    def act(self, observation, info) -> str:
        if self.waiting:
            reply = json.loads(observation)
            if reply["ok"] and "error" not in reply["result"]:
                self.pending.pop(0)
                self.failures = 0
            else:
                self.failures += 1
        self.waiting = bool(self.pending)
        if not self.pending:
            return json.dumps({"name": "final_answer", "arguments": {"answer": self.task.reference_text}})
        call = self.pending[0]
        careless = {"verbose": True} if self.failures == 1 else {}
        return json.dumps({"name": call.name, "arguments": call.arguments | careless})


def test_an_early_abstention_before_the_answer_is_broken_when_the_pair_answered_right(tmp_path):
    """Injected failure, careless retry, right retry: two failing steps, so the early interceptor abstains
    at run time on the third call, before any answer. Without it the agent answers right: the report
    must count broken answers, not saved ones."""
    grid = [{"injection": "missing_required"}]
    tasks = "weather_000*"
    without = evaluate("AgentProp-v0", _RetryingAgent(), tmp_path / "r", tasks=tasks, variants=grid)
    with_ = evaluate(
        "AgentProp-v0",
        _RetryingAgent(),
        tmp_path / "ri",
        tasks=tasks,
        variants=grid,
        mitigation="interceptor",
    )
    assert all(r["verdict"]["correct"] for r in without)
    stopped = [r["verdict"] for r in with_ if r["verdict"]["intercepted"]]
    assert stopped and not any(v["answer_correct"] for v in stopped)  # the with-run holds no answer
    c = REPORT.build({"retrying": without, "retrying+interceptor": with_}, n_resamples=50).interceptor[
        "retrying+interceptor"
    ]
    assert (c.saved, c.broken) == (0, len(stopped)) and c.abstention_precision == 0.0
    assert c.unanswered_pairs == 0
    assert c.hallucination_without == c.hallucination_with == 0.0


def test_report_over_runs_with_and_without_the_interceptor(tmp_path):
    grid = [{"injection": i} for i in INJECTIONS]
    tasks = "weather_000*"
    runs = {
        "guessing": evaluate("AgentProp-v0", make_agent("guessing"), tmp_path / "g", tasks=tasks, variants=grid),
        "guessing+interceptor-packaged": evaluate(
            "AgentProp-v0", make_agent("guessing"), tmp_path / "gi", tasks=tasks, variants=grid,
            mitigation="interceptor-packaged",
        ),
        "rejecting": evaluate("AgentProp-v0", make_agent("rejecting"), tmp_path / "r", tasks=tasks, variants=grid),
    }  # fmt: skip
    tables = REPORT.build(runs, n_resamples=200)
    comparison = tables.interceptor["guessing+interceptor-packaged"]
    assert comparison.n == 45 and comparison.saved > 0
    assert comparison.hallucination_with < comparison.hallucination_without
    paths = REPORT.write(tables, tmp_path / "report")
    text = (tmp_path / "report" / "agentprop.md").read_text()
    assert "guessing+interceptor-packaged" in text and "r23" in text
    assert [p.name for p in paths] == [
        "agentprop.md",
        "metrics.csv",
        "report.json",
        "stages_by_injection.png",
    ]
    json.loads((tmp_path / "report" / "report.json").read_text())
    summary = REPORT.summarize(runs["rejecting"], n_resamples=100)
    assert summary["accuracy_clean"].value == 1.0 and summary["p_S1"].n == 36
    assert columns(runs["rejecting"])["task"].max() == 8


class _ReActScript:
    """A scripted model that writes ReAct text: one nudge-worthy reply, the gold call, the answer."""

    privileged = True
    writes_text = True  # it answers in text, as a model does: the ReAct harness takes it
    name = "react-script"
    last_raw = None
    last_format = None

    def describe(self) -> dict:
        return {"name": self.name}

    def clone(self):
        return _ReActScript()

    def reset(self, observation, info, *, task=None, seed=None) -> None:
        call = task.gold[0]
        self.replies = [
            "Thought: let me think about it.",
            f"Thought: I need the tool.\nAction: {call.name}\nAction Input: {json.dumps(call.arguments)}",
            f"Thought: done.\nFinal Answer: {task.reference_text}",
        ]
        assert info["tools"] == [] and "Action Input" in info["messages"][0]["content"]

    def act(self, observation, info) -> str:
        self.last_raw = self.replies.pop(0)
        return self.last_raw


def test_the_react_harness_through_evaluate(tmp_path):
    records = evaluate(
        "AgentProp-Weather-v0", _ReActScript(), tmp_path, tasks="weather_000[1-3]", harness="react"
    )
    # the script makes gold's first call only: weather_0002 compares two cities, and the second city's
    # temperature in its answer was never looked up (not grounded, so not right)
    assert [r["verdict"]["correct"] for r in records] == [True, False, True]
    steps = records[0]["trace"]["steps"]
    assert [s["format"] for s in steps] == ["react", "react"] and steps[0]["raw"].startswith(
        "Thought: I need"
    )
    with pytest.raises(Exception, match="harness"):
        evaluate("AgentProp-Weather-v0", _ReActScript(), tmp_path / "x", harness="reactive")
    # a scripted policy writes JSON calls: under a prompted harness it would play 0-step episodes
    with pytest.raises(EnvUsageError, match="--harness react.*scripted policy"):
        evaluate("AgentProp-Weather-v0", make_agent("trusting"), tmp_path / "y", harness="react")
    assert not (tmp_path / "y").exists()


def test_llm_judges_over_an_evaluations_answers(say_server, tmp_path):
    from tooltrap.wrappers.eval.agentprop.judges import (
        JudgeEnsemble,
        LLMJudge,
        judge_agreements,
        rejudge_episodes,
    )

    records = evaluate(
        "AgentProp-Weather-v0", make_agent("trusting"), tmp_path, tasks="weather_000[1-4]",
        variants=[{"injection": "none"}, {"injection": "missing_required"}],
    )  # fmt: skip
    ensemble = JudgeEnsemble([LLMJudge(f"say:{w}", say_server) for w in ("YES", "YES", "NO")])
    references = {t.id: t.reference_text for t in packaged_tasks()}
    rows = rejudge_episodes(records, references, ensemble)
    assert len(rows) == 8 and all(r["ensemble"] is True for r in rows)
    assert sum(r["checker"] for r in rows) == 4  # the clean answers
    table = judge_agreements(rows)
    assert table["checker_vs_ensemble"]["n"] == 8 and table["checker_vs_ensemble"]["raw_agreement"] == 0.5


def test_training_adapter_reward_is_the_envs_and_demonstrations_replay():
    from tooltrap.training import environment_class, environment_reward, gold_rows

    env_class = environment_class("AgentProp-Weather-v0", env_kwargs={"injection": "semantic_wrong"})
    env = env_class()
    task = env.env.unwrapped.tasks[0]
    env.reset(task_id=task.id)
    call = task.gold[0]
    getattr(env, call.name)(**call.arguments)
    env.final_answer(answer=task.reference_text)
    (reward,) = environment_reward(completions=[[]], environments=[env])
    assert reward < 1.0  # the injected first call changed what came back: the gold text is now wrong
    rows = gold_rows("AgentProp-Knowledge-v0")
    assert len(rows) == 100
    for row in rows:
        calls = [
            c["function"]["name"]
            for m in row["messages"]
            if m["role"] == "assistant"
            for c in m["tool_calls"]
        ]
        assert calls[0] == "search_knowledge" and calls[-1] == "final_answer"


def test_interceptor_layer_three_keeps_the_sign():
    """The release ignores one-character numbers; "-7" has two: a negative temperature the tools never
    returned is an unseen number, even when 7 was seen."""
    from tooltrap.wrappers.defenses.interceptor import unseen_numbers

    assert unseen_numbers("It was -7 C.", ['{"temperature": 7}']) == ["-7"]
    assert unseen_numbers("It was -7 C.", ['{"temperature": -7}']) == []
    assert unseen_numbers("It was 7 C.", ['{"temperature": 5}']) == []  # one character: ignored
