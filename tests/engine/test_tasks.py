from __future__ import annotations

import json

import pytest

from tooltrap.envs.core import TaskValidationError, UnknownTaskError, load_tasks
from tooltrap.envs.sabench import SABenchTask, make_env, packaged_tasks


def _task_dict() -> dict:
    return json.loads(packaged_tasks("calendar")[0].model_dump_json())


def _write(tmp_path, payload, name="tasks.json"):
    path = tmp_path / name
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return path


def test_roundtrip_user_file(tmp_path):
    path = _write(tmp_path, {"tasks": [_task_dict()]})
    tasks = load_tasks(path, SABenchTask)
    assert tasks[0] == packaged_tasks("calendar")[0]
    env = make_env("calendar", tasks_file=path)
    assert len(env.tasks) == 1


def test_jsonl(tmp_path):
    path = _write(tmp_path, json.dumps(_task_dict()) + "\n\n", name="tasks.jsonl")
    assert len(load_tasks(path, SABenchTask)) == 1


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda t: t.pop("instruction"), "instruction"),
        (lambda t: t.update(surprise=1), "surprise"),
        (lambda t: t["labels"].update(trap_family="chaos"), "labels.trap_family"),
        (lambda t: t["gold"][0].update(name=5), "gold.0.name"),
        (lambda t: t.update(candidates=["events/does_not_exist", "events/x"]), "candidates.0"),
        (lambda t: t.update(benchmark="other"), "benchmark"),
    ],
)
def test_errors_name_file_task_and_field(tmp_path, mutate, field):
    task = _task_dict()
    mutate(task)
    path = _write(tmp_path, [task])
    with pytest.raises(TaskValidationError) as err:
        load_tasks(path, SABenchTask)
    assert err.value.file == str(path)
    assert err.value.task_id == task["id"]
    assert str(path) in str(err.value) and task["id"] in str(err.value)
    if field:
        assert err.value.field == field


def test_semantic_errors_name_the_field(tmp_path):
    task = _task_dict()
    task["candidates"] = ["events/ghost", "events/ghost2"]
    with pytest.raises(TaskValidationError, match="not in the initial state") as err:
        load_tasks(_write(tmp_path, [task]), SABenchTask)
    assert err.value.field == "candidates.0"


def test_duplicate_ids_and_bad_json(tmp_path):
    task = _task_dict()
    with pytest.raises(TaskValidationError, match="duplicate"):
        load_tasks(_write(tmp_path, [task, task]), SABenchTask)
    with pytest.raises(TaskValidationError, match="line 1"):
        load_tasks(_write(tmp_path, "{nope"), SABenchTask)
    with pytest.raises(TaskValidationError, match="cannot read"):
        load_tasks(tmp_path / "missing.json", SABenchTask)


def test_selection_filters_and_did_you_mean():
    tasks = packaged_tasks("calendar")
    assert all(t.labels.trap_family == "cascade" for t in tasks.select(trap_family="cascade"))
    with pytest.raises(UnknownTaskError, match="Did you mean 'cascade'"):
        make_env("calendar", trap_family="cascde")
    with pytest.raises(UnknownTaskError, match="Did you mean 'trap_family'"):
        tasks.select(trap_famly="cascade")
    with pytest.raises(UnknownTaskError, match="Did you mean"):
        tasks.get(tasks[0].id[:-1] + "x")
    env = make_env("calendar", templates=[tasks[0].template_id])
    assert {t.template_id for t in env.tasks} == {tasks[0].template_id}


def test_template_split_is_disjoint_and_deterministic():
    train = make_env("calendar", split="train").tasks
    test = make_env("calendar", split="test").tasks
    assert len(train) + len(test) == len(packaged_tasks("calendar"))
    assert not {t.template_id for t in train} & {t.template_id for t in test}
    assert len(test) > 0
    with pytest.raises(UnknownTaskError, match="Did you mean 'test'"):
        make_env("calendar", split="tst")


def test_reset_options_filter_the_draw():
    env = make_env("calendar")
    for seed in range(5):
        _, info = env.reset(seed=seed, options={"trap_family": "overreach", "state_structure": "external"})
        task = env.tasks.get(info["task_id"])
        assert (task.labels.trap_family, task.labels.state_structure) == ("overreach", "external")
    template = packaged_tasks("calendar")[0].template_id
    _, info = env.reset(seed=0, options={"template_id": template})
    assert env.tasks.get(info["task_id"]).template_id == template
