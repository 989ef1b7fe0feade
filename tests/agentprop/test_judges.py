"""The AgentProp-Bench judges: LLM judges against a real loopback server (``say:<TEXT>`` models answer
with fixed text), the ensemble's majority and its handling of provider failures, the human-label
loader's errors, agreement and calibration on hand-built arrays, and the release's 13 human labels."""

from __future__ import annotations

import math
import socket

import pytest

from tests.shared_data import AGENTPROP_RELEASE, needs
from tooltrap.agents.llm import OpenAIChatAgent
from tooltrap.wrappers.eval.agentprop.judges import (
    JUDGE_MAX_TOKENS,
    HumanLabelError,
    JudgeEnsemble,
    JudgeError,
    JudgeVerdict,
    LLMJudge,
    agreement,
    calibrated_rate,
    calibration,
    compare_rates,
    judge_messages,
    load_human_labels,
    release_human_agreement,
)

pytest.importorskip("httpx")

RELEASE = AGENTPROP_RELEASE
needs_release = needs(RELEASE / "data" / "results")


def _judge(url: str, model: str) -> LLMJudge:
    return LLMJudge(model, url, backoff=0.01, max_retries=1, timeout=10)


def _ensemble(url: str, *models: str, **kwargs) -> JudgeEnsemble:
    return JudgeEnsemble([_judge(url, m) for m in models], **kwargs)


def _closed_port() -> int:
    with socket.socket() as s:  # bound then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- one judge over HTTP --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("YES", True),
        ("NO", False),
        ("Yes.", True),
        ("  yes, it does", True),
        ("NOPE", False),
        ("Not sure", False),
    ],
)
def test_verdict_is_yes_iff_the_reply_starts_with_yes(say_server, reply, expected):
    verdict = _judge(say_server, f"say:{reply}").verdict("Weather in Paris?", "18 C", "It is 18 C.")
    assert verdict == JudgeVerdict(yes=expected, raw=reply, error=None)


def test_majority_of_two_yes_and_one_no_is_yes_but_not_unanimous(say_server):
    result = _ensemble(say_server, "say:YES", "say:YES", "say:NO").judge("q", "18 C", "18 C")
    assert result.majority is True and not result.unanimous
    assert (result.n_yes, result.n_no, result.n_errors) == (2, 1, 0)
    assert [v.yes for v in result.verdicts] == [True, True, False]
    everyone = _ensemble(say_server, "say:NO", "say:no", "say:Nope").judge("q", "18 C", "20 C")
    assert everyone.majority is False and everyone.unanimous


@pytest.mark.parametrize(("model", "kind"), [("broken", "invalid_response"), ("filtered", "content_filter")])
def test_a_provider_failure_is_no_vote_not_a_no(say_server, model, kind):
    decided = _ensemble(say_server, "say:YES", "say:YES", model).judge("q", "18 C", "18 C")
    failed = decided.verdicts[2]
    assert failed.yes is None and failed.error == kind
    assert decided.majority is True and decided.n_errors == 1 and not decided.unanimous

    # one YES, one NO and a failure: no side has 2 valid votes, so the majority is undecided ...
    split = _ensemble(say_server, "say:YES", "say:NO", model).judge("q", "18 C", "18 C")
    assert split.majority is None and (split.n_yes, split.n_no, split.n_errors) == (1, 1, 1)
    # ... while the release counted the failure as NO
    release = _ensemble(say_server, "say:YES", "say:NO", model, release_compatible=True)
    as_released = release.judge("q", "18 C", "18 C")
    assert as_released.majority is False and as_released.n_no == 2 and as_released.n_errors == 1
    assert as_released.verdicts[2].yes is None  # the verdict itself still says what happened
    all_no = _ensemble(say_server, "say:NO", "say:NO", model, release_compatible=True).judge("q", "r", "c")
    assert all_no.majority is False and all_no.unanimous


def test_empty_answer_or_reference_is_no_without_a_request():
    judge = LLMJudge("say:YES", f"http://127.0.0.1:{_closed_port()}/v1", max_retries=0, timeout=2)
    for reference, candidate in (("18 C", ""), ("", "18 C"), ("18 C", "   "), (None, "18 C")):
        assert judge.verdict("q", reference, candidate) == JudgeVerdict(yes=False, raw="", error=None)
    # the control: a real answer does reach for the closed port and fails as a provider error
    reached = judge.verdict("q", "18 C", "18 C")
    assert reached.yes is None and reached.error == "connection"
    ensemble = JudgeEnsemble([judge, judge, judge])
    empty = ensemble.judge("q", "18 C", "")
    assert empty.majority is False and empty.unanimous and empty.n_errors == 0


