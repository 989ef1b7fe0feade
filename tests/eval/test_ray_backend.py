"""``tooltrap eval --backend ray``: episodes spread over Ray actors on a simulated multi-node cluster
(``ray.cluster_utils.Cluster``: a head and two worker nodes in this machine) give the records of a local
run, resume across backends, rebuild a model agent inside each actor, and fail clearly when Ray or the
cluster is not there."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install 'tooltrap[ray]'")

from tooltrap.agents import make_agent  # noqa: E402
from tooltrap.cli import main  # noqa: E402
from tooltrap.envs.core import EnvUsageError  # noqa: E402
from tooltrap.evaluate import evaluate  # noqa: E402
from tooltrap.wrappers.eval.run import EPISODES, read_episodes  # noqa: E402

ENV = "SABench-Calendar-v0"
TASKS = "cal-cascade-dependent-cancel-occurrence-*"


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    nodes = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False},
    )
    for _ in range(2):
        nodes.add_node(num_cpus=1)
    nodes.wait_for_nodes()
    ray.init(address=nodes.address, log_to_driver=False, include_dashboard=False)
    yield nodes
    ray.shutdown()
    nodes.shutdown()


def _sorted(out: Path) -> list[str]:
    """The run's records as JSON, sorted by task and grid point (completion order differs by backend)."""
    records = read_episodes(out / EPISODES)
    return sorted(json.dumps(r, sort_keys=True) for r in records)


def test_ray_actors_on_three_nodes_write_the_records_of_a_local_run(cluster, tmp_path):
    local, spread = tmp_path / "local", tmp_path / "ray"
    evaluate(ENV, make_agent("act-first"), local, tasks=TASKS)
    records = evaluate(ENV, make_agent("act-first"), spread, tasks=TASKS, backend="ray", concurrency=3)
    assert len(records) >= 3 and _sorted(local) == _sorted(spread)
    nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert len(nodes) == 3  # the simulated cluster the actors ran on
    assert json.loads((local / "summary.json").read_text()) == json.loads(
        (spread / "summary.json").read_text()
    )


def test_a_run_resumes_across_backends_without_loss_or_duplicates(cluster, tmp_path):
    out, whole = tmp_path / "mixed", tmp_path / "whole"
    evaluate(ENV, make_agent("gold"), whole, tasks=TASKS)
    first = read_episodes(whole / EPISODES)[0]["task_id"]
    evaluate(ENV, make_agent("gold"), out, tasks=first)  # locally, one episode
    evaluate(ENV, make_agent("gold"), out, tasks=TASKS, backend="ray", concurrency=2)  # grown on Ray
    assert _sorted(out) == _sorted(whole)
    evaluate(ENV, make_agent("gold"), out, tasks=TASKS)  # back locally: nothing left to play
    assert len((out / EPISODES).read_text().splitlines()) == len(read_episodes(whole / EPISODES))


def test_a_model_agent_is_rebuilt_in_each_actor_from_its_spec(cluster, tmp_path, llm_server):
    from tests.llm_server import hermes_call, scripted_model

    model = scripted_model(hermes_call("calendar_list_events"), "Done.")
    local, spread = tmp_path / "local", tmp_path / "ray"
    agent = make_agent(f"openai:{model}", base_url=llm_server, max_retries=0)
    assert agent.recipe.spec == f"openai:{model}" and agent.recipe.options["base_url"] == llm_server
    evaluate(ENV, agent, local, tasks=TASKS, concurrency=3)
    evaluate(ENV, agent, spread, tasks=TASKS, backend="ray", concurrency=3)
    assert _sorted(local) == _sorted(spread)
    assert all(r["system_outcome"] is None for r in read_episodes(spread / EPISODES))


def test_an_agent_that_cannot_travel_is_a_usage_error(cluster, tmp_path):
    import threading

    from tooltrap.agents.scripted import ActFirstAgent

    agent = ActFirstAgent()
    agent.lock = threading.Lock()  # a resource that cannot be pickled, and no spec to rebuild it from
    with pytest.raises(EnvUsageError, match="cannot be pickled"):
        evaluate(ENV, agent, tmp_path, tasks=TASKS, backend="ray")


def test_an_unreachable_cluster_fails_in_seconds_naming_the_address(tmp_path):
    bound = socket.socket()  # bound, never listening: a connection is refused while it is held
    bound.bind(("127.0.0.1", 0))
    address = f"127.0.0.1:{bound.getsockname()[1]}"
    argv = ["eval", ENV, "--agent", "gold", "--tasks", TASKS, "--out", str(tmp_path / "x")]
    # a fresh process: this one may hold a Ray connection already
    done = subprocess.run(
        [sys.executable, "-m", "tooltrap", *argv, "--backend", "ray", "--ray-address", address, "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    bound.close()
    assert done.returncode == 2, done.stderr
    assert f"cannot reach the Ray cluster at {address}" in done.stderr
    assert done.stderr.count("\n") == 1  # one line, no traceback
    assert not (tmp_path / "x" / EPISODES).exists()


def test_without_ray_the_backend_says_which_extra(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if it were not installed
    argv = ["eval", ENV, "--agent", "gold", "--tasks", TASKS, "--out", str(tmp_path), "--quiet"]
    assert main([*argv, "--backend", "ray"]) == 2
    assert "pip install 'tooltrap[ray]'" in capsys.readouterr().err


def test_ray_options_are_checked_before_anything_runs(tmp_path, capsys):
    argv = ["eval", ENV, "--agent", "gold", "--out", str(tmp_path / "x"), "--quiet"]
    assert main([*argv, "--ray-address", "127.0.0.1:1"]) == 2
    assert "--backend ray" in capsys.readouterr().err
    assert main(["eval", "sabench_dialogue_v0", "--backend", "ray", "--out", str(tmp_path / "y")]) == 2
    assert "does not apply to the multi-agent env" in capsys.readouterr().err
