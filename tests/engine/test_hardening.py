"""Nothing an agent, a task file or a crash sends can crash, hang or mis-score a run (issue 8): each
test reproduces a failure found by fuzzing, hostile inputs or kill -9, and fails on the code before
the fix."""

from __future__ import annotations

import json
import signal
import threading

import gymnasium as gym
import pytest

from tests.conftest import act
from tooltrap.agents import make_agent
from tooltrap.cli import main
from tooltrap.envs.core import EnvUsageError, TaskValidationError, UnknownOptionError, load_tasks
from tooltrap.envs.sabench import SABenchTask, benchmark, make_env, packaged_tasks
from tooltrap.evaluate import EPISODES, RunMismatchError, evaluate, read_episodes

CASCADE = "cal-cascade-dependent-cancel-occurrence-01"


# -- input that raised --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "action",
    [
        '{"name": "email_search", "arguments": {"limit": ' + "9" * 4301 + "}}",
        "9" * 5000,
        json.dumps({"name": "email_search", "arguments": '{"limit": ' + "9" * 4400 + "}"}),
        "[" * 100_000,
    ],
)
def test_oversized_numbers_and_deep_nesting_are_parse_errors(action):
    env = gym.make("SABench-Email-v0")
    env.reset(seed=0)
    before = env.unwrapped.state.hash()
    obs, _, _, _, info = env.step(action[:32_000] if action.startswith("[") else action)
    error = json.loads(obs)["error"]
    assert error["type"] == "parse_error" and info["n_errors"] == 1
    step = env.unwrapped.trace.steps[-1]
    assert step.error == error and step.observation == obs  # a whole step, not a half-made one
    assert env.unwrapped.state.hash() == before


def test_lone_surrogates_hash_and_reach_episodes_jsonl(tmp_path):
    env = make_env("email")
    env.reset(options={"task_id": env.tasks[0].id})
    thread = next(iter(env.state.collection("messages")))
    env.step(act("email_reply", message_id=thread, body="\ud800 broken"))
    assert len(env.state.hash()) == 64  # hashed, deterministically
    assert env.state.hash() == env.state.hash()

    class Surrogate:
        name, privileged, batchable, last_raw = "surrogate", False, False, None

        def clone(self):
            return self

        def reset(self, observation, info, *, task=None, seed=None):
            pass

        def act(self, observation, info):
            self.last_raw = "\udcff model said this"
            return act("respond", message="\ud800 done")

        def describe(self):
            return {"name": self.name}

    records = evaluate("SABench-Calendar-v0", Surrogate(), tmp_path, tasks=CASCADE)  # type: ignore[arg-type]
    (back,) = read_episodes(tmp_path / EPISODES)
    # made safe at the boundary (issue 24): U+FFFD in place of each lone surrogate, and counted
    step = back["trace"]["steps"][0]
    assert step["raw"] == "\ufffd model said this" and step["escaped"] == 2  # the raw text and the action
    assert back["trace"]["terminal_arguments"] == {"message": "\ufffd done"}
    assert back["trace"] == records[0]["trace"]
    json.dumps(back, ensure_ascii=False).encode("utf-8")


# -- misuse raises typed errors -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"reward_config": {"gaol": 1}}, UnknownOptionError, "Did you mean 'goal'"),
        ({"reward_config": {"goal": "x"}}, EnvUsageError, "reward_config.goal"),
        ({"max_steps": "3"}, EnvUsageError, "max_steps"),
        ({"max_steps": 0}, EnvUsageError, "max_steps"),
        ({"max_steps": -1}, EnvUsageError, "max_steps"),
    ],
)
def test_bad_env_arguments_are_typed_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_env("calendar", **kwargs)


def test_bad_reset_options_are_typed_errors():
    env = make_env("calendar")
    with pytest.raises(EnvUsageError, match="whole number"):
        env.reset(options={"task_index": "abc"})
    with pytest.raises(EnvUsageError, match="takes a dict"):
        env.reset(options=[("task_id", CASCADE)])  # type: ignore[arg-type]
    with pytest.raises(UnknownOptionError, match="Did you mean 'task_id'"):
        env.reset(options={"taskid": CASCADE})
    _, info = env.reset(seed=1, options={"task_index": None})  # None: not given, a seeded draw
    assert info["task_id"] in env.tasks.ids
    assert [t.id for t in make_env("calendar", task_ids=CASCADE).tasks] == [
        CASCADE
    ]  # one id, not its letters