class _Recorder(OpenAIChatAgent):
    """An agent that records what a judge would send and answers YES (no server)."""

    def __init__(self) -> None:
        super().__init__("recorder", "http://127.0.0.1:9/v1", temperature=0.7, max_tokens=512)
        self.sent: list[tuple[list[dict], float, int]] = []

    def complete(self, messages):
        self.sent.append((messages, self.temperature, self.max_tokens))
        return {"role": "assistant", "content": "YES"}


def test_the_prompt_holds_the_truncated_inputs_and_the_judge_settings():
    # digits do not occur in the prompt's own text, so counting them measures each input
    question, reference, candidate = "1" * 400 + "2" * 600, "3" * 300 + "4" * 50, "5" * 300 + "6" * 50
    agent = _Recorder()
    judge = LLMJudge(agent, name="rec")
    assert judge.verdict(question, reference, candidate).yes is True
    ((messages, temperature, max_tokens),) = agent.sent  # the clone shares the recording list
    prompt = messages[-1]["content"]
    assert [prompt.count(d) for d in "123456"] == [400, 0, 300, 0, 300, 0]
    assert "1" * 400 in prompt and "3" * 300 in prompt and "5" * 300 in prompt
    assert (temperature, max_tokens) == (0.0, JUDGE_MAX_TOKENS) == (0.0, 5)
    assert (agent.temperature, agent.max_tokens) == (0.7, 512)  # the caller's agent is untouched
    assert judge_messages(question, reference, candidate) == messages
    assert "YES" in prompt and "NO" in prompt and "single word" in prompt


def test_judge_many_keeps_input_order_under_concurrency(say_server):
    ensemble = _ensemble(say_server, "say:YES", "say:YES", "say:NO")
    # an empty candidate is NO without a request, a real one YES over HTTP: the pattern shows the order
    pattern = [True, False, False, True, True, False, True, False, False, False, True, True, False, True]
    items = [("q", "18 C", f"answer {i}" if yes else "") for i, yes in enumerate(pattern)]
    results = ensemble.judge_many(items, concurrency=4)
    assert [r.majority for r in results] == pattern
    assert [r.verdicts[0].raw for r in results] == ["YES" if yes else "" for yes in pattern]
    as_mappings = [{"question": q, "reference": r, "candidate": c} for q, r, c in items[:3]]
    assert [r.majority for r in ensemble.judge_many(as_mappings, concurrency=2)] == pattern[:3]
    with pytest.raises(JudgeError, match="lacks 'candidate'. Did you mean 'candidat'"):
        ensemble.judge_many([{"question": "q", "reference": "r", "candidat": "c"}])
    with pytest.raises(JudgeError, match="concurrency"):
        ensemble.judge_many(items, concurrency=0)


def test_quorum_must_let_one_side_win_only():
    judges = [LLMJudge("say:YES", "http://127.0.0.1:9/v1")] * 4
    assert JudgeEnsemble(judges[:3]).quorum == 2 and JudgeEnsemble(judges).quorum == 3
    for bad in (0, 2, 5):
        with pytest.raises(JudgeError, match="quorum"):
            JudgeEnsemble(judges, quorum=bad)
    with pytest.raises(JudgeError):
        JudgeEnsemble([])
    # a 2-2 tie of 4 judges is undecided; release-compatible, it is NO
    tie = [
        JudgeVerdict(True, "YES"),
        JudgeVerdict(True, "YES"),
        JudgeVerdict(False, "NO"),
        JudgeVerdict(False, "NO"),
    ]
    assert JudgeEnsemble(judges).combine(tie).majority is None
    assert JudgeEnsemble(judges, release_compatible=True).combine(tie).majority is False


# -- human labels ---------------------------------------------------------------------------------------
def test_human_labels_load_and_their_errors_name_file_row_and_column(tmp_path):
    good = tmp_path / "good.csv"
    good.write_text("session_id,annotator,label,extra\ns1,ann,YES,x\ns2,,no,y\n s3 ,ann, Yes ,\n")
    labels = load_human_labels(good)
    assert [(h.session_id, h.label, h.annotator, h.row) for h in labels] == [
        ("s1", True, "ann", 2),
        ("s2", False, None, 3),
        ("s3", True, "ann", 4),
    ]
    assert labels[0].extra == {"extra": "x"} and labels[0].file == str(good)
    no_annotator = tmp_path / "plain.csv"
    no_annotator.write_text("label,session_id\nNO,s9\n")
    assert [(h.session_id, h.label, h.annotator) for h in load_human_labels([good, no_annotator])][-1] == (
        "s9",
        False,
        None,
    )

    misspelt = tmp_path / "misspelt.csv"
    misspelt.write_text("session_id,lable\ns1,YES\n")
    with pytest.raises(HumanLabelError) as info:
        load_human_labels([good, misspelt])
    err = info.value
    assert (err.file, err.row, err.column) == (str(misspelt), 1, "label")
    assert "misspelt.csv" in str(err) and "Did you mean 'lable'" in str(err)

    bad = tmp_path / "bad.csv"
    bad.write_text("session_id,label\ns1,YES\ns2,YSE\n")
    with pytest.raises(HumanLabelError, match=r"bad\.csv, row=3, column=label\].*'YSE'.*Did you mean 'YES'"):
        load_human_labels(bad)
    maybe = tmp_path / "maybe.csv"
    maybe.write_text("session_id,label\ns1,MAYBE\n")
    with pytest.raises(HumanLabelError, match="row=2") as info:
        load_human_labels(maybe)
    assert isinstance(info.value, ValueError)
    blank = tmp_path / "blank.csv"
    blank.write_text("session_id,label\n,YES\n")
    with pytest.raises(HumanLabelError, match="column=session_id"):
        load_human_labels(blank)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(HumanLabelError, match="empty"):
        load_human_labels(empty)


