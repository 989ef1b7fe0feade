"""Every hostile reply kind a model server can send travels through a whole multi-step episode of each
benchmark (issue 24, deliverable 1): a lone high and a lone low surrogate (as JSON escapes and as raw
bytes), NUL and other control characters, invalid JSON escapes in a tool call's arguments, a 1 MB reply,
and a valid emoji beside a lone half of one. Each is echoed back to the server in the next request's
conversation, so a reply that was not made safe as it was read would crash the run
(``UnicodeEncodeError``) instead of finishing it. The run must complete, every record be written and
encodable as UTF-8, and each replacement be recorded on its step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from tests.hostile_server import TEXTS, script_model
from tooltrap.envs.core.text import REPLACEMENT
from tooltrap.evaluate import EPISODES, evaluate, read_episodes

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

#: one task of each benchmark
TASKS = {
    "SABench-Calendar-v0": "cal-cascade-dependent-cancel-occurrence-01",
    "EpiSEM-Finance-v0": "fin-wire-dual-control-3",
    "SentryBench-v0": "drift-011",
    "AgentProp-Weather-v0": "weather_0574",
}


@pytest.fixture(scope="module")
def hostile():
    from tests.conftest import start_server, stop_server

    proc, url = start_server(Path(__file__).parents[1] / "hostile_server.py")
    yield url
    stop_server(proc)


def _read_call(env_id: str, task_id: str) -> dict[str, Any]:
    """A read call from the task's careful solution: valid in this episode (it keeps the env's
    consecutive-error cap from ending the episode early), and a text argument to carry hostile text."""
    env = gym.make(env_id)
    env.reset(options={"task_id": task_id})
    base = env.unwrapped
    kinds = base.executor.toolset.kinds
    task = base.task
    for call in [*task.gold, *getattr(task, "gold_safe", [])]:
        if kinds.get(call.name) == "read" and any(isinstance(v, str) for v in call.arguments.values()):
            return {"name": call.name, "arguments": dict(call.arguments)}
    # SABench's gold writes without looking: a search that takes any text is valid too
    return {"name": "calendar_list_events", "arguments": {"query": "planning"}}


def _turns(read: dict[str, Any]) -> list[dict[str, Any]]:
    """Eight replies: the hostile kinds, each next to a valid read so the episode goes on, then a final
    answer in plain text (a follow-up turn, where a benchmark has one, gets it again)."""
    param = next(k for k, v in read["arguments"].items() if isinstance(v, str))

    def hostile(kind: str, **extra: Any) -> dict[str, Any]:
        call = {"name": read["name"], "arguments": {**read["arguments"], param: f"${kind}"}}
        return {"content": f"${kind}", "calls": [call, read], **extra}

    bad_escapes = {"name": read["name"], "arguments_text": '{"' + param + '": "\\x41 \\ud800 \\q"}'}
    return [
        hostile("high"),
        {"calls": [bad_escapes]},  # invalid JSON escapes (and a lone surrogate escape) in the arguments
        hostile("low", encoding="surrogatepass"),  # the surrogate as raw bytes, not as an escape
        {"content": "$mb"},  # 1 MB of plain text: an answer too long for the action space
        hostile("nul"),
        hostile("control"),
        hostile("emoji"),
        {"content": "done \U0001f642 \udfff"},
    ]


def _utf8(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("env_id", list(TASKS))
def test_every_hostile_reply_kind_goes_through_a_whole_episode(hostile, tmp_path, env_id):
    from tooltrap.agents import make_agent

    task_id = TASKS[env_id]
    read = _read_call(env_id, task_id)
    param = next(k for k, v in read["arguments"].items() if isinstance(v, str))
    model = script_model(_turns(read))
    agent = make_agent(f"openai:{model}", base_url=hostile, timeout=30, max_retries=1, backoff=0.01)
    (record,) = evaluate(env_id, agent, tmp_path, tasks=task_id, resamples=10)

    assert record["system_outcome"] is None  # every reply was the model's, none a provider failure
    # every record is written, readable, and encodable as UTF-8 as it stands
    lines = (tmp_path / EPISODES).read_bytes().decode("utf-8").splitlines()
    assert len(lines) == 1 and json.loads(lines[0]) == record
    (back,) = read_episodes(tmp_path / EPISODES)
    _utf8(back)
    json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))

    trace = record["trace"]
    steps = trace["steps"]
    assert len(steps) >= 8  # the whole script was played: a multi-step episode
    # each replacement is recorded on its step, and the total on the trace
    escaped = [s.get("escaped", 0) for s in steps]
    assert escaped[0] >= 2  # content and argument of the high surrogate
    assert escaped[1] == 1  # the lone escape inside the invalid arguments
    assert escaped[2] >= 2  # the raw-bytes low surrogate, content and argument
    assert escaped[3] == 0 and escaped[4] == 0 and escaped[5] == 0  # 1 MB, NUL, control: encodable as sent
    assert escaped[6] >= 2 and escaped[7] >= 1  # the lone half beside the emoji; the final answer's
    assert trace["escaped"] == sum(escaped)

    # what was encodable is kept exactly: NUL and control characters, the valid emoji
    sent = [(s["calls"][0]["arguments"][param] if s["calls"] else None) for s in steps[:7]]
    assert sent[4] == TEXTS["nul"] and sent[5] == TEXTS["control"]
    assert sent[6] == TEXTS["emoji"].replace("\ud83d", REPLACEMENT) and "\U0001f642" in sent[6]
    assert sent[0] == TEXTS["high"].replace("\ud800", REPLACEMENT)
    assert sent[2] == TEXTS["low"].replace("\udc00", REPLACEMENT)
    assert steps[1]["error"]["type"] == "parse_error"  # invalid escapes: an invalid call, the model's
    assert steps[3]["error"]["type"] == "parse_error"  # the 1 MB answer is refused, not stored whole...
    assert len(steps[3]["raw"]) > 2**20  # ...but the trace keeps what the model said
    final = trace["terminal_arguments"]
    assert final is not None and f"done \U0001f642 {REPLACEMENT}" in json.dumps(final, ensure_ascii=False)


def test_the_hostile_server_table_script_runs(tmp_path):
    """scripts/hostile_server.py (the issue's table; the whole of it takes minutes) on two kinds."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    argv = [
        sys.executable,
        str(root / "scripts" / "hostile_server.py"),
        "--kinds",
        "storm-500,surrogate-content",
    ]
    done = subprocess.run(
        [*argv, "--benchmarks", "agentprop", "--json", str(tmp_path / "runs.json")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| storm-500 | system (http_500) · " in done.stdout and " · y |" in done.stdout
    assert "| surrogate-content | model · " in done.stdout
    runs = {r["kind"]: r for r in json.loads((tmp_path / "runs.json").read_text())}
    assert runs["storm-500"]["rerun"] == "y" and runs["surrogate-content"]["records_ok"]
