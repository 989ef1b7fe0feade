"""What-if execution shared by the defenses: run a call on a fork of the live state."""

from __future__ import annotations

from typing import Any

from tooltrap.envs.core import CallRecord, Executor, ToolEnv, WriteRecord


def simulate(env: ToolEnv, name: str, arguments: Any) -> tuple[CallRecord, Executor]:
    """Execute ``name(arguments)`` on a scratch fork of the env's state; the live state is untouched."""
    assert env.state is not None
    executor = Executor(env.benchmark, env.task, state=env.state.fork(), variant=env.variant)
    return executor.execute(name, arguments, step=-1, index=-1), executor


def is_write(env: ToolEnv, name: Any) -> bool:
    specs = env.benchmark.toolset(env.task, env.variant).specs
    return isinstance(name, str) and name in specs and specs[name].mutates


def describe(writes: list[WriteRecord], executor: Executor) -> list[dict[str, Any]]:
    """The preview of a set of writes: entity, action, fields, and for notifications who and whether
    the message leaves the organization."""
    out = []
    for w in writes:
        item: dict[str, Any] = {
            "entity": w.entity,
            "action": w.action,
            "fields": list(w.fields),
            "external": w.external,
        }
        record = executor.state.get(w.collection, w.entity_id) or {}
        if "recipient" in record:
            item["notifies"] = record["recipient"]
        out.append(item)
    return out


def named_entities(arguments: Any) -> set[str]:
    """Entity ids the caller named in the arguments (string values, recursively)."""
    found: set[str] = set()
    stack = [arguments]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            found.add(value.rpartition("/")[2])
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


def append_to_system(env: ToolEnv, info: dict[str, Any], text: str) -> tuple[str, list[dict[str, Any]]]:
    """Add ``text`` to the episode's system message (a new one when there is none), in ``env``'s
    conversation too; returns the new observation and messages (for a defense's ``reset``)."""
    messages = [dict(m) for m in info["messages"]]
    system = next((m for m in messages if m["role"] == "system"), None)
    if system is None:
        messages.insert(0, {"role": "system", "content": text})
    else:
        system["content"] = f"{system['content']}\n\n{text}"
    env.messages = [dict(m) for m in messages]
    return "\n\n".join(m["content"] for m in messages), messages