# -- agreement and calibration --------------------------------------------------------------------------
def test_agreement_and_calibration_on_hand_built_arrays():
    a = [True, True, False, False, True, False]
    b = [True, False, False, False, True, True]
    # 4 of 6 alike; each rater says YES half the time, so chance agreement is 1/2: kappa = (2/3 - 1/2) / (1/2)
    assert agreement(a, b) == {"n": 6, "raw_agreement": pytest.approx(4 / 6), "kappa": pytest.approx(1 / 3)}
    assert agreement(a, a)["kappa"] == 1.0
    assert agreement([], []) == {"n": 0, "raw_agreement": None, "kappa": None}

    human = [True, True, False, False, True, False]
    judge = [True, True, True, False, False, False]
    cal = calibration(human, judge)
    assert cal == {
        "p_human_correct_given_judge_yes": pytest.approx(2 / 3),
        "p_human_correct_given_judge_no": pytest.approx(1 / 3),
        "n_yes": 3,
        "n_no": 3,
    }
    assert calibrated_rate(0.5, cal) == pytest.approx(0.5)
    assert calibrated_rate(0.75, cal) == pytest.approx(0.75 * 2 / 3 + 0.25 * 1 / 3)
    always_yes = calibration([True, False, True], [True, True, True])
    assert always_yes["p_human_correct_given_judge_no"] is None and always_yes["n_no"] == 0
    assert calibrated_rate(1.0, always_yes) == pytest.approx(2 / 3)
    assert calibrated_rate(0.5, always_yes) is None
    with pytest.raises(ValueError, match="None"):
        agreement([True, None], [True, False])  # numpy would read None as False: refused
    with pytest.raises(ValueError, match="length"):
        calibration([True], [True, False])
    with pytest.raises(ValueError):
        calibrated_rate(1.5, cal)

    rates = compare_rates(30, 100, 15, 100)
    assert rates["h"] == pytest.approx(2 * math.asin(math.sqrt(0.3)) - 2 * math.asin(math.sqrt(0.15)))
    assert rates["z"] == pytest.approx(2.5400, abs=1e-4) and rates["p"] == pytest.approx(0.01109, abs=1e-5)
    with pytest.raises(ValueError):
        compare_rates(3, 0, 1, 10)


# -- the release's 13 human labels ----------------------------------------------------------------------
@needs_release
def test_release_human_agreement_on_the_thirteen_released_labels():
    out = release_human_agreement(RELEASE)
    assert out == release_human_agreement(RELEASE / "data" / "results")
    assert (out["n"], out["n_sessions"]) == (13, 7)
    # by hand from the two label files: humans say YES 6 times, the ensemble 6, the heuristic 10;
    # the ensemble matches 9 labels, the heuristic 5
    assert out["human_vs_ensemble"]["raw_agreement"] == pytest.approx(9 / 13)
    assert out["human_vs_ensemble"]["kappa"] == pytest.approx((117 - 85) / (169 - 85))
    assert out["human_vs_heuristic"]["raw_agreement"] == pytest.approx(5 / 13)
    assert out["human_vs_heuristic"]["kappa"] == pytest.approx((65 - 81) / (169 - 81))
    assert out["calibration_ensemble"] == {
        "p_human_correct_given_judge_yes": pytest.approx(4 / 6),
        "p_human_correct_given_judge_no": pytest.approx(2 / 7),
        "n_yes": 6,
        "n_no": 7,
    }
    assert out["inter_annotator"]["n"] == 6 and out["inter_annotator"]["kappa"] == pytest.approx(4 / 22)
    # one session is in only one annotator's file, which lacks the judge columns: from ensemble_judge.csv
    assert out["judge_columns_from"] == {"label_files": 12, "ensemble_judge.csv": 1}
    # the paper's numbers need its 100 labels: named, never printed
    assert "human_vs_heuristic_kappa" in out["not_recomputable"] and "13" in out["note"]
    assert "0.049" not in repr(out) and "0.432" not in repr(out)
