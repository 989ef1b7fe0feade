"""The importer for the EpiSEM authors' JSONL row format, on a fixture written here in that format
(tests/episem/data/episem_authors_format.jsonl): tools compiled from atoms, the rule from ``unsafe_if``, the
safe twin from the overrides, synthesized gold; then the env, the self-check and the search on it."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import tooltrap  # noqa: F401
from tooltrap.agents import make_agent
from tooltrap.envs.core import TaskValidationError
from tooltrap.envs.episem.authoring.importer import import_corpus, parse_expression
from tooltrap.envs.episem.selfcheck import check_pair
from tooltrap.evaluate import evaluate_protocol

FIXTURE = Path(__file__).parent / "data" / "episem_authors_format.jsonl"


def test_expressions_compile_to_rules():
    atoms = ["a", "b", "s"]
    assert parse_expression("a > b", atoms) == {"type": "compare", "left": "a", "op": ">", "right": "b"}
    assert parse_expression("s == 'frozen' or not (a <= 10 and s in ['x', \"y\"])", atoms) == {
        "type": "any",
        "rules": [
            {"type": "compare", "left": "s", "op": "==", "value": "frozen"},
            {"type": "not", "rule": {"type": "all", "rules": [
                {"type": "compare", "left": "a", "op": "<=", "value": 10},
                {"type": "compare", "left": "s", "op": "in", "value": ["x", "y"]},
            ]}},
        ],
    }  # fmt: skip
    assert parse_expression("s not in ['ok']", atoms)["op"] == "not in"
    with pytest.raises(ValueError, match="Did you mean 'amount'"):
        parse_expression("amout > 1", ["amount", "limit"])


def test_rows_become_tasks_with_generated_typed_tools():
    tasks, backend = import_corpus(FIXTURE)
    assert [t.id for t in tasks] == ["fx-pay-001", "fx-share-001"]
    pay, share = tasks
    assert pay.domain == "finance" and share.domain == "document_access"  # names normalised
    assert pay.prohibited("unsafe") and not pay.prohibited("safe")
    assert share.expected.unsafe == "abstained" and pay.expected.unsafe == "escalated"
    specs = {s.name: s for s in backend.tool_specs()}
    assert {"get_invoice", "get_invoice_2", "share_document"} <= set(
        specs
    )  # a conflicting declaration renamed
    access = specs["share_document"].schema["function"]["parameters"]["properties"]["access"]
    assert access["enum"] == ["view", "edit"] and specs["share_document"].kind == "commit"
    assert specs["get_request"].schema["function"]["parameters"]["required"] == ["request_id"]


def test_the_imported_env_plays_masks_and_audits():
    env = gym.make("EpiSEM-v0", corpus=str(FIXTURE))
    env.reset(options={"task_id": "fx-share-001", "condition": "suppressed", "mask": ["e_clear"]})
    u1 = json.loads(env.step(json.dumps({"name": "get_user", "arguments": {"user_id": "U1"}}))[0])
    u2 = json.loads(env.step(json.dumps({"name": "get_user", "arguments": {"user_id": "U2"}}))[0])
    assert u1["result"] == {} and u2["result"] == {"clearance": "secret"}  # one path, two records
    for task in env.unwrapped.tasks:
        assert check_pair(env.unwrapped.benchmark, task).problems == []
        for world in ("unsafe", "safe"):
            agent = make_agent("careful")
            obs, info = env.reset(options={"task_id": task.id, "world": world, "condition": "recoverable"})
            agent.reset(obs, info, task=env.unwrapped.task)
            while True:
                obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
                if terminated or truncated:
                    break
            assert info["verdict"]["goal"] and info["verdict"]["restored"], (task.id, world)


def test_the_search_runs_on_an_imported_corpus(tmp_path):
    records = evaluate_protocol(
        "EpiSEM-v0", make_agent("trusting"), tmp_path, "sbm", env_kwargs={"corpus": str(FIXTURE)}
    )
    assert {r["task_id"] for r in records} == {"fx-pay-001", "fx-share-001"}
    assert any(r["verdict"]["unsafe_commit"] for r in records)


@pytest.mark.parametrize(
    ("edit", "field", "message"),
    [
        (
            lambda r: r["safety_rule"].update(unsafe_if="e_limt > 3"),
            "field=safety_rule.unsafe_if",
            "Did you mean 'e_limit'",
        ),
        (lambda r: r.update(domain="fnance"), "field=domain", "Did you mean 'finance'"),
        (
            lambda r: r["evidence"][4]["exposures"][0].update(tool="get_aprover"),
            "field=evidence.4.exposures.0.tool",
            "undeclared tool",
        ),
        (
            lambda r: r["safety_rule"].update(minimal_witness_sets=[["e_city"]]),
            "field=safety_rule.minimal_witness_sets.0",
            "critical atoms only",
        ),
        (lambda r: r.pop("user_goal"), "field=user_goal", "missing 'user_goal'"),
    ],
)
def test_bad_rows_name_the_file_the_row_and_the_field(tmp_path, edit, field, message):
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    edit(rows[0])
    path = tmp_path / "copy.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(TaskValidationError) as err:
        import_corpus(path)
    text = str(err.value)
    assert str(path) in text and "fx-pay-001 (line 1)" in text and message in text and field in text, text
