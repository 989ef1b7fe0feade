"""The agent registry: a benchmark's baselines are registered from its own folder and resolved by name
(per benchmark when one is given, by each task's benchmark otherwise); a user's benchmark brings its
own baselines without editing ``agents/``; unknown names get a did-you-mean; the baselines and the
provider module keep to their layers."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import tests.toybench as toy
import tooltrap
from tooltrap.agents import GENERIC_AGENTS, PerBenchmarkAgent, make_agent
from tooltrap.cli import main
from tooltrap.envs.core import (
    BASELINES,
    EnvUsageError,
    ScriptedAgent,
    ToolCall,
    UnknownNameError,
    register_baseline,
)
from tooltrap.envs.episem.baselines import CarefulAgent as EpiSEMCareful
from tooltrap.envs.episem.baselines import TrustingAgent as EpiSEMTrusting
from tooltrap.envs.sentry.baselines import CarefulOperatorAgent
from tooltrap.evaluate import run_episode

gym.register_envs(tooltrap)
ROOT = Path(__file__).resolve().parents[2]
TOY_ENV = f"tests.toybench:{toy.ENV_ID}"


@pytest.fixture
def toy_baselines(monkeypatch):
    """An empty baseline table for the toy benchmark, removed after the test."""
    monkeypatch.setitem(BASELINES, toy.LibraryBench.name, {})
    return BASELINES[toy.LibraryBench.name]


def _lend_anyway() -> type[ScriptedAgent]:
    @register_baseline(toy.LibraryBench)
    class LendAnywayAgent(ScriptedAgent):
        """Lends the book whatever the stock says (the toy's unsafe commit when it is out)."""

        name = "lend-anyway"

        def script(self, task: Any, info: dict[str, Any]) -> list[ToolCall]:
            return [
                ToolCall(
                    name="library_lend", arguments={"book_id": task.book_id, "member_id": task.member_id}
                )
            ]

    return LendAnywayAgent


def test_a_user_benchmark_brings_its_own_baseline(toy_baselines, tmp_path, capsys):
    cls = _lend_anyway()
    assert toy_baselines == {"lend-anyway": cls}
    assert "lend-anyway" not in GENERIC_AGENTS  # nothing in agents/ changed
    assert isinstance(make_agent("lend-anyway"), cls)
    assert isinstance(make_agent("lend-anyway", benchmark="toylibrary"), cls)

    env = gym.make(TOY_ENV)
    task_id = env.unwrapped.tasks.ids[0]
    record = run_episode(env, make_agent("lend-anyway"), task_id, seed=0, point={"stock": "out"})
    assert record["verdict"]["unsafe"] and record["trace"]["disposition"] == "answer"

    # through the CLI: the name resolves to the toy benchmark's baseline
    out = tmp_path / "run"
    argv = ["eval", TOY_ENV, "--agent", "lend-anyway", "--variant", "stock=out", "--out", str(out)]
    assert main([*argv, "--quiet", "--resamples", "50"]) == 0
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert records and all(r["verdict"]["unsafe"] for r in records)
    assert json.loads((out / "run.json").read_text())["agent"] == {"name": "lend-anyway"}

    capsys.readouterr()
    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    assert "toylibrary" in listed and "lend-anyway" in listed


def test_a_name_is_taken_once_per_benchmark(toy_baselines):
    _lend_anyway()
    _lend_anyway_again = type("LendAnywayAgent", (ScriptedAgent,), {"name": "lend-anyway"})
    with pytest.raises(EnvUsageError, match="taken by"):
        register_baseline("toylibrary")(_lend_anyway_again)
    with pytest.raises(EnvUsageError, match="baseline name"):
        register_baseline("toylibrary", name="")(lambda: ScriptedAgent())


def _play(env_id: str, agent, task_id: str | None = None, **point) -> dict[str, Any]:
    env = gym.make(env_id)
    task_id = task_id or env.unwrapped.tasks.ids[0]
    record = run_episode(env, agent, task_id, seed=0, point=point or None)
    return {k: record[k] for k in ("verdict", "reward", "trace")}


@pytest.mark.parametrize(
    ("name", "benchmark", "cls"),
    [("careful", "episem", EpiSEMCareful), ("careful", "sentry", CarefulOperatorAgent)],
)
def test_a_shared_name_resolves_to_the_benchmark_evaluated(name, benchmark, cls):
    assert type(make_agent(name, benchmark=benchmark)) is cls


@pytest.mark.parametrize(
    ("name", "env_id", "direct"),
    [
        ("careful", "EpiSEM-Finance-v0", lambda: make_agent("careful", benchmark="episem")),
        ("careful", "SentryBench-Dispatch-v0", lambda: make_agent("careful", benchmark="sentry")),
        ("trusting", "EpiSEM-Finance-v0", lambda: EpiSEMTrusting()),
        ("trusting", "AgentProp-Weather-v0", lambda: make_agent("trusting", benchmark="agentprop")),
    ],
)
def test_without_a_benchmark_a_shared_name_follows_each_task(name, env_id, direct):
    agent = make_agent(name)
    assert isinstance(agent, PerBenchmarkAgent) and agent.describe() == {"name": name}
    assert _play(env_id, agent) == _play(env_id, direct())


def test_a_task_of_a_benchmark_without_that_baseline_is_refused():
    with pytest.raises(EnvUsageError, match="defined by episem, sentry, not by 'sabench'"):
        _play("SABench-Calendar-v0", make_agent("careful"))


def test_unknown_names_suggest_close_ones():
    with pytest.raises(UnknownNameError, match="Did you mean 'careful'"):
        make_agent("carefull")
    with pytest.raises(UnknownNameError, match="Did you mean 'obedient'"):
        make_agent("obedent", benchmark="sentry")
    with pytest.raises(UnknownNameError, match="'obedient' is a baseline of sentry"):
        make_agent("obedient", benchmark="sabench")
    with pytest.raises(UnknownNameError, match="Unknown benchmark 'epi-sem'. Did you mean 'episem'"):
        make_agent("careful", benchmark="epi-sem")
    assert main(["eval", "SABench-Calendar-v0", "--agent", "obedient", "--out", "unused"]) == 2


def test_sabench_trap_baseline_commits_the_trap_the_judge_flags():
    env = gym.make("SABench-Calendar-v0")
    for task_id in list(env.unwrapped.tasks.ids)[:6]:
        verdict = run_episode(env, make_agent("trap"), task_id, seed=0)["verdict"]
        task = env.unwrapped.tasks.get(task_id)
        assert verdict["cd"] and set(task.traps[0].expected_rules) <= set(verdict["rules"])


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            found.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_baselines_import_only_the_engine_and_their_benchmark():
    files = sorted((ROOT / "envs").glob("*/baselines.py"))
    assert {f.parent.name for f in files} == {"sabench", "episem", "sentry", "agentprop"}
    for path in files:
        outside = {m for m in _imports(path) if m.startswith("tooltrap") and m != "tooltrap.envs.core"}
        assert not outside, f"{path}: {outside}"


def test_the_provider_module_is_shared_and_wrappers_never_import_agents():
    from tooltrap.agents.llm import OpenAIChatAgent, ProviderError
    from tooltrap.wrappers import provider

    assert ProviderError is provider.ProviderError and issubclass(OpenAIChatAgent, provider.ChatModel)
    for path in sorted((ROOT / "wrappers").rglob("*.py")):
        assert not {m for m in _imports(path) if m.startswith("tooltrap.agents")}, path
