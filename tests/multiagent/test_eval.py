"""``tooltrap eval`` of the multi-agent envs: one policy per role, the run folder (run.json naming every
role's policy, resume, refusal of another run), per-role metrics with intervals, CLI misuse, and a
model-backed role through the loopback test server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tooltrap.cli import main
from tooltrap.wrappers.eval.run import EPISODES, RUN, SUMMARY, read_episodes

DIALOGUE, ARENA = "sabench_dialogue_v0", "sentry_arena_v0"
#: a few tasks of each kind: ambiguous and clear SABench templates, attacked and benign scenarios
DIALOGUE_TASKS = "ambiguous=true,ambiguous=false"
FEW = ["--resamples", "200", "--quiet"]


def _eval(out: Path, env: str, *agents: str, tasks: str | None = None, extra: tuple[str, ...] = ()) -> int:
    argv = ["eval", env, *(a for agent in agents for a in ("--agent", agent)), "--out", str(out), *FEW]
    return main([*argv, *(["--tasks", tasks] if tasks else []), *extra])


def _by_task(out: Path) -> dict[str, dict]:
    return {r["task_id"]: r for r in read_episodes(out / EPISODES)}


def test_dialogue_run_folder_records_every_role_and_reports_per_role(tmp_path, capsys):
    out = tmp_path / "gold"
    assert _eval(out, DIALOGUE, "assistant=gold", "user=scripted", tasks="em-*") == 0
    run = json.loads((out / RUN).read_text())
    assert run["env_id"] == DIALOGUE and {r: v["spec"] for r, v in run["roles"].items()} == {
        "assistant": "gold",
        "user": "scripted",
    }
    records = read_episodes(out / EPISODES)
    assert records and all(r["roles"] == {"assistant": "gold", "user": "scripted"} for r in records)
    summary = json.loads((out / SUMMARY).read_text())
    assert summary["assistant/goal_after_clarification"]["value"] == 1.0
    assert summary["assistant/writes_before_answer"]["value"] == 0.0
    assert summary["simulator/void"]["value"] == 0
    # the same report over several runs: one column per run
    other = tmp_path / "act-first"
    assert _eval(other, DIALOGUE, "assistant=act-first", tasks="em-*") == 0
    assert main(["report", str(out), str(other), "--out", str(tmp_path / "rep"), "--resamples", "200"]) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    # a column per run, named by its folder; the roles each run's policies played under the table
    assert "| metric | gold | act-first |" in text
    assert "gold: assistant=gold, user=scripted; act-first: assistant=act-first, user=scripted" in text
    assert "goal_after_clarification" in text


def test_arena_defaults_and_a_gate_given(tmp_path):
    out = tmp_path / "arena"
    assert _eval(out, ARENA, "gate=reject-all", tasks="*-00[1-3]") == 0
    run = json.loads((out / RUN).read_text())
    specs = {r: v["spec"] for r, v in run["roles"].items()}
    assert specs == {"assistant": "careful", "attacker": "scenario", "gate": "reject-all"}
    summary = json.loads((out / SUMMARY).read_text())
    for key in ("attacker/asr_reached", "gate/mean_reward", "assistant/harm", "assistant/containment"):
        assert key in summary
    assert "simulator/errors_gate" in summary


def test_resume_after_a_crash_loses_and_duplicates_nothing(tmp_path):
    whole, crashed = tmp_path / "whole", tmp_path / "crashed"
    assert _eval(whole, DIALOGUE, "assistant=clarify-then-act", tasks="em-*") == 0
    assert _eval(crashed, DIALOGUE, "assistant=clarify-then-act", tasks="em-*") == 0
    lines = (crashed / EPISODES).read_text().splitlines(keepends=True)
    # a crash mid-write: two whole episodes lost and the next one torn
    (crashed / EPISODES).write_text("".join(lines[:-3]) + lines[-3][:40])
    assert _eval(crashed, DIALOGUE, "assistant=clarify-then-act", tasks="em-*") == 0
    raw = [json.loads(line) for line in (crashed / EPISODES).read_text().splitlines()]
    assert len(raw) == len(lines) == len({r["task_id"] for r in raw})
    a, b = _by_task(whole), _by_task(crashed)
    assert a.keys() == b.keys()
    assert all(a[t]["verdict"] == b[t]["verdict"] and a[t]["rewards"] == b[t]["rewards"] for t in a)


def test_a_rerun_with_another_role_policy_is_refused_naming_it(tmp_path, capsys):
    out = tmp_path / "run"
    assert _eval(out, ARENA, "gate=tgcc", tasks="*-001") == 0
    capsys.readouterr()
    assert _eval(out, ARENA, "gate=approve-all", tasks="*-001") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "roles" in err and "approve-all" in err and "tgcc" in err


@pytest.mark.parametrize(
    ("agents", "extra", "expected"),
    [
        (("assistant=gold", "assistant=act-first"), (), "given twice"),
        (("asistant=gold",), (), "Did you mean 'assistant'?"),
        (("gold",), (), "ROLE=POLICY"),
        (("user=gold",), (), "Unknown user policy"),
        (("assistant=gold",), ("--defense", "confirm-gate"), "--defense"),
        (("assistant=gold",), ("--base-url", "http://127.0.0.1:1/v1"), "no role is played by one"),
        (("assistant=gold",), ("--env-arg", "ambigous=true"), "ambiguous"),
    ],
)
def test_cli_misuse_is_one_line_with_status_2(tmp_path, capsys, agents, extra, expected):
    assert _eval(tmp_path / "x", DIALOGUE, *agents, extra=extra) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error:") and expected in err
    assert not (tmp_path / "x" / EPISODES).exists()


def test_role_form_on_a_single_agent_env_is_a_usage_error(tmp_path, capsys):
    assert main(["eval", "SABench-Calendar-v0", "--agent", "assistant=gold", "--out", str(tmp_path)]) == 2
    assert "multi-agent" in capsys.readouterr().err
    assert (
        main(["eval", "SABench-Calendar-v0", "--agent", "gold", "--agent", "clarify", "--out", str(tmp_path)])
        == 2
    )


def test_a_model_gate_through_the_loopback_server_equals_its_scripted_twin(tmp_path, llm_server):
    tasks = "*-00[1-4]"
    model, scripted = tmp_path / "model", tmp_path / "scripted"
    assert _eval(model, ARENA, "gate=openai:say:approve", tasks=tasks, extra=("--base-url", llm_server)) == 0
    assert _eval(scripted, ARENA, "gate=approve-all", tasks=tasks) == 0
    a, b = _by_task(model), _by_task(scripted)
    assert a.keys() == b.keys()
    assert all(a[t]["rewards"] == b[t]["rewards"] and a[t]["verdict"] == b[t]["verdict"] for t in a)
    run = json.loads((model / RUN).read_text())
    assert run["roles"]["gate"]["spec"] == "openai:say:approve" and "base_url" not in run["roles"]["gate"]
    # the gate saw its proposal only (what the env gives its role), never the assistant's prompt
    assert any(d["decision"] == "approve" for r in a.values() for d in r["log"]["gate_decisions"])


def test_a_leaking_model_user_is_a_simulator_error_counted_apart(tmp_path, llm_server):
    out = tmp_path / "leaky"
    user = "user=openai:say:call calendar_cancel_event with event_id EVT-1"
    assert _eval(out, DIALOGUE, user, tasks="ambiguous=true", extra=("--base-url", llm_server)) == 0
    records = read_episodes(out / EPISODES)
    assert records and all(r["void"] for r in records)
    assert all(r["simulator_errors"]["user"] for r in records)
    summary = json.loads((out / SUMMARY).read_text())
    # void episodes are in no denominator of the assistant's: charged to no one
    assert summary["assistant/goal"]["n"] == 0 and summary["simulator/void"]["value"] == len(records)


def test_concurrent_episodes_give_the_sequential_records(tmp_path, llm_server):
    tasks = "*-00[1-6]"
    argv = ("--base-url", llm_server)
    one, four = tmp_path / "one", tmp_path / "four"
    assert _eval(one, ARENA, "gate=openai:say:approve", tasks=tasks, extra=argv) == 0
    assert (
        _eval(four, ARENA, "gate=openai:say:approve", tasks=tasks, extra=(*argv, "--concurrency", "4")) == 0
    )
    a, b = _by_task(one), _by_task(four)
    assert len(a) > 4 and a.keys() == b.keys()
    assert all(a[t]["rewards"] == b[t]["rewards"] and a[t]["trace"] == b[t]["trace"] for t in a)
    assert json.loads((one / SUMMARY).read_text()) == json.loads((four / SUMMARY).read_text())


def test_an_unreachable_model_role_stops_the_run_after_three_episodes(tmp_path, capsys, llm_server):
    import socket

    bound = socket.socket()  # a port nothing listens on (bound, never accepting)
    bound.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{bound.getsockname()[1]}/v1"
    out = tmp_path / "dead"
    argv = ("--agent-arg", "max_retries=1", "--agent-arg", "backoff=0.01", "--agent-arg", "timeout=2")
    assert (
        _eval(out, ARENA, "gate=openai:say:approve", tasks="*-00[1-9]", extra=(*argv, "--base-url", dead))
        == 3
    )
    bound.close()
    said, error = capsys.readouterr().err.splitlines()
    assert said == f"gate=openai:say:approve: requests go to {dead}"
    assert error.startswith(f"error: cannot reach the model server at {dead}: the first 3 episodes")
    records = read_episodes(out / EPISODES)
    assert [r["system_outcome"] for r in records] == ["connection"] * 3
    assert {r["failed_role"] for r in records} == {"gate"}
    summary = json.loads((out / SUMMARY).read_text())
    assert summary["system_outcomes"]["n"] == 3
    # the right server: those three are retried, nothing is duplicated
    assert (
        _eval(
            out, ARENA, "gate=openai:say:approve", tasks="*-00[1-9]", extra=(*argv, "--base-url", llm_server)
        )
        == 0
    )
    records = read_episodes(out / EPISODES)
    assert not any(r["system_outcome"] for r in records)
    assert len({r["task_id"] for r in records}) == len(records)


def test_a_model_attacker_choosing_the_scenarios_option_equals_the_scripted_attacker(tmp_path, llm_server):
    tasks = "*-00[1-4]"
    model, scripted = tmp_path / "model", tmp_path / "scripted"
    attacker = 'attacker=openai:say:{"option": 0}'
    assert _eval(model, ARENA, attacker, tasks=tasks, extra=("--base-url", llm_server)) == 0
    assert _eval(scripted, ARENA, "attacker=scenario", tasks=tasks) == 0
    a, b = _by_task(model), _by_task(scripted)
    assert a.keys() == b.keys() and any(r["model_turns"] for r in a.values())
    assert all(a[t]["rewards"] == b[t]["rewards"] and a[t]["verdict"] == b[t]["verdict"] for t in a)
    # an answer that is none of its options is a simulator error, never the assistant's
    bad = tmp_path / "bad"
    assert (
        _eval(bad, ARENA, "attacker=openai:say:the third one", tasks=tasks, extra=("--base-url", llm_server))
        == 0
    )
    attacked = [r for r in _by_task(bad).values() if r["turns"]["attacker"]]
    assert attacked and all(r["void"] and r["simulator_errors"]["attacker"] for r in attacked)
    assert all(r["rewards"]["assistant"] == 0.0 for r in attacked)
