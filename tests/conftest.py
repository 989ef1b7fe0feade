from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import gymnasium as gym
import pytest

import tooltrap

os.environ.setdefault("HF_HUB_OFFLINE", "1")
gym.register_envs(tooltrap)


@pytest.fixture
def calendar_env():
    env = gym.make("SABench-Calendar-v0")
    yield env
    env.close()


def act(name: str, **arguments) -> str:
    return json.dumps({"name": name, "arguments": arguments})


# -- tiny offline model, a task file with short prompts, and a real HTTP server (training / LLM tests) --
MINI_TOOLS = ["calendar_list_events", "calendar_cancel_event", "respond", "clarify"]
MINI_ENV_KWARGS = {"state_format": "tools_only"}


@pytest.fixture(scope="session")
def mini_tasks(tmp_path_factory):
    """Five real SABench tasks restricted to five tools (short prompts for the tiny model)."""
    from tooltrap.envs.sabench import packaged_tasks

    tasks = packaged_tasks("calendar").select(templates=["cal-cascade-dependent-cancel-occurrence"])
    path = tmp_path_factory.mktemp("tasks") / "mini.json"
    path.write_text(
        json.dumps({"tasks": [json.loads(t.model_dump_json()) | {"tools": MINI_TOOLS} for t in tasks]})
    )
    return path


#: one short-prompt template per SABench target system, for multi-environment training
MINI_MIX = {
    "SABench-Calendar-v0": ("cal-cascade-dependent-cancel-occurrence", MINI_TOOLS),
    "SABench-Email-v0": (
        "em-mis-targeting-external-client-request",
        ["email_search", "email_reply", "respond", "clarify"],
    ),
    "SABench-Ticket-v0": (
        "tk-cascade-independent-internal-note",
        ["ticket_search", "ticket_comment", "respond", "clarify"],
    ),
}


@pytest.fixture(scope="session")
def mini_mix(tmp_path_factory):
    """Three envs (SABench-Email, -Calendar, -Ticket), each on one template with a few tools."""
    from tooltrap.envs.sabench import packaged_tasks
    from tooltrap.training import EnvMix

    folder = tmp_path_factory.mktemp("mix")
    mix = []
    for env_id, (template, tools) in MINI_MIX.items():
        tasks = packaged_tasks("all").select(templates=[template])
        path = folder / f"{template}.json"
        path.write_text(
            json.dumps({"tasks": [json.loads(t.model_dump_json()) | {"tools": tools} for t in tasks]})
        )
        mix.append(EnvMix(env_id, env_kwargs={**MINI_ENV_KWARGS, "tasks_file": str(path)}))
    return mix


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    pytest.importorskip("trl")
    from tooltrap.training.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="session")
def tool_calling_model(tiny_model, tmp_path_factory):
    """The tiny model scripted (not trained) to call ``calendar_list_events``, then ``respond`` once a tool
    has answered: a random model never emits a call, so the GRPO tool loop and the agents' call paths
    would run empty.
    Whether SFT teaches the call is checked once in CI (scripts/check_warmup.py), not per test run."""
    from tooltrap.training.tiny import scripted_tool_caller

    return scripted_tool_caller(tiny_model, tmp_path_factory.mktemp("caller") / "model")


def start_server(script: Path, *args: str) -> tuple[subprocess.Popen, str]:
    """Start a test server (``script`` ``args``, see tests/serving.py) on a loopback socket bound here
    and wait until it says it is ready: however long that takes on a loaded machine, never a fixed
    budget; a server that exits first raises with its stderr. Returns the process and its ``/v1`` URL."""
    with socket.socket() as sock, tempfile.TemporaryFile() as errors:
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        port = sock.getsockname()[1]
        proc = subprocess.Popen(
            [sys.executable, str(script), *args, f"fd:{sock.fileno()}"],
            pass_fds=[sock.fileno()],
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != b"ready":  # the line, or EOF when the process ended
            proc.kill()
            proc.wait()
            errors.seek(0)
            raise RuntimeError(f"test server exited: {errors.read().decode(errors='replace')[-2000:]}")
    return proc, f"http://127.0.0.1:{port}/v1"


def stop_server(proc: subprocess.Popen) -> None:
    """Kill a test server: it holds nothing worth a graceful shutdown, and uvicorn's would wait for
    requests that never end (a ``silent`` reply sleeps)."""
    proc.kill()
    proc.wait()


@pytest.fixture(scope="session")
def llm_server():
    """A real OpenAI-compatible server (FastAPI + uvicorn, tests/llm_server.py) on loopback whose replies
    the requested model name scripts (``emit:`` tool calls, ``say:`` text, provider faults): no model
    runs, so it starts in about a second and answers in milliseconds."""
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    proc, url = start_server(Path(__file__).parent / "llm_server.py")
    yield url
    stop_server(proc)


@pytest.fixture(scope="session")
def say_server(llm_server):
    """The same server, named for the tests that use its ``say:<TEXT>`` replies (judges, prompted formats)."""
    return llm_server