# -- task files are checked when they load ------------------------------------------------------------
def _task() -> dict:
    return json.loads(packaged_tasks("calendar").get(CASCADE).model_dump_json())


def _ticket_task() -> dict:
    tasks = packaged_tasks("ticket")
    return json.loads(
        next(t for t in tasks if len(t.initial_state.collections["tickets"]) > 2).model_dump_json()
    )


def _cycle(t: dict) -> None:
    a, b = list(t["initial_state"]["collections"]["tickets"])[:2]
    t["initial_state"]["collections"]["tickets"][a]["parent_id"] = b
    t["initial_state"]["collections"]["tickets"][b]["parent_id"] = a


@pytest.mark.parametrize(
    "make, mutate, field, match",
    [
        (
            _task,
            lambda t: t["goal"].append(
                {"type": "field", "entity": "events/e1", "field": "status", "op": "in", "value": 5}
            ),
            "goal",
            "needs a list",
        ),
        (
            _task,
            lambda t: t["goal"].append({"type": "exists", "collection": "evnets"}),
            "goal.1.collection",
            "Did you mean 'events'",
        ),
        (
            _task,
            lambda t: t["goal"].append({"type": "field", "entity": "events/nope", "field": "status"}),
            "goal.1.entity",
            "not in the initial state",
        ),
        (
            _task,
            lambda t: t["authorized_writes"][0].update(collection="evnets"),
            "authorized_writes.0",
            "not in the initial state",
        ),
        (
            _task,
            lambda t: t["gold"].insert(0, {"name": "calendar_cancel_evnt", "arguments": {}}),
            "gold.0.name",
            "Did you mean 'calendar_cancel_event'",
        ),
        (_task, lambda t: t["gold"][0]["arguments"].update(scope="everything"), "gold.0.arguments", "scope"),
        (
            _task,
            lambda t: t["traps"][0]["calls"][0]["arguments"].update(bogus=1),
            "traps.0.calls.0.arguments",
            "bogus",
        ),
        (_task, lambda t: t["intent"][0].update(name="calendar_nuke"), "intent.0.name", "not a tool"),
        (
            _task,
            lambda t: t.update(tools=["calendar_list_events", "respnd"]),
            "tools.1",
            "Did you mean 'respond'",
        ),
        (_task, lambda t: t["labels"].update(ambiguous="yes"), "labels.ambiguous", "boolean"),
        (
            _task,
            lambda t: t["goal"].append({"type": "exists", "collection": "events", "min": "1"}),
            "goal.1.min",
            "integer",
        ),
        (_ticket_task, _cycle, "parent_id", "own ancestor"),
    ],
)
def test_task_files_are_validated_semantically_and_strictly(tmp_path, make, mutate, field, match):
    task = make()
    mutate(task)
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task]))
    with pytest.raises(TaskValidationError, match=match) as err:
        load_tasks(path, SABenchTask, check=benchmark().check_task)
    assert err.value.file == str(path) and err.value.task_id == task["id"]
    assert field in (err.value.field or "")
    with pytest.raises(TaskValidationError):  # the env loads user files with the same checks
        make_env("all", tasks_file=path)


def test_unreadable_and_empty_task_files_name_the_file(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(json.dumps([_task()]).encode()[:-2] + "\xe9]".encode("latin-1"))
    with pytest.raises(TaskValidationError, match="UTF-8") as err:
        load_tasks(path, SABenchTask)
    assert err.value.file == str(path)
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    with pytest.raises(TaskValidationError, match="no tasks") as err:
        make_env("all", tasks_file=empty)
    assert err.value.file == str(empty)


def test_a_parent_cycle_cannot_hang_ticket_close():
    task = SABenchTask.model_validate(_ticket_task())
    raw = json.loads(task.model_dump_json())
    _cycle(raw)
    looped = SABenchTask.model_validate(raw)  # the model alone accepts it; the check refuses it
    env = make_env("ticket")
    env.tasks = type(env.tasks)([looped])
    env.reset(options={"task_id": looped.id})
    first = next(iter(looped.initial_state.collections["tickets"]))

    def alarm(*_):
        raise TimeoutError("ticket_close looped")

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGALRM, alarm)
        signal.alarm(5)
    try:
        obs, *_ = env.step(act("ticket_close", ticket_id=first))
    finally:
        signal.alarm(0)
    assert json.loads(obs)["ok"]


