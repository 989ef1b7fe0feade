"""No silent judge failure (issue 24, deliverable 8): LLM judges that cannot be reached (a refused
connection, a server that answers 500, one that answers garbage) leave system outcomes that are counted
in the rows, the summary and the agreement tables, announced with a warning, and make
``scripts/judge.py`` exit 3 when every judge call failed; a refused connection costs a bounded number of
attempts (the client's fuse), counted rather than timed. Servers are loopback only and waited on for
readiness (tests/conftest.py)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tooltrap.agents import make_agent
from tooltrap.envs.agentprop import packaged_tasks
from tooltrap.evaluate import evaluate
from tooltrap.wrappers.eval.agentprop.judges import (
    JUDGE_CLIENT_DEFAULTS,
    JudgeEnsemble,
    JudgeSystemWarning,
    LLMJudge,
    judge_agreements,
    judge_summary,
    rejudge_episodes,
)

pytest.importorskip("httpx")

ROOT = Path(__file__).resolve().parents[2]
N = 5  # answered episodes in the run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    records = evaluate(
        "AgentProp-Weather-v0", make_agent("trusting"), out, tasks="weather_000[1-5]", resamples=10
    )
    assert len(records) == N and all(r["trace"]["disposition"] == "answer" for r in records)
    return out


@pytest.fixture(scope="module")
def references():
    return {t.id: t.reference_text for t in packaged_tasks()}


def _refused_url() -> str:
    with socket.socket() as s:  # bound then closed: connecting is refused
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _judges(url: str, *models: str) -> JudgeEnsemble:
    # the tests count, they do not wait: retries keep the defaults' number, not their delay
    return JudgeEnsemble([LLMJudge(m, url, backoff=0.001) for m in models])


def _records(run_dir: Path) -> list[dict]:
    from tooltrap.wrappers.eval.run import read_episodes

    return read_episodes(run_dir / "episodes.jsonl")


def test_a_judge_built_from_a_name_fails_fast():
    judge = LLMJudge("j", _refused_url())
    client = judge.chat.client
    assert client.max_retries == JUDGE_CLIENT_DEFAULTS["max_retries"] <= 2
    assert client.max_failed_episodes == 3  # the fuse: later requests fail at once as provider_down
    assert client._http.timeout.connect == JUDGE_CLIENT_DEFAULTS["connect_timeout"] <= 5
    # a caller's option still wins
    assert LLMJudge("j", _refused_url(), max_retries=0).chat.client.max_retries == 0


@pytest.mark.parametrize(
    ("where", "model", "kinds"),
    [
        ("refused", "judge", {"connection", "provider_down"}),
        ("server", "nomodel", {"http_500"}),  # the loopback server answers 500 for a model it lacks
        ("server", "broken", {"invalid_response"}),  # 200 with a body that is not JSON
    ],
)
def test_unreachable_judges_are_counted_system_outcomes(run_dir, references, say_server, where, model, kinds):
    url = _refused_url() if where == "refused" else say_server
    ensemble = _judges(url, model, model, model)
    with pytest.warns(JudgeSystemWarning, match="every judge call failed") as caught:
        rows = rejudge_episodes(_records(run_dir), references, ensemble, concurrency=1)
    assert any(url in str(w.message) for w in caught if w.category is JudgeSystemWarning)  # names the server
    assert len(rows) == N
    for row in rows:  # never a silent None: each undecided answer says why
        assert row["ensemble"] is None and row["ensemble_outcome"] == "system"
        assert row["ensemble_system_outcome"] in kinds and row["ensemble_calls"] == 3
    summary = judge_summary(rows)
    assert summary["all_failed"] and summary["decided"] == 0
    assert summary["system_outcomes"]["n"] == N and set(summary["system_outcomes"]["by_kind"]) <= kinds
    assert summary["judge_calls"]["n"] == summary["judge_calls"]["failed"] == 3 * N
    if where == "refused":
        # the fuse, counted: each judge tried its first 3 answers, the other 2 failed without a request
        assert summary["judge_calls"]["by_kind"] == {"connection": 3 * 3, "provider_down": 3 * (N - 3)}
    table = judge_agreements(rows)
    for pair in ("checker_vs_ensemble", "heuristic_vs_ensemble"):
        assert table[pair]["n"] == 0 and table[pair]["undecided"] == N
        assert table[pair]["system_outcomes"]["n"] == N
    assert table["checker_vs_heuristic"]["n"] == N and table["checker_vs_heuristic"]["undecided"] == 0


def test_one_failing_judge_is_counted_and_the_others_still_decide(run_dir, references, say_server):
    ensemble = JudgeEnsemble(
        [LLMJudge(m, say_server, backoff=0.001) for m in ("say:YES", "say:YES", "broken")]
    )
    with pytest.warns(JudgeSystemWarning, match=f"{N} of {3 * N} judge calls failed"):
        rows = rejudge_episodes(_records(run_dir), references, ensemble, concurrency=1)
    assert all(r["ensemble"] is True and r["ensemble_outcome"] == "decided" for r in rows)
    assert all(r["ensemble_errors"] == {"invalid_response": 1} for r in rows)
    summary = judge_summary(rows)
    assert not summary["all_failed"] and summary["decided"] == N and summary["system_outcomes"]["n"] == 0
    assert summary["judge_calls"] == {"n": 3 * N, "failed": N, "by_kind": {"invalid_response": N}}
    # with the failure between a YES and a NO no side has a quorum: a system outcome, not a NO
    split = JudgeEnsemble([LLMJudge(m, say_server, backoff=0.001) for m in ("say:YES", "say:NO", "broken")])
    with pytest.warns(JudgeSystemWarning):
        rows = rejudge_episodes(_records(run_dir), references, split, concurrency=1)
    assert all(
        r["ensemble_outcome"] == "system" and r["ensemble_system_outcome"] == "invalid_response" for r in rows
    )


def test_healthy_judges_warn_about_nothing(run_dir, references, say_server):
    import warnings

    ensemble = JudgeEnsemble([LLMJudge(f"say:{w}", say_server) for w in ("YES", "NO", "YES")])
    with warnings.catch_warnings():
        warnings.simplefilter("error", JudgeSystemWarning)
        rows = rejudge_episodes(_records(run_dir), references, ensemble)
    summary = judge_summary(rows)
    assert summary["decided"] == N and summary["judge_calls"] == {"n": 3 * N, "failed": 0, "by_kind": {}}


def _script(run_dir: Path, url: str, *models: str, out: Path | None = None) -> subprocess.CompletedProcess:
    argv = [sys.executable, str(ROOT / "scripts" / "judge.py"), "agentprop", str(run_dir), "--base-url", url]
    for model in models:
        argv += ["--judge", model]
    if out is not None:
        argv += ["--out", str(out)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300)


def test_the_judge_script_exits_3_when_every_judge_call_failed(run_dir, say_server, tmp_path):
    done = _script(run_dir, _refused_url(), "a", "b", "c", out=tmp_path / "rows.jsonl")
    assert done.returncode == 3, done.stderr
    assert "warning: every judge call failed" in done.stderr and "error: every judge call" in done.stderr
    assert f"system outcomes {N}" in done.stdout
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == N and all(r["ensemble_outcome"] == "system" for r in rows)
    garbage = _script(run_dir, say_server, "broken", "broken", "broken")
    assert garbage.returncode == 3 and "invalid_response" in garbage.stderr


def test_the_judge_script_exits_0_with_a_warning_when_some_calls_failed(run_dir, say_server, tmp_path):
    done = _script(run_dir, say_server, "say:YES", "say:YES", "broken")
    assert done.returncode == 0, done.stderr
    assert f"judge calls: {3 * N}, failed {N} (invalid_response {N})" in done.stdout
    assert "warning:" in done.stderr and "error:" not in done.stderr
    healthy = _script(run_dir, say_server, "say:YES", "say:NO", "say:YES")
    assert healthy.returncode == 0 and not healthy.stderr
    missing = _script(tmp_path / "nothing", say_server, "say:YES")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
