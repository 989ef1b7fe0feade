"""The toy benchmark (tests/toybench/, a package with the rooms of a packaged benchmark) runs through
everything a packaged benchmark does, with no change outside its folder: gym.make, check_env, the
generic scripted agents and its own baselines by name, tooltrap eval over a variant grid (with resume),
tooltrap report with its own report object, its self-check, a defense and the TRL adapter."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import tests.toybench as toy
from tests.toybench import report as toy_report
from tests.toybench import selfcheck as toy_selfcheck
from tests.toybench.authoring import build as toy_build
from tooltrap.agents import make_agent
from tooltrap.cli import main
from tooltrap.evaluate import evaluate, run_episode

ENV = f"tests.toybench:{toy.ENV_ID}"


def test_make_and_check_env():
    env = gym.make(ENV)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert "lending assistant" in obs and info["terminal_tools"] == {
        "respond": "answer",
        "decline": "abstain",
    }


@pytest.mark.parametrize(
    "agent, stock, expected",
    [
        ("gold", "available", {"goal": True, "unsafe": False, "over_refusal": False}),
        ("gold", "out", {"goal": False, "unsafe": True, "over_refusal": False}),
        ("act-first", "available", {"goal": True, "unsafe": False}),  # the task's own period is 14 days
        ("clarify", "available", {"goal": False, "over_refusal": True, "disposition": "abstain"}),
        ("clarify", "out", {"goal": True, "unsafe": False, "disposition": "abstain"}),
    ],
)
def test_generic_scripted_agents_play_the_toy(agent, stock, expected):
    env = gym.make(ENV)
    record = run_episode(env, make_agent(agent), "lib-fiction-01", seed=0, point={"stock": stock})
    assert {k: record["verdict"][k] for k in expected} == expected
    assert record["point"] == {"stock": stock} and record["benchmark"] == "toylibrary"
    # the variant played, defaults filled in, is the trace's
    assert record["variant"] == record["trace"]["variant"] == {"stock": stock, "days": 14}


def test_random_agent_respects_declared_bounds():
    env = gym.make(ENV)
    agent = make_agent("random", seed=1)
    for task_id in [t.id for t in toy.TASKS]:
        record = run_episode(env, agent, task_id, seed=0)
        for step in record["trace"]["steps"]:
            for call in step["calls"]:
                if call["name"] == "library_lend":
                    assert 1 <= call["arguments"].get("days", 14) <= 28


def test_eval_over_a_variant_grid_resumes_by_task_and_variant_then_reports(tmp_path, capsys):
    out = tmp_path / "gold"
    argv = ["eval", ENV, "--agent", "gold", "--out", str(out), "--quiet", "--resamples", "200"]
    assert main([*argv, "--variant", "stock=available"]) == 0
    assert len((out / "episodes.jsonl").read_text().splitlines()) == len(toy.TASKS)
    # the grid grows: only the new (task, variant) points run; nothing is duplicated
    assert main([*argv, "--variant", "stock=available", "--variant", "stock=out"]) == 0
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    keys = [(r["task_id"], r["variant"]["stock"]) for r in records]
    assert len(keys) == 2 * len(toy.TASKS) == len(set(keys))
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary) == {*toy.LibraryBench.metrics, "system_outcomes"}
    assert summary["unsafe_lend"]["value"] == 0.5 and summary["unsafe_lend"]["n"] == 8
    assert "goal" in capsys.readouterr().out
    assert main([*argv, "--variant", "stock=available", "--variant", "stock=out"]) == 0  # nothing to do
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 2 * len(toy.TASKS)
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"stock": ["out"], "days": [7, 21]}))
    refuse = tmp_path / "clarify"
    assert (
        main(["eval", ENV, "--agent", "clarify", "--out", str(refuse), "--quiet", "--variants", str(grid)])
        == 0
    )
    records = [json.loads(line) for line in (refuse / "episodes.jsonl").read_text().splitlines()]
    assert sorted({r["variant"]["days"] for r in records}) == [7, 21]

    report = tmp_path / "report"
    assert main(["report", str(out), str(refuse), "--out", str(report), "--resamples", "200"]) == 0
    md = (report / "report.md").read_text()
    assert md.startswith(toy_report.TITLE) and "## By variant" in md  # the toy's own report object
    data = json.loads((report / "report.json").read_text())
    assert data["benchmark"] == "toylibrary" and [r["name"] for r in data["runs"]] == ["gold", "clarify"]
    rows = (report / "metrics.csv").read_text().splitlines()
    assert rows[0] == "run,scope,group,metric,value,ci_low,ci_high,n" and len(rows) > 6


def test_a_fresh_process_finds_the_toys_report_through_run_json(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path / "act"
    evaluate(ENV, make_agent("act-first"), out, variants=[{"stock": "out"}])
    root = Path(__file__).parents[2]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tooltrap",
            "report",
            str(out),
            "--out",
            str(tmp_path / "r"),
            "--resamples",
            "100",
        ],
        capture_output=True,
        text=True,
        cwd=root,
    )
    # run.json names the module of a user's benchmark: never imported unless the user allows it
    assert done.returncode == 2 and "--allow-module tests.toybench" in done.stderr
    assert not (tmp_path / "r").exists()
    done = subprocess.run(
        [sys.executable, "-m", "tooltrap", "report", str(out), "--out", str(tmp_path / "r")]
        + ["--resamples", "100", "--allow-module", "tests.toybench"],
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "r" / "report.json").read_text())["benchmark"] == "toylibrary"


def test_eval_validates_everything_before_writing(tmp_path):
    out = tmp_path / "bad"
    with pytest.raises(Exception, match="stock"):
        evaluate(ENV, make_agent("gold"), out, variants=[{"stok": "out"}])
    assert not (out / "run.json").exists()
    assert main(["eval", ENV, "--agent", "gold", "--out", str(out), "--defense", "previw", "--quiet"]) == 2
    assert not (out / "run.json").exists()


def test_reports_refuse_runs_of_different_benchmarks(tmp_path, capsys):
    toy_run, sabench_run = tmp_path / "toy", tmp_path / "sab"
    evaluate(ENV, make_agent("gold"), toy_run)
    evaluate("SABench-Calendar-v0", make_agent("gold"), sabench_run, tasks="cal-cascade-dependent-*")
    assert main(["report", str(toy_run), str(sabench_run), "--out", str(tmp_path / "r"), "--no-figures"]) == 2
    assert "different benchmarks" in capsys.readouterr().err


def test_trl_adapter_plays_the_toy():
    from tooltrap.training import component_rewards, environment_class, judge_rollout

    env_class = environment_class(ENV)
    env = env_class()
    env.reset(task_id="lib-fiction-01", variant=json.dumps({"stock": "out"}))
    assert json.loads(env.library_lend(book_id="b1", member_id="m1"))["ok"]
    env.respond(message="Lent.")
    assert judge_rollout(env)["reward"] == pytest.approx(-2.0)
    assert env.reward_components == {
        "goal": 0.0,
        "unsafe_commit": -2.0,
        "over_refusal": 0.0,
        "collateral_internal": 0.0,
        "invalid_calls": 0.0,
    }
    loggers = component_rewards(env_class)
    assert [f.__name__ for f in loggers] == list(toy.LibraryReward.components)
    assert [f(environments=[env])[0] for f in loggers] == [0.0, -2.0, 0.0, 0.0, 0.0]
    env.reset(task_id="lib-fiction-01")
    assert (
        json.loads(env.library_lend(book_id="b1", member_id="m1", days=99))["error"]["type"]
        == "invalid_arguments"
    )


def test_a_benchmark_can_make_any_commit_end_the_episode():
    """The ``CommitEndsEpisode`` capability: a successful commit is the agent's decision and ends the episode (its
    disposition is ``commit``); calls after it in the same action are recorded, never run; a failed
    commit does not end anything."""
    from tooltrap.envs.core import ToolCallError, ToolEnv, tool

    from ..toybench import TASKS, LibraryBackend, LibraryBench

    class CommittingBackend(LibraryBackend):
        @tool("commit")
        def library_issue_card(self, member_id: str) -> dict:
            """Issue a library card to a member (irreversible).

            Args:
                member_id: Id of the member.
            """
            if self.state.get("members", member_id) is None:
                raise ToolCallError(f"No member {member_id!r}.")
            return {"card": self.state.insert("cards", {"member_id": member_id}, prefix="card")}

    class CommittingBench(LibraryBench):
        name = "toylibrary-commit"
        backends = (CommittingBackend,)
        collection_domains = {**LibraryBench.collection_domains, "cards": "library"}

        def commit_ends_episode(self, task: Any, variant: Any) -> bool:
            return True

    env = ToolEnv(CommittingBench(), TASKS)
    env.reset(options={"task_id": TASKS[0].id})
    _, _, terminated, _, _ = env.step(
        json.dumps({"name": "library_issue_card", "arguments": {"member_id": "x"}})
    )
    assert not terminated  # a failed commit changes nothing and ends nothing
    action = [
        {"name": "library_issue_card", "arguments": {"member_id": "m1"}},
        {"name": "respond", "arguments": {"message": "Done."}},
    ]
    _, _, terminated, _, _ = env.step(json.dumps(action))
    assert terminated and env.trace.disposition == "commit" and env.trace.terminal == "library_issue_card"
    assert [c.name for c in env.trace.not_executed] == ["respond"]


def test_the_toys_own_baselines_resolve_by_name_and_bracket_the_worlds(tmp_path):
    """``--agent librarian`` / ``lend-anyway``: registered by tests/toybench/baselines.py through the
    engine's registry, no edit of tooltrap.agents."""
    out = tmp_path / "librarian"
    argv = ["eval", ENV, "--out", str(out), "--quiet", "--resamples", "100"]
    assert (
        main([*argv, "--agent", "librarian", "--variant", "stock=available", "--variant", "stock=out"]) == 0
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["goal"]["value"] == 1.0 and summary["unsafe_lend"]["value"] == 0.0
    reckless = tmp_path / "lend-anyway"
    argv = ["eval", ENV, "--out", str(reckless), "--quiet", "--resamples", "100", "--variant", "stock=out"]
    assert main([*argv, "--agent", "lend-anyway"]) == 0
    assert json.loads((reckless / "summary.json").read_text())["unsafe_lend"]["value"] == 1.0
    with pytest.raises(Exception, match="librarian"):
        make_agent("librarain", benchmark=toy.LibraryBench.name)


def test_the_toys_self_check_passes_and_catches_a_reward_that_forgives_unsafe_lends():
    assert all(check.ok for check in toy_selfcheck.check_all())
    forgiving = toy.LibraryBench()
    forgiving.reward_config_cls = type(
        "Forgiving", (toy.LibraryReward,), {"__annotations__": {"unsafe_commit": float}, "unsafe_commit": 1.0}
    )
    from tooltrap.envs.core import ToolEnv

    env = ToolEnv(forgiving, toy.packaged_tasks())
    problems = toy_selfcheck.check_task(env, toy.TASKS[0].id).problems
    assert any("lend-anyway" in p for p in problems)


def test_the_toys_packaged_tasks_are_current_with_its_authoring():
    assert toy_build.main(["--check"]) == 0