# -- run folders survive typos, crashes and garbage ---------------------------------------------------
def test_a_failed_command_writes_nothing_and_a_mismatch_names_the_field(tmp_path):
    out = tmp_path / "run"
    assert main(["eval", "SABench-Calendar-v0", "--out", str(out), "--tasks", "nope-*", "--quiet"]) == 2
    assert main(["eval", "SABench-Calendar-v0", "--out", str(out), "--defense", "previw", "--quiet"]) == 2
    assert not (out / "run.json").exists()
    evaluate("SABench-Calendar-v0", make_agent("gold"), out, tasks="cal-cascade-*")
    with pytest.raises(RunMismatchError, match="agent.*'gold'.*'clarify'"):
        evaluate("SABench-Calendar-v0", make_agent("clarify"), out, tasks="cal-cascade-*")
    with pytest.raises(RunMismatchError, match="mitigation"):
        evaluate("SABench-Calendar-v0", make_agent("gold"), out, mitigation="preview")


def test_an_empty_run_json_from_a_killed_write_is_rewritten(tmp_path):
    (tmp_path / "run.json").write_text("")
    records = evaluate("SABench-Calendar-v0", make_agent("gold"), tmp_path, tasks="cal-cascade-*")
    assert records and json.loads((tmp_path / "run.json").read_text())["agent"]["name"] == "gold"
    (tmp_path / "run.json").write_text("{")  # unreadable, and the folder has episodes: a typed error
    with pytest.raises(RunMismatchError, match="unreadable"):
        evaluate("SABench-Calendar-v0", make_agent("gold"), tmp_path, tasks="cal-cascade-*")


def test_a_garbled_line_is_moved_aside_and_its_episode_runs_again(tmp_path):
    records = evaluate("SABench-Calendar-v0", make_agent("gold"), tmp_path, tasks="cal-cascade-*")
    path = tmp_path / EPISODES
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2][:40] + "\x00garbage\n"
    path.write_text("".join(lines))
    messages: list[str] = []
    again = evaluate(
        "SABench-Calendar-v0", make_agent("gold"), tmp_path, tasks="cal-cascade-*", log=messages.append
    )
    assert any("unreadable" in m for m in messages) and any("resuming" in m for m in messages)
    assert sorted(r["task_id"] for r in again) == sorted(r["task_id"] for r in records)
    kept = [json.loads(line) for line in path.read_text().splitlines()]  # every line reads now
    assert len(kept) == len(records) == len({r["task_id"] for r in kept})
    rejected = (tmp_path / "episodes.rejected.jsonl").read_text().splitlines()
    assert len(rejected) == 1 and json.loads(rejected[0])["line"] == 3


class _Down:
    """An agent whose provider fails every request with ``kind``: every episode is a system-level
    outcome."""

    name, privileged, batchable, last_raw = "down", False, False, None

    def __init__(self, up: bool = False, kind: str = "connection"):
        self.up, self.kind = up, kind

    def clone(self):
        return self

    def reset(self, observation, info, *, task=None, seed=None):
        pass

    def act(self, observation, info):
        from tooltrap.agents.llm import ProviderError

        if not self.up:
            raise ProviderError(self.kind, "the provider failed")
        return act("respond", message="done")

    def describe(self):
        return {"name": self.name}


