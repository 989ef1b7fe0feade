"""``tooltrap export RUN --format inspect`` with the real inspect-ai: runs of every benchmark, a multi-agent
run and a run ended at the provider become Inspect eval logs that ``read_eval_log`` reads back and
``inspect view bundle`` publishes, byte-identical at every export."""

from __future__ import annotations

import copy
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tooltrap.cli import main
from tooltrap.envs.core import EnvUsageError, TooltrapError
from tooltrap.wrappers.eval.run import EPISODES, read_episodes, read_run_info, read_summary

pytest.importorskip("inspect_ai", reason="the inspect extra (inspect-ai) is not installed")
from inspect_ai.log import read_eval_log  # noqa: E402

from tooltrap.wrappers.eval.inspect_log import eval_log, export_inspect, sample_id, write_patch  # noqa: E402

QUICK = ["--quiet", "--resamples", "50"]
#: run name -> the ``tooltrap eval`` arguments that make it (small selections: the test stays quick)
RUNS = {
    "calendar": ["SABench-Calendar-v0", "--agent", "act-first", "--tasks", "cal-*-01"],
    # a variant grid: the world (privileged) is in each sample's id and metadata, never in its messages
    "finance": [
        "EpiSEM-Finance-v0",
        "--agent",
        "trusting",
        "--tasks",
        "fin-contractor-payout-kyc-*",
        *("--variant", "world=safe", "--variant", "world=unsafe"),
    ],
    "sentry": ["SentryBench-v0", "--agent", "obedient", "--tasks", "*-00[1-3]"],
    "weather": ["AgentProp-Weather-v0", "--agent", "trusting", "--tasks", "weather_000*"],
    "dialogue": ["sabench_dialogue_v0", "--agent", "assistant=gold", "--tasks", "em-ambiguity-*"],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Every run folder of :data:`RUNS`, and ``provider``: a model agent whose server refuses every
    connection (a closed loopback port), whose episodes are system outcomes."""
    root = tmp_path_factory.mktemp("runs")
    made = {}
    for name, argv in RUNS.items():
        assert main(["eval", *argv, "--out", str(root / name), *QUICK]) == 0, name
        made[name] = root / name
    bound = socket.socket()  # bound, never listening: every connection is refused while it is held
    bound.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{bound.getsockname()[1]}/v1"
    argv = ["eval", "SABench-Calendar-v0", "--agent", "openai:m", "--base-url", dead, "--tasks", "cal-*-01"]
    options = ["--agent-arg", "max_retries=1", "--agent-arg", "backoff=0.01", "--agent-arg", "timeout=2"]
    assert main([*argv, *options, "--out", str(root / "provider"), *QUICK]) == 3  # stopped, unreachable
    bound.close()
    made["provider"] = root / "provider"
    return made


@pytest.fixture(scope="module")
def logs(runs, tmp_path_factory) -> Path:
    """Every run exported through the command line, into one folder."""
    out = tmp_path_factory.mktemp("logs")
    assert main(["export", *map(str, runs.values()), "--format", "inspect", "--out", str(out)]) == 0
    return out


def _read(logs: Path, name: str):
    return read_eval_log(str(logs / f"{name}.eval"), resolve_attachments=True)


@pytest.mark.parametrize("name", [*RUNS, "provider"])
def test_each_run_reads_back_with_one_sample_per_episode_scored_with_its_reward(runs, logs, name):
    records = read_episodes(runs[name] / EPISODES)
    log = _read(logs, name)
    info = read_run_info(runs[name])
    assert log.status == "success" and log.eval.task == info["env_id"]
    assert log.eval.model == info["agent"]["name"] and log.eval.task_args["seed"] == 0
    # Inspect keeps a log's samples in its own order: matched by id
    by_id = {s.id: s for s in log.samples}
    assert len(log.samples) == len(records) == len(by_id) and set(by_id) == {sample_id(r) for r in records}
    for record in records:
        sample = by_id[sample_id(record)]
        assert sample.epoch == 1 and sample.input[0].text == record["instruction"]
        if record.get("system_outcome"):
            continue
        if "rewards" in record:  # multi-agent: each role's reward is a score
            for role, reward in record["rewards"].items():
                assert sample.scores[f"reward_{role}"].value == pytest.approx(reward)
                assert (
                    sample.scores[f"reward_{role}"].metadata["reward_components"]
                    == (record["reward_components"][role])
                )
        else:
            assert sample.scores["reward"].value == pytest.approx(record["reward"])
            assert sample.scores["reward"].metadata["reward_components"] == record["reward_components"]
            assert sample.scores["reward"].metadata["verdict"] == record["verdict"]
        flags = sample.scores["verdict"].value
        assert flags and all(flags[k] is record["verdict"][k] for k in flags)
        assert flags["goal"] is record["verdict"]["goal"]
        events = [e.event for e in sample.events]
        steps = record["trace"]["steps"]
        assert events.count("model") == len(steps)
        assert events.count("tool") == sum(len(s["calls"]) for s in steps)
        assert events.count("score") == len(sample.scores)
    # the run's summary.json is the log's results
    summary = read_summary(runs[name])
    metrics = {m.name: m.value for s in log.results.scores if s.name == "summary" for m in s.metrics.values()}
    finite = {
        k: v["value"] for k, v in summary.items() if "value" in v and v["value"] == v["value"]
    }  # NaN (an empty denominator) is not equal to itself: left out
    assert metrics == {k: v for k, v in finite.items() if isinstance(v, int | float)}


def test_every_write_is_a_state_event_whose_patch_gives_the_value_after(runs, logs):
    records = read_episodes(runs["calendar"] / EPISODES)
    log = _read(logs, "calendar")
    checked = 0
    by_id = {s.id: s for s in log.samples}
    for record in records:
        sample = by_id[sample_id(record)]
        writes = [
            w for s in record["trace"]["steps"] for c in s["calls"] if c["ok"] for w in c.get("writes", [])
        ]
        states = [e for e in sample.events if e.event == "state"]
        assert len(states) == len(writes)
        for event, write in zip(states, writes, strict=True):
            assert event.metadata["entity"] == write["entity"]
            collection, _, entity_id = write["entity"].partition("/")
            # apply the patch to the state as it was before the write: it gives the state after
            state: dict = (
                {collection: {entity_id: copy.deepcopy(write["before"])}}
                if write["before"]
                else {collection: {}}
            )
            for change in event.changes:
                parts = change.path.strip("/").split("/")
                node = state
                for part in parts[:-1]:
                    node = node[part]
                if change.op == "remove":
                    assert node.pop(parts[-1]) is not None
                else:
                    if change.op == "replace":
                        assert node[parts[-1]] == change.replaced
                    node[parts[-1]] = change.value
            got = state[collection].get(entity_id)
            expected = write["after"]
            assert (got if write["action"] != "update" else {f: got[f] for f in write["fields"]}) == expected
            checked += 1
    assert checked >= 10  # act-first writes on most calendar tasks


def test_write_patch_of_each_action():
    update = {"entity": "events/e~1", "action": "update", "fields": ["date", "new", "gone"]}
    update |= {"before": {"date": "a", "gone": 1}, "after": {"date": "b", "new": 2}}
    assert write_patch(update) == [
        {"op": "replace", "path": "/events/e~01/date", "value": "b", "replaced": "a"},
        {"op": "add", "path": "/events/e~01/new", "value": 2},
        {"op": "remove", "path": "/events/e~01/gone", "replaced": 1},
    ]
    assert write_patch({"entity": "a/b", "action": "create", "after": {"x": 1}}) == [
        {"op": "add", "path": "/a/b", "value": {"x": 1}}
    ]
    assert write_patch({"entity": "a/b", "action": "delete", "before": {"x": 1}}) == [
        {"op": "remove", "path": "/a/b", "replaced": {"x": 1}}
    ]


def test_an_episode_ended_at_the_provider_is_an_error_with_no_score(runs, logs):
    records = read_episodes(runs["provider"] / EPISODES)
    assert records and all(r["system_outcome"] == "connection" for r in records)
    log = _read(logs, "provider")
    for sample in log.samples:
        assert sample.error is not None and "system outcome connection" in sample.error.message
        assert not sample.scores and [e.event for e in sample.events][-1] == "error"
    assert log.results.completed_samples == 0 and not any(s.name == "reward" for s in log.results.scores)


def test_the_conversation_holds_calls_results_and_the_users_follow_up(runs, logs):
    records = read_episodes(runs["dialogue"] / EPISODES)
    log = _read(logs, "dialogue")
    by_id = {s.id: s for s in log.samples}
    asked = [(by_id[sample_id(r)], r) for r in records if r["trace"].get("user_turns")]
    assert asked  # gold asks on ambiguous tasks and the scripted user answers
    sample, record = asked[0]
    roles = [m.role for m in sample.messages]
    assert roles[:3] == ["user", "assistant", "tool"] and roles.count("user") == 2
    follow_up = record["trace"]["user_turns"][0]["content"]
    assert sample.messages[roles.index("user", 1)].text == follow_up
    first = record["trace"]["steps"][0]["calls"][0]
    assert sample.messages[1].tool_calls[0].function == first["name"]
    assert sample.messages[1].tool_calls[0].arguments == first["arguments"]


def test_an_invalid_call_is_a_tool_message_with_its_error():
    record = {
        "task_id": "t-1",
        "instruction": "Do it.",
        "reward": -0.05,
        "reward_components": {"invalid_calls": -0.05},
        "verdict": {"goal": False},
        "trace": {
            "steps": [
                {
                    "step": 0,
                    "action": '{"name": "lookup", "arguments": {"bogus": 1}}',
                    "calls": [
                        {
                            "index": 0,
                            "step": 0,
                            "name": "lookup",
                            "arguments": {"bogus": 1},
                            "ok": False,
                            "kind": "read",
                            "error": {"type": "invalid_arguments", "message": "bogus: unexpected argument."},
                        }
                    ],
                    "observation": '{"tool": "lookup", "ok": false}',
                },
                {
                    "step": 1,
                    "action": "not json",
                    "raw": "not json",
                    "calls": [],
                    "observation": "parse error",
                },
            ]
        },
    }
    sample = eval_log([record], {"env_id": "X-v0", "agent": {"name": "a"}}).samples[0]
    tool = sample.messages[2]
    assert (
        tool.role == "tool" and tool.error.type == "parsing" and "unexpected argument" in tool.error.message
    )
    assert [m.role for m in sample.messages[3:]] == ["assistant", "user"]  # unparsed: the env answered
    assert sample.messages[3].text == "not json" and sample.messages[4].text == "parse error"


def test_nothing_privileged_reaches_the_input_or_the_messages(runs):
    """What the agent never saw (the variant, the grid point, the task's labels, the verdict) is only in
    metadata and scores: a record whose privileged fields hold a marker exports it only there. The real
    runs' instructions and traces are what the agent was shown and sent, so they are what the messages
    hold; the variant's values never appear in them (a world name is no word of a request)."""
    marker = "PRIVILEGED-7f3a"
    record = read_episodes(runs["finance"] / EPISODES)[0]
    record = {**record, "variant": {"world": marker}, "point": {"world": marker}, "risk_type": marker}
    record["verdict"] = {**record["verdict"], "risk_type": marker}
    record["trace"] = {**record["trace"], "variant": {"world": marker}}
    sample = eval_log([record], read_run_info(runs["finance"])).samples[0]
    seen = json.dumps([m.model_dump() for m in [*sample.input, *sample.messages]])
    assert marker not in seen
    assert marker in json.dumps(sample.metadata) and marker in json.dumps(sample.scores["reward"].metadata)
    for r in read_episodes(runs["finance"] / EPISODES):
        assert f'[world="{r["variant"]["world"]}"]' in sample_id(r)


def test_inspect_view_bundle_publishes_the_logs(logs, tmp_path):
    inspect = Path(sys.executable).with_name("inspect")
    site = tmp_path / "site"
    done = subprocess.run(
        [str(inspect), "view", "bundle", "--log-dir", str(logs), "--output-dir", str(site)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (site / "index.html").exists()
    for name in [*RUNS, "provider"]:
        published = site / "logs" / f"{name}.eval"
        assert published.read_bytes() == (logs / f"{name}.eval").read_bytes()
    listing = json.loads((site / "logs" / "listing.json").read_text())
    assert f"{'calendar'}.eval" in json.dumps(listing)


def test_the_same_run_exports_byte_identical_logs(runs, logs, tmp_path):
    for name in ("calendar", "dialogue"):
        again = export_inspect(runs[name], tmp_path / f"{name}.eval")
        assert again.read_bytes() == (logs / f"{name}.eval").read_bytes()
        first = export_inspect(runs[name], tmp_path / "a" / f"{name}.json")
        second = export_inspect(runs[name], tmp_path / "b" / f"{name}.json")
        assert first.read_bytes() == second.read_bytes()
        assert len(read_eval_log(str(first)).samples) == len(read_episodes(runs[name] / EPISODES))


def test_misuse_is_one_line_with_status_2(runs, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "a-file").write_text("x")
    cases = [
        (["export", str(tmp_path / "empty"), "--format", "inspect"], "has no run.json"),
        (["export", str(tmp_path / "nowhere"), "--format", "inspect"], "is not a folder"),
        (["export", str(runs["calendar"]), "--format", "inspekt"], "invalid choice: 'inspekt'"),
        (["export", str(runs["calendar"])], "required: --format"),
        (
            ["export", str(runs["calendar"]), "--format", "inspect", "--out", str(tmp_path / "a-file")],
            "is a file",
        ),
    ]
    for argv, said in cases:
        try:
            status = main(argv)
        except SystemExit as done:  # argparse's own errors exit
            status = done.code
        assert status == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and said in err, (argv, err)


def test_a_broken_run_folder_is_skipped_line_by_line_or_refused(runs, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("run.json", "summary.json"):
        (broken / name).write_text((runs["calendar"] / name).read_text())
    lines = (runs["calendar"] / EPISODES).read_text().splitlines()
    (broken / EPISODES).write_text(
        "\n".join([lines[0], "{not json", '{"task_id": 3, "trace": 5}', lines[1]]) + "\n"
    )
    log = read_eval_log(str(export_inspect(broken, tmp_path / "b.eval")))
    # the unreadable line is skipped; a record of the wrong shape is a sample with what it holds
    assert sorted(s.id for s in log.samples) == sorted(
        [json.loads(line)["task_id"] for line in lines[:2]] + ["3"]
    )
    (broken / "run.json").write_text("[1, 2]")
    with pytest.raises(TooltrapError, match="run.json is unreadable"):
        export_inspect(broken, tmp_path / "c.eval")
    with pytest.raises(EnvUsageError, match=r"\.eval or \.json"):
        export_inspect(runs["calendar"], tmp_path / "c.txt")


def test_without_inspect_ai_a_typed_error_names_the_extra(runs, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # as if the package were not installed
    with pytest.raises(EnvUsageError, match=r"tooltrap\[inspect\]"):
        export_inspect(runs["calendar"], tmp_path / "x.eval")
