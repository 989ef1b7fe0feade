"""A run in which no episode reached the model (every one ended at the provider) is a result, not a
crash, on every benchmark: ``tooltrap eval`` records the system outcomes, writes a summary whose every
metric has an empty denominator, exits with status 3; ``tooltrap report`` writes its tables and figures."""

from __future__ import annotations

import json
import warnings

import gymnasium as gym
import pytest

import tooltrap
from tooltrap.cli import main
from tooltrap.evaluate import EPISODES, read_episodes
from tooltrap.wrappers.eval.report import summary_of

ENV_IDS = ["SABench-Calendar-v0", "EpiSEM-Finance-v0", "SentryBench-Dispatch-v0", "AgentProp-Weather-v0"]


class _Failing:
    """A model whose server answers every request with a 503: every episode is a system outcome (a
    server that answers is reachable, so the run goes on to the end)."""

    name, privileged, batchable, last_raw = "failing", False, False, None

    def clone(self):
        return self

    def reset(self, observation, info, *, task=None, seed=None):
        pass

    def act(self, observation, info):
        from tooltrap.agents.llm import ProviderError

        raise ProviderError("http_503", "overloaded")

    def describe(self):
        return {"name": self.name}


@pytest.fixture
def failing_agent(monkeypatch):
    import tooltrap.agents as agents

    monkeypatch.setitem(agents.GENERIC_AGENTS, "failing", _Failing)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_run_without_a_usable_episode_is_recorded_summarized_and_reported(
    env_id, tmp_path, capsys, failing_agent
):
    env = gym.make(env_id)
    tasks = ",".join(env.unwrapped.tasks.ids[:3])
    env.close()
    out = tmp_path / "run"
    argv = ["eval", env_id, "--agent", "failing", "--tasks", tasks, "--out", str(out), "--quiet"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no "mean of empty slice" on the way to NaN
        assert main([*argv, "--resamples", "50"]) == 3
        assert "every episode (3) ended at the provider (http_503 3)" in capsys.readouterr().err
        records = read_episodes(out / EPISODES)
        assert [r["system_outcome"] for r in records] == ["http_503"] * 3
        summary = json.loads((out / "summary.json").read_text())
        assert summary.pop("system_outcomes") == {"n": 3, "by_kind": {"http_503": 3}}
        assert summary and all(metric["n"] == 0 for metric in summary.values()), summary
        # the same with no record at all (a caller's empty selection), and through the report
        report = tooltrap.benchmark_report(records[0]["benchmark"], env_id)
        empty = summary_of(report, [], n_resamples=50)
        assert empty["system_outcomes"]["n"] == 0 and all(
            v["n"] == 0 for k, v in empty.items() if k != "system_outcomes"
        )
        folder = tmp_path / "report"
        assert main(["report", str(out), "--out", str(folder), "--resamples", "50"]) == 0
    assert (folder / "report.json").exists() and (folder / "metrics.csv").exists()
    for name in ("report.json", "metrics.csv"):
        assert (folder / name).stat().st_size > 0, name