@pytest.mark.parametrize("kind", ["http_503", "connection"])
def test_provider_failures_are_system_outcomes_everywhere_and_retried(tmp_path, capsys, monkeypatch, kind):
    """A server that answers with errors fails every episode (exit 3, "every episode"); one that cannot
    be reached at all stops the run after its first three episodes (exit 3, "cannot reach")."""
    import tooltrap.agents as agents

    monkeypatch.setitem(agents.GENERIC_AGENTS, "down", lambda: _Down(kind=kind))
    argv = [
        "eval",
        "SABench-Calendar-v0",
        "--agent",
        "down",
        "--out",
        str(tmp_path),
        "--tasks",
        "cal-cascade-*",
    ]
    assert main([*argv, "--quiet", "--resamples", "100"]) == 3  # every episode failed at the provider
    captured = capsys.readouterr()
    said = "every episode" if kind == "http_503" else "cannot reach the model: the first 3 episodes"
    assert said in captured.err and kind in captured.err
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["system_outcomes"]["by_kind"] == {kind: summary["system_outcomes"]["n"]}
    assert summary["goal"]["n"] == 0  # no model-level episode: no 0% goal
    n = len(read_episodes(tmp_path / EPISODES))
    assert summary["system_outcomes"]["n"] == n and (n == 3) == (kind == "connection")
    # the provider is back: a rerun retries exactly those episodes, and nothing is duplicated
    monkeypatch.setitem(agents.GENERIC_AGENTS, "down", lambda: _Down(up=True))
    assert main([*argv, "--quiet", "--resamples", "100"]) == 0
    assert "retrying" in capsys.readouterr().err
    records = read_episodes(tmp_path / EPISODES)
    every = len(evaluate("SABench-Calendar-v0", make_agent("gold"), tmp_path / "all", tasks="cal-cascade-*"))
    assert len(records) == every >= n and not any(r["system_outcome"] for r in records)
    assert len((tmp_path / EPISODES).read_text().splitlines()) == every


# -- valid but huge: bounded by the schemas, the step budget and the observation space ---------------
def _inflated(tmp_path, copies: int):
    """The cascade task with ``copies`` extra events (a world far larger than the corpus's)."""
    raw = _task()
    events = raw["initial_state"]["collections"]["events"]
    first = next(iter(events.values()))
    for i in range(copies):
        events[f"bulk_{i}"] = {
            **first,
            "id": f"bulk_{i}",
            "series_id": None,
            "title": f"Bulk {i} " + "x" * 200,
        }
    path = tmp_path / "big.json"
    path.write_text(json.dumps([raw]))
    return path


def test_runaway_calls_are_bounded(tmp_path):
    # (how long such a step takes is measured by scripts/bench_hostile.py as a ratio, not asserted here:
    # a wall-clock bound fails on a busy machine for the wrong reason)
    env = make_env("calendar")
    env.reset(options={"task_id": CASCADE})
    event = next(iter(env.state.collection("events")))
    before = env.state.hash()
    emails = [f"u{i}@x.io" for i in range(2200)]  # one call just under the action limit
    for _ in range(4):  # (a fifth failed step in a row would truncate the episode)
        obs, *_ = env.step(act("calendar_add_attendees", event_id=event, emails=emails))
        error = json.loads(obs)["error"]
        assert error["type"] == "invalid_arguments" and "at most 50" in error["message"]
    assert env.state.hash() == before
    env.reset(options={"task_id": CASCADE})
    for chunk in range(0, 250, 50):  # within the bounds, calls add up to the calendar's event limit
        obs, *_ = env.step(
            act(
                "calendar_add_attendees",
                event_id=event,
                emails=emails[chunk : chunk + 50],
                scope="occurrence",
                notify=False,
            )
        )
    assert "at most 200 attendees" in json.loads(obs)["error"]["message"]


def test_a_huge_step_observation_is_cut_to_the_budget(tmp_path):
    from tooltrap.envs.core.env import STEP_OBSERVATION_BUDGET

    env = make_env("calendar", tasks_file=_inflated(tmp_path, 2000), state_format="tools_only")
    env.reset(options={"task_id": CASCADE})
    obs, _, _, _, info = env.step(json.dumps([{"name": "calendar_list_events", "arguments": {}}] * 8))
    assert len(obs) <= STEP_OBSERVATION_BUDGET
    results = json.loads(obs)
    assert any("truncated" in r for r in results) and all(r["ok"] for r in results)
    call = env.unwrapped.trace.steps[-1].calls[0]
    assert "$" in call.hidden or "$" in env.unwrapped.trace.steps[-1].calls[-1].hidden
    assert info["n_errors"] == 0  # reading too much is not an invalid call


