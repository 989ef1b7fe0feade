from __future__ import annotations

from tooltrap.envs.core import State, copy_json


def base():
    return {"items": {"a": {"id": "a", "v": 1, "tags": ["x"]}, "b": {"id": "b", "v": 2, "tags": []}}}


def test_copy_on_write_never_touches_task_data():
    data = base()
    frozen = copy_json(data)
    s = State(data)
    s.update("items", "a", v=5, tags=["y"])
    s.insert("items", {"v": 9}, prefix="a")
    s.delete("items", "b")
    assert data == frozen
    assert s.get("items", "a")["v"] == 5
    assert State(data).get("items", "a")["v"] == 1


def test_idempotent_update_records_nothing():
    s = State(base())
    assert s.update("items", "a", v=1) == ()
    assert s.log == []


def test_rollback_restores_state_and_counters():
    s = State(base())
    h = s.hash()
    mark = s.mark()
    s.update("items", "a", v=7)
    new = s.insert("items", {"v": 3}, prefix="it")
    s.delete("items", "b")
    assert s.hash() != h
    s.rollback(mark)
    assert s.hash() == h
    assert s.get("items", new) is None
    s.update("items", "a", v=8)  # writes after a rollback still copy first
    assert State(base()).get("items", "a")["v"] == 1


def test_new_ids_skip_existing_and_are_sequential():
    s = State({"items": {"it_1": {"id": "it_1"}}})
    assert s.insert("items", {}, prefix="it") == "it_2"
    assert s.insert("items", {}, prefix="it") == "it_3"


def test_hash_and_diff():
    s1, s2 = State(base()), State(base())
    assert s1.hash() == s2.hash()
    s2.update("items", "a", v=3)
    s2.insert("items", {"v": 1}, prefix="n")
    assert s1.hash() != s2.hash()
    assert s1.diff(s2) == {"items/a": ("v",), "items/n_1": ("id", "v")}