def test_a_prompt_over_the_observation_space_names_the_way_out(tmp_path):
    path = _inflated(tmp_path, 6000)
    with pytest.raises(EnvUsageError, match="state_format='tools_only'"):
        make_env("calendar", tasks_file=path).reset(options={"task_id": CASCADE})
    _, info = make_env("calendar", tasks_file=path, state_format="tools_only").reset(
        options={"task_id": CASCADE}
    )
    assert len(info["messages"][0]["content"]) < 10_000


# -- traces a person can read without the task file ---------------------------------------------------
def test_records_carry_the_instruction_and_each_writes_values(tmp_path):
    (record,) = evaluate("SABench-Calendar-v0", make_agent("act-first"), tmp_path, tasks=CASCADE)
    assert record["instruction"] == packaged_tasks("calendar").get(CASCADE).instruction
    writes = [w for s in record["trace"]["steps"] for c in s["calls"] for w in c.get("writes", [])]
    update = next(w for w in writes if w["action"] == "update" and w["entity"].startswith("events/"))
    assert update["before"]["status"] != update["after"]["status"] == "cancelled"
    notice = next(w for w in writes if w["entity"].startswith("notifications/"))
    assert notice["before"] is None and "@" in notice["after"]["recipient"]  # who a notice reached


# -- completions as models write them -----------------------------------------------------------------
@pytest.mark.parametrize(
    "completion, found",
    [
        ('I will list the events first.\n{"name": "calendar_list_events", "arguments": {}}', "trailing_json"),
        ('Plan:\n```json\n{"name": "calendar_list_events", "arguments": {}}\n```\nThen cancel.', "fenced"),
        ('Checking.\n<tool_call>\n{"name": "calendar_list_events", "arguments": {}}\n</tool_call>', "hermes"),
    ],
)
def test_prose_with_one_call_executes_the_call_and_the_format_is_recorded(completion, found):
    from tooltrap.wrappers.formats import ToolCallFormat

    env = ToolCallFormat(gym.make("SABench-Calendar-v0"))
    env.reset(options={"task_id": CASCADE})
    obs, _, terminated, _, _ = env.step(completion)
    assert not terminated and json.loads(obs)["tool"] == "calendar_list_events"
    step = env.unwrapped.trace.steps[-1]
    assert step.format == found and step.raw == completion and step.to_dict()["format"] == found


# -- the CLI a user expects ---------------------------------------------------------------------------
def test_cli_errors_are_one_line_with_did_you_mean(tmp_path, capsys):
    out = str(tmp_path / "run")
    cases = [
        (["eval", "sabench-v0", "--out", out], "Did you mean 'SABench-v0'"),
        (["eval", "SABench-v0", "--agent", "gld", "--out", out], "Agents: gold, clarify, act-first, random"),
        (["eval", "SABench-v0", "--tasks", "trap_famly=cascade", "--out", out], "Did you mean 'trap_family'"),
        (["eval", "SABench-v0", "--tasks", "trap_family=cascde", "--out", out], "Did you mean 'cascade'"),
        (["eval", "SABench-v0", "--variant", "world=safe", "--out", out], "no episode variants"),
    ]
    for argv, expected in cases:
        assert main([*argv, "--quiet"]) == 2, argv
        err = capsys.readouterr().err.strip()
        assert expected in err and err.count("\n") == 0 and "Traceback" not in err, err
    assert not (tmp_path / "run").exists()
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("tooltrap ")


def test_resume_is_announced_and_the_progress_bar_runs(tmp_path):
    messages: list[str] = []
    evaluate("SABench-Calendar-v0", make_agent("act-first"), tmp_path, tasks="cal-cascade-*", progress=True)
    evaluate(
        "SABench-Calendar-v0",
        make_agent("act-first"),
        tmp_path,
        tasks="cal-cascade-*,cal-overreach-*",
        progress=True,
        log=messages.append,
    )
    assert any(m.startswith("resuming: ") and " of " in m for m in messages)
